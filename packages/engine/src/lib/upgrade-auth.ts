import type { IncomingMessage } from 'node:http';
import { type ErrorCode, FlintError, formatError } from '@flint/protocol';
import type { Logger } from '../core/logger.js';
import type { InvokeOptions } from '../core/module-api.js';

/** What a listener's auth function gets for an upgrade (the stream listener's, a bridge listener's). */
export interface AuthInput {
  headers: Record<string, string>;
  /** The request path, without the query. */
  path: string;
  /** Query parameters, decoded, each with all its values. */
  query_params: Record<string, string[]>;
  /** `ip:port` of the client. */
  addr: string;
  /** The client's IP address alone (the name upstream's auth functions read). */
  ip_address: string;
}

/** Let in, with the function's answer when it was an object (its `context`, and for the bridge its policy fields); or refused. */
export type AuthOutcome = { allowed: true; answer: Record<string, unknown> | undefined } | { allowed: false; code: ErrorCode; message: string };

/** How the auth function is called: the engine's invoke (a module's `ctx.invoke`). */
export type Invoke = (functionId: string, data: unknown, options: InvokeOptions) => Promise<unknown>;

export function authInput(req: IncomingMessage, url: URL): AuthInput {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const query_params: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    const values = query_params[name];
    if (values) values.push(value);
    else query_params[name] = [value];
  }
  const ip = req.socket.remoteAddress ?? '';
  return { headers, path: url.pathname, query_params, addr: `${ip.includes(':') ? `[${ip}]` : ip}:${req.socket.remotePort ?? 0}`, ip_address: ip };
}

/**
 * Asks a listener's auth function about an upgrade. `false` or `{allow: false, status?, reason?}` refuses it
 * (401, or 403 when status is 403); any other answer lets it in (an object answer is handed back: its `context`,
 * and whatever else the listener reads from it). A function that fails or does not answer in time refuses
 * it too (503 auth_unavailable): a broken check never lets everyone in.
 */
export async function authorize(invoke: Invoke, logger: Logger, functionId: string, input: AuthInput, timeoutMs: number): Promise<AuthOutcome> {
  let result: unknown;
  try {
    result = await invoke(functionId, input, { timeoutMs });
  } catch (err) {
    const reason = err instanceof FlintError ? `${err.code}: ${err.message}` : String(err);
    logger.warn({ function_id: functionId, addr: input.addr, path: input.path }, `auth function ${functionId} failed, connection refused: ${reason}`);
    return { allowed: false, code: 'auth_unavailable', message: formatError('auth_unavailable', { function_id: functionId, reason }) };
  }
  if (result === false) return { allowed: false, code: 'connection_unauthorized', message: 'the connection was refused by the auth function' };
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return { allowed: true, answer: undefined };
  const answer = result as Record<string, unknown>;
  if (answer.allow === false) {
    const reason = typeof answer.reason === 'string' && answer.reason !== '' ? answer.reason : 'the connection was refused by the auth function';
    return { allowed: false, code: answer.status === 403 ? 'connection_forbidden' : 'connection_unauthorized', message: reason };
  }
  return { allowed: true, answer };
}
