import type { ErrorCode } from './errors.js';
import type { ErrorBody } from './messages.js';

/**
 * Codes the engine (or an SDK) gives a call about its own routing: the function had no provider, did
 * not answer in time, its worker went away or was overloaded, the engine or worker was stopping. Such a
 * code describes the call it was given for, and nothing else. When a handler fails because a call it
 * made failed with one of them, passing the code on would blame the wrong function (an HTTP route would
 * answer 503 "no provider" for a route whose worker is right there), so the failure is reported as
 * `invocation_failed` with the nested error as its `cause` (see `nestedCallFailure`).
 */
export const ROUTING_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'function_not_found',
  'function_not_invokable',
  'invocation_timeout',
  'invocation_stopped',
  'too_many_invocations',
  'worker_overloaded',
  'engine_shutting_down',
  'worker_shutting_down',
  'not_connected',
]);

/** True when `code` is about the routing of the call that carries it (see ROUTING_CODES). */
export function isRoutingCode(code: string): boolean {
  return ROUTING_CODES.has(code);
}

/**
 * The failure of `functionId` whose handler failed because one of its own calls failed with `nested`:
 * `invocation_failed`, a message naming both, and `nested` as the `cause`.
 */
export function nestedCallFailure(functionId: string, nested: ErrorBody, calledId?: string): ErrorBody {
  const call = calledId === undefined ? 'a call it made' : `its call to ${calledId}`;
  const cause: ErrorBody = { code: nested.code, message: nested.message };
  if (nested.cause !== undefined) cause.cause = nested.cause;
  const body: ErrorBody = { code: 'invocation_failed', message: `${functionId} failed: ${call} failed with ${nested.code}: ${nested.message}`, cause };
  if (nested.stacktrace !== undefined) body.stacktrace = nested.stacktrace;
  return body;
}
