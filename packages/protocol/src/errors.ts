/** One entry of the error catalogue. */
export interface ErrorSpec {
  /** What the code means (one sentence; docs/errors.md shows it). */
  readonly summary: string;
  /** The message the engine writes, with `{name}` placeholders filled by `formatError(code, params)`. */
  readonly message: string;
  /** The HTTP status of an answer carrying this code, where the code is also an HTTP answer. */
  readonly status?: number;
}

/**
 * The one catalogue of stable error codes used on the bridge and in HTTP error bodies: each code with
 * its message template and, where it has one, its HTTP status. docs/errors.md lists every entry (a
 * test keeps the two in step).
 */
export const ERROR_CODES = {
  function_not_found: { summary: 'No function with this id is registered.', message: 'Function {function_id} not found' },
  function_not_invokable: {
    summary: 'The function is registered as HTTP-invoked and cannot run on this worker.',
    message: 'HTTP-invoked functions are not supported ({function_id})',
  },
  invocation_failed: { summary: 'The handler threw or returned an error.', message: '{reason}' },
  invocation_timeout: { summary: 'No result arrived within the invocation time-out.', message: 'Invocation of {function_id} timed out after {timeout_ms} ms' },
  invocation_stopped: {
    summary: 'The worker executing the call disconnected before answering.',
    message: 'Invocation stopped: the worker disconnected',
  },
  invalid_payload: { summary: 'The payload of a call does not have the shape the function needs.', message: '{reason}' },
  invalid_frame: { summary: 'A bridge frame could not be decoded or misses a required field.', message: '{reason}', status: 400 },
  too_many_invocations: {
    summary: 'The caller has too many calls in flight; retry later.',
    message: 'Worker has {in_flight} calls in flight (limit {limit})',
  },
  worker_overloaded: {
    summary: "The target worker's outbound buffer is full; retry later.",
    message: 'Worker {worker_id} is not reading its frames; retry later',
  },
  enqueue_error: {
    summary: 'The call could not be enqueued (for example, no queue module is loaded).',
    message: 'Queue module not loaded: enqueue is unavailable',
  },
  trigger_registration_failed: { summary: 'The module or worker owning the trigger type rejected the trigger.', message: '{reason}' },
  trigger_type_not_found: { summary: 'No provider of this trigger type is known.', message: 'Trigger type {trigger_type} is not provided by this worker' },
  channel_not_found: { summary: 'The channel does not exist or the access key is wrong.', message: 'Channel not found', status: 404 },
  store_unavailable: { summary: 'The storage behind a module (a file folder, Redis) cannot be used right now.', message: '{reason}' },
  engine_shutting_down: { summary: 'The engine is shutting down and no longer accepts calls.', message: 'The engine is shutting down' },
  internal_error: { summary: 'An unexpected error inside the engine.', message: 'internal error: {reason}', status: 500 },
  upgrade_required: {
    summary: 'A plain HTTP request reached the bridge port, which only speaks WebSocket.',
    message: 'This is the Flint worker bridge: connect with a WebSocket',
    status: 426,
  },
  not_found: { summary: 'No WebSocket endpoint exists at this path of the bridge.', message: 'No WebSocket endpoint at {path}', status: 404 },
  invalid_json: { summary: 'HTTP: the request body is not valid JSON.', message: 'Request body is not valid JSON: {reason}', status: 400 },
  route_not_found: { summary: 'HTTP: no route matches the path.', message: 'No route for {method} {path}', status: 404 },
  method_not_allowed: {
    summary: 'HTTP: the path has routes, but not for this method (the `Allow` header lists them).',
    message: '{method} is not allowed on {path}',
    status: 405,
  },
  payload_too_large: {
    summary: "HTTP: the request body is larger than the module's `max_body_bytes`.",
    message: 'Request body is larger than {limit} bytes',
    status: 413,
  },
  condition_failed: { summary: "HTTP: the route's condition function returned `false`.", message: 'Request condition not met', status: 422 },
  condition_error: { summary: "HTTP: the route's condition function failed.", message: 'condition {function_id} failed: {reason}', status: 500 },
  condition_timeout: {
    summary: "HTTP: the route's condition function did not answer in time.",
    message: 'condition {function_id} did not answer within {timeout_ms} ms',
    status: 504,
  },
  middleware_error: { summary: 'HTTP: a middleware function failed or answered badly.', message: 'middleware {function_id} failed: {reason}', status: 500 },
  middleware_timeout: {
    summary: 'HTTP: a middleware function did not answer in time.',
    message: 'middleware {function_id} did not answer within {timeout_ms} ms',
    status: 504,
  },
  handler_error: { summary: "HTTP: the route's function failed or returned an invalid response.", message: '{reason}', status: 500 },
  handler_timeout: {
    summary: "HTTP: the route's function did not answer (or start streaming) in time.",
    message: '{function_id} did not answer within {timeout_ms} ms',
    status: 504,
  },
  function_unavailable: {
    summary: "HTTP: no worker provides the route's function right now.",
    message: 'No worker provides {function_id} right now',
    status: 503,
  },
  worker_shutting_down: {
    summary: 'SDK only: the worker is shutting down, so its pending calls are rejected.',
    message: 'the worker is shutting down',
  },
  not_connected: {
    summary: 'SDK only: the call could not be queued because the worker is disconnected and its queue is full.',
    message: 'disconnected from {url} and {queued} frames are already queued',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The catalogue message of `code` with its `{name}` placeholders filled from `params`. */
export function formatError(code: ErrorCode, params: Record<string, unknown> = {}): string {
  return ERROR_CODES[code].message.replace(/\{([a-z_]+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** The HTTP status of an answer carrying `code` (500 for a code that has none). */
export function errorStatus(code: ErrorCode): number {
  const spec: ErrorSpec = ERROR_CODES[code];
  return spec.status ?? 500;
}

/**
 * WebSocket close codes the engine sends, with their reason templates. The bridge (and every
 * listener made with the engine's WebSocket-server factory) closes with exactly these reasons.
 */
export const CLOSE_CODES = {
  1001: { reason: 'engine shutting down', when: 'The engine stops (SIGINT/SIGTERM).' },
  1008: { reason: 'the {direction} end of this channel is already taken', when: 'A second socket tried to take a channel end.' },
  1009: { reason: 'frame exceeds {setting} ({limit} bytes)', when: 'A frame was larger than the listener allows (`bridge.max_frame_bytes`, default 64 MiB).' },
} as const;

/** The reason text of a close code with its placeholders filled. */
export function closeReason(code: keyof typeof CLOSE_CODES, params: Record<string, unknown> = {}): string {
  return CLOSE_CODES[code].reason.replace(/\{([a-z_]+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

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

  /** An error with the catalogue message of `code`. */
  static of(code: ErrorCode, params?: Record<string, unknown>): FlintError {
    return new FlintError(code, formatError(code, params));
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
