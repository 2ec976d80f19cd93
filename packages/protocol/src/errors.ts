import type { ErrorBody } from './messages.js';

/** One entry of the error catalogue. */
export interface ErrorSpec {
  /** What the code means (one sentence; docs/errors.md shows it). */
  readonly summary: string;
  /** The message the engine writes, with `{name}` placeholders filled by `formatError(code, params)`. */
  readonly message: string;
  /** The HTTP status of an answer carrying this code, where the code is also an HTTP answer. */
  readonly status?: number;
}

const spec = <M extends string>(message: M, summary: string) => ({ message, summary });
const http = <M extends string, S extends number>(status: S, message: M, summary: string) => ({ status, message, summary });

/**
 * The one catalogue of stable error codes used on the bridge and in HTTP error bodies: each code with
 * its message template and, where it has one, its HTTP status. docs/errors.md lists every entry (a
 * test keeps the two in step).
 */
export const ERROR_CODES = {
  function_not_found: spec('Function {function_id} not found', 'No function with this id is registered.'),
  function_not_invokable: spec(
    'HTTP-invoked functions need the flint-http-functions module, which is not loaded ({function_id})',
    'The function is HTTP-invoked and cannot run on a worker.',
  ),
  invocation_failed: spec('{reason}', 'The handler threw or returned an error.'),
  invocation_timeout: spec('Invocation of {function_id} timed out after {timeout_ms} ms', 'No result arrived within the invocation time-out.'),
  invocation_stopped: spec('Invocation stopped: the worker disconnected', 'The worker executing the call disconnected before answering.'),
  invalid_payload: http(400, '{reason}', 'The payload of a call does not have the shape the function needs.'),
  invalid_frame: http(400, '{reason}', 'A bridge frame could not be decoded or misses a required field.'),
  invalid_function_id: spec(
    'Invalid function id {function_id}: {rule}',
    'A function id breaks the rule: non-empty, at most 256 characters, no whitespace or control characters.',
  ),
  too_many_invocations: spec('Worker has {in_flight} calls in flight (limit {limit})', 'The caller has too many calls in flight; retry later.'),
  worker_overloaded: http(503, 'Worker {worker_id} is not reading its frames; retry later', "The target worker's outbound buffer is full; retry later."),
  enqueue_error: spec('Queue module not loaded: enqueue is unavailable', 'The call could not be enqueued (for example, no queue module is loaded).'),
  trigger_registration_failed: spec('{reason}', 'The module or worker owning the trigger type rejected the trigger.'),
  trigger_type_not_found: spec('Trigger type {trigger_type} is not provided by this worker', 'No provider of this trigger type is known.'),
  channel_not_found: http(404, 'Channel not found', 'The channel does not exist or the access key is wrong.'),
  too_many_channels: spec('Worker has {open} open channels (limit {limit})', 'The caller has too many channels open; close some first.'),
  function_id_reserved: spec('Function id {function_id} is reserved: {owner}', 'Workers cannot register a function id the engine or a module owns.'),
  trigger_type_reserved: spec('Trigger type {trigger_type} is reserved: {owner}', 'Workers cannot provide a trigger type the engine or a module owns.'),
  trigger_type_taken: spec(
    'Trigger type {trigger_type} is provided by {owner}',
    'Another connected worker provides this trigger type; only it (or its own reconnection) can provide it.',
  ),
  trigger_id_taken: spec('Trigger id {trigger_id} belongs to {owner}', 'Another connected worker (or a module) owns a trigger with this id.'),
  trigger_not_owned: spec(
    'Trigger {trigger_id} belongs to {owner}: only the connection that registered it can remove it',
    'An `unregistertrigger` named a trigger this connection does not own; nothing was removed.',
  ),
  store_unavailable: spec('{reason}', 'The storage behind a module (a file folder, Redis) cannot be used right now.'),
  queue_unavailable: spec('{reason}', 'The queue backend (a file folder, Redis, RabbitMQ) cannot be used right now.'),
  topic_not_set: spec('Topic is not set', 'A publish or queue operation named no topic.'),
  queue_not_set: spec('Queue is not set', 'A queue operation named no queue.'),
  message_id_not_set: spec('message_id is not set', 'A dead-letter operation named no message.'),
  queue_not_found: spec('Queue {queue} not found', 'No topic or named queue by this name is known.'),
  cluster_unavailable: spec(
    'Cannot call {function_id} on engine {engine}: {reason}',
    'The function is provided only by another engine of the cluster, and the cluster transport (NATS or Redis) cannot reach it right now; local calls go on.',
  ),
  message_too_large: spec(
    '{what} is {size} bytes, more than one message of the cluster transport carries ({limit} bytes: {setting})',
    'A call forwarded to another engine of the cluster, or its result, is larger than one message of the cluster transport may be.',
  ),
  trigger_not_found: spec('Trigger {trigger_id} not found', 'No trigger with this id is registered (of the type the call expects).'),
  memory_exporter_not_enabled: spec(
    'No spans are kept in memory ({reason})',
    'A trace query while flint-observability keeps no spans in memory (tracing off, or exporter: otlp).',
  ),
  message_group_missing: spec(
    'FIFO queue {queue} needs field "{field}" in the message\'s data (missing or null)',
    'A message for a FIFO queue lacks the field that names its group, or it is null.',
  ),
  unrouted_full: spec(
    'Topic {topic} has no subscriber and already holds {limit} unrouted messages; the message was refused',
    "A publish to a topic with no subscriber found the topic's unrouted list full.",
  ),
  too_many_connections: http(
    503,
    'Too many open connections (limit {limit}); retry later',
    'The listener is serving as many connections as it may; retry later.',
  ),
  url_not_allowed: http(
    403,
    '{reason}',
    "An HTTP function's URL is outside `security.url_allowlist`, is not https under `require_https`, or resolves to a private address.",
  ),
  http_error: spec('{url} answered HTTP {status}: {body}', "An HTTP function's endpoint answered with a status other than 2xx."),
  response_too_large: spec(
    'The response of {url} is larger than {limit} bytes',
    "An HTTP function's endpoint answered with more than `security.max_response_bytes`.",
  ),
  engine_shutting_down: http(503, 'The engine is shutting down', 'The engine is shutting down and no longer accepts calls.'),
  internal_error: http(500, 'internal error: {reason}', 'An unexpected error inside the engine.'),
  upgrade_required: http(426, 'This is the Flint worker bridge: connect with a WebSocket', 'A plain HTTP request reached the bridge (WebSocket only).'),
  not_found: http(404, 'No WebSocket endpoint at {path}', 'No WebSocket endpoint exists at this path of the bridge.'),
  unauthorized: http(
    401,
    'The bridge requires a token: send Authorization: Bearer <token> or ?token=<token>',
    'The bridge has a token (`bridge.auth_token`) and the connection did not present it.',
  ),
  origin_not_allowed: http(
    403,
    'Origin {origin} is not allowed on the bridge',
    'A WebSocket upgrade came from a web page whose origin is not in `bridge.allowed_origins`.',
  ),
  connection_unauthorized: http(401, '{reason}', "A listener's auth function refused the connection (`allow: false`)."),
  connection_forbidden: http(403, '{reason}', "A listener's auth function refused the connection with status 403."),
  FORBIDDEN: http(
    403,
    '{reason}',
    "The bridge listener's access policy does not allow this call or registration (upstream's spelling, which iii-sdk workers check).",
  ),
  auth_unavailable: http(
    503,
    'auth function {function_id} failed: {reason}',
    "A listener's auth function failed or did not answer in time, so the connection is refused.",
  ),
  invalid_json: http(400, 'Request body is not valid JSON: {reason}', 'HTTP: the request body is not valid JSON.'),
  route_not_found: http(404, 'No route for {method} {path}', 'HTTP: no route matches the path.'),
  method_not_allowed: http(405, '{method} is not allowed on {path}', 'HTTP: the path has routes, but not for this method (the `Allow` header lists them).'),
  payload_too_large: http(413, 'Request body is larger than {limit} bytes', "HTTP: the request body is larger than the module's `max_body_bytes`."),
  condition_failed: http(422, 'Request condition not met', "HTTP: the route's condition function returned `false`."),
  condition_error: http(500, 'condition {function_id} failed: {reason}', "HTTP: the route's condition function failed."),
  condition_timeout: http(504, 'condition {function_id} did not answer within {timeout_ms} ms', "HTTP: the route's condition function did not answer in time."),
  middleware_error: http(500, 'middleware {function_id} failed: {reason}', 'HTTP: a middleware function failed or answered badly.'),
  middleware_timeout: http(504, 'middleware {function_id} did not answer within {timeout_ms} ms', 'HTTP: a middleware function did not answer in time.'),
  handler_error: http(500, '{reason}', "HTTP: the route's function failed or returned an invalid response."),
  handler_timeout: http(504, '{function_id} did not answer within {timeout_ms} ms', "HTTP: the route's function did not answer (or start streaming) in time."),
  function_unavailable: http(503, 'No worker provides {function_id} right now', "HTTP: no worker provides the route's function right now."),
  worker_shutting_down: spec('the worker is shutting down', 'SDK only: the worker is shutting down, so its pending calls are rejected.'),
  not_connected: spec(
    'Not connected to {url}: {reason}',
    'SDK only: the worker has no connection to the engine (none came within the connect wait, or its queue of calls is full).',
  ),
  result_not_serializable: spec(
    '{function_id} returned a value with no JSON form: {reason}',
    'SDK only: a handler returned a value that cannot be sent as JSON (the Python SDK also names where it sits).',
  ),
  channel_closed: spec(
    '{channel} is closed: {reason}',
    'SDK only: a write to a channel or streamed HTTP response whose other end has gone away, or that is already closed.',
  ),
  files_exist: spec('{dir} already has {files}; pass --force to overwrite', 'CLI only: `flint init` would overwrite files that already exist.'),
  packages_not_found: spec('{reason}', 'CLI only: `flint init --packages` found no usable Flint tarballs in the folder.'),
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
  1002: {
    reason: 'WebSocket protocol error',
    when: 'A frame broke the WebSocket protocol (an unmasked frame from a client, an unknown opcode, a bad length).',
  },
  1007: { reason: 'text frame is not valid UTF-8', when: 'A text frame carried bytes that are not UTF-8.' },
  1008: { reason: 'the {direction} end of this channel is already taken', when: 'A second socket tried to take a channel end.' },
  1009: { reason: 'frame exceeds {setting} ({limit} bytes)', when: 'A frame was larger than the listener allows (`bridge.max_frame_bytes`, default 8 MiB).' },
  1013: {
    reason: 'too slow: more than {limit} bytes of frames unsent ({setting})',
    when: 'A stream client did not read its frames fast enough (`max_buffered_bytes` of flint-stream, default 4 MiB).',
  },
  4000: {
    reason: 'spare channel socket not bound within {limit} ms',
    when: 'A spare channel socket (Flint SDK) was not bound to a channel in time; the SDK opens another when it needs one.',
  },
  4400: {
    reason: 'the first frame of a spare channel socket must be a bindchannel frame',
    when: 'A spare channel socket began with anything but a `bindchannel` text frame.',
  },
  4404: {
    reason: 'no channel with this id and key',
    when: 'A spare channel socket asked for a channel the engine does not hold (wrong key, or one that ended long ago).',
  },
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

  constructor(code: ErrorCode | (string & {}), message: string, options?: { stacktrace?: string; details?: Record<string, unknown>; cause?: ErrorBody }) {
    super(message, options?.cause === undefined ? undefined : { cause: FlintError.fromBody(options.cause) });
    this.name = 'FlintError';
    this.code = code;
    this.stacktrace = options?.stacktrace;
    this.details = options?.details;
  }

  /** The error an ErrorBody describes (with its `cause` chain). */
  static fromBody(body: ErrorBody): FlintError {
    return new FlintError(body.code, body.message, { stacktrace: body.stacktrace, cause: body.cause });
  }

  /** An error with the catalogue message of `code`. */
  static of(code: ErrorCode, params?: Record<string, unknown>): FlintError {
    return new FlintError(code, formatError(code, params));
  }

  /** The wire form (`details` stay local: they may hold paths and other engine-side facts). */
  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.stacktrace !== undefined) body.stacktrace = this.stacktrace;
    if (this.cause instanceof FlintError) body.cause = this.cause.toBody();
    return body;
  }
}

/**
 * A code a handler may fail with: lower snake case, like the catalogue's (`out_of_stock`). Codes of
 * other shapes (Node's `ENOENT`, `ERR_…`) describe the handler's internals, not an answer.
 */
export const HANDLER_CODE_PATTERN = /^[a-z][a-z0-9_]*$/;

/**
 * Turns anything thrown into an ErrorBody for the wire. A FlintError, or any Error whose `code` is a
 * lower-snake-case string (an error from another copy of this package, an iii-sdk call error), keeps
 * its code; anything else gets `fallbackCode`.
 */
export function toErrorBody(err: unknown, fallbackCode: ErrorCode = 'invocation_failed'): ErrorBody {
  if (err instanceof FlintError) return err.toBody();
  if (err instanceof Error) {
    const own = (err as { code?: unknown }).code;
    const code = typeof own === 'string' && HANDLER_CODE_PATTERN.test(own) ? own : fallbackCode;
    return err.stack ? { code, message: err.message, stacktrace: err.stack } : { code, message: err.message };
  }
  return { code: fallbackCode, message: typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err)) };
}

export function isErrorBody(value: unknown): value is ErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}
