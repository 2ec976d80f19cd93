/**
 * The one catalogue of stable error codes used on the bridge and in HTTP error bodies.
 * Each entry is documented in docs/errors.md (a test keeps the two in step).
 */
export const ERROR_CODES = {
  function_not_found: 'No function with this id is registered.',
  function_not_invokable: 'The function is registered as HTTP-invoked and cannot run on this worker.',
  invocation_failed: 'The handler threw or returned an error.',
  invocation_timeout: 'No result arrived within the invocation time-out.',
  invocation_stopped: 'The worker executing the call disconnected before answering.',
  invalid_payload: 'The payload of a call does not have the shape the function needs.',
  invalid_frame: 'A bridge frame could not be decoded or misses a required field.',
  too_many_invocations: 'The caller has too many calls in flight; retry later.',
  worker_overloaded: "The target worker's outbound buffer is full; retry later.",
  enqueue_error: 'The call could not be enqueued (for example, no queue module is loaded).',
  trigger_registration_failed: 'The module or worker owning the trigger type rejected the trigger.',
  trigger_type_not_found: 'No provider of this trigger type is known.',
  channel_not_found: 'The channel does not exist or the access key is wrong.',
  store_unavailable: 'The storage behind a module (a file folder, Redis) cannot be used right now.',
  engine_shutting_down: 'The engine is shutting down and no longer accepts calls.',
  internal_error: 'An unexpected error inside the engine.',
  upgrade_required: 'A plain HTTP request reached the bridge port, which only speaks WebSocket.',
  not_found: 'No WebSocket endpoint exists at this path of the bridge.',
  worker_shutting_down: 'SDK only: the worker is shutting down, so its pending calls are rejected.',
  not_connected: 'SDK only: the call could not be queued because the worker is disconnected and its queue is full.',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error carrying a stable code, thrown and caught across the engine and SDK. */
export class FlintError extends Error {
  readonly code: string;
  readonly stacktrace: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode | (string & {}), message: string, options?: { stacktrace?: string; details?: Record<string, unknown> }) {
    super(message);
    this.name = 'FlintError';
    this.code = code;
    this.stacktrace = options?.stacktrace;
    this.details = options?.details;
  }

  toBody(): { code: string; message: string; stacktrace?: string } {
    return this.stacktrace === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, stacktrace: this.stacktrace };
  }
}

/** Turns anything thrown into an ErrorBody for the wire. */
export function toErrorBody(err: unknown, fallbackCode: ErrorCode = 'invocation_failed'): { code: string; message: string; stacktrace?: string } {
  if (err instanceof FlintError) return err.toBody();
  if (err instanceof Error) {
    const code = fallbackCode;
    return err.stack ? { code, message: err.message, stacktrace: err.stack } : { code, message: err.message };
  }
  return { code: fallbackCode, message: typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err)) };
}

export function isErrorBody(value: unknown): value is { code: string; message: string; stacktrace?: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}
