/** Wire messages of the Flint bridge (compatible with iii-sdk 0.11.x). */

export interface ErrorBody {
  code: string;
  message: string;
  stacktrace?: string;
  /** Flint addition: the failure of a call the handler made, when that is why it failed. */
  cause?: ErrorBody;
}

/** A reference to one end of a channel, embedded anywhere in payloads. */
export interface ChannelRef {
  channel_id: string;
  access_key: string;
  direction: 'read' | 'write';
}

export type InvokeAction = { type: 'void' } | { type: 'enqueue'; queue: string };

export interface RegisterFunctionMessage {
  type: 'registerfunction';
  id: string;
  description?: string;
  request_format?: unknown;
  response_format?: unknown;
  metadata?: Record<string, unknown>;
  invocation?: unknown;
}

export interface UnregisterFunctionMessage {
  type: 'unregisterfunction';
  id: string;
}

export interface RegisterTriggerMessage {
  type: 'registertrigger';
  id: string;
  trigger_type: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
}

export interface UnregisterTriggerMessage {
  type: 'unregistertrigger';
  id: string;
  trigger_type?: string;
}

export interface RegisterTriggerTypeMessage {
  type: 'registertriggertype';
  id: string;
  description?: string;
  trigger_request_format?: unknown;
  call_request_format?: unknown;
}

export interface UnregisterTriggerTypeMessage {
  type: 'unregistertriggertype';
  id: string;
}

export interface TriggerRegistrationResultMessage {
  type: 'triggerregistrationresult';
  id: string;
  trigger_type?: string;
  function_id?: string;
  error?: ErrorBody;
  /** Flint addition: `true` when the trigger waits for a provider of its type. */
  parked?: boolean;
}

export interface RegisterServiceMessage {
  type: 'registerservice';
  id: string;
  name?: string;
  description?: string;
  parent_service_id?: string;
}

export interface InvokeFunctionMessage {
  type: 'invokefunction';
  invocation_id?: string | null;
  function_id: string;
  data?: unknown;
  traceparent?: string;
  baggage?: string;
  action?: InvokeAction;
  /** Flint addition: per-call engine time-out in milliseconds (ignored by engines that do not know it). */
  timeout_ms?: number;
  /**
   * Flint addition, engine → worker: who made the call, when the caller connected through a bridge listener
   * with an access policy: its worker id and the `context` its auth function gave it.
   */
  caller?: { worker_id: string; context: unknown };
}

export interface InvocationResultMessage {
  type: 'invocationresult';
  invocation_id: string;
  function_id: string;
  result?: unknown;
  error?: ErrorBody;
  traceparent?: string;
  baggage?: string;
}

export interface WorkerRegisteredMessage {
  type: 'workerregistered';
  worker_id: string;
  /**
   * Flint addition: a secret for this connection. A worker that reconnects presents it in the
   * `x-flint-reattach` header (REATTACH_HEADER): the engine then takes the new connection as this
   * one's successor (closes this one and lets the new one take over its triggers and trigger types).
   */
  reattach_token?: string;
  /** Flint addition: the engine takes spare channel sockets (`SPARE_CHANNEL_PATH`, bound with `bindchannel`). */
  spare_channels?: boolean;
  /** Flint addition: how long the engine keeps a spare unbound before it closes it (4000). */
  spare_channel_idle_ms?: number;
}

/** The upgrade header carrying a reconnecting worker's `reattach_token` (Flint addition). */
export const REATTACH_HEADER = 'x-flint-reattach';

export interface PingMessage {
  type: 'ping';
}

export interface PongMessage {
  type: 'pong';
}

export interface ErrorMessage {
  type: 'error';
  error: ErrorBody;
}

/** Every frame a worker may send to the engine. */
export type WorkerToEngine =
  | RegisterFunctionMessage
  | UnregisterFunctionMessage
  | RegisterTriggerMessage
  | UnregisterTriggerMessage
  | RegisterTriggerTypeMessage
  | UnregisterTriggerTypeMessage
  | TriggerRegistrationResultMessage
  | RegisterServiceMessage
  | InvokeFunctionMessage
  | InvocationResultMessage
  | PingMessage
  | PongMessage;

/** Every frame the engine may send to a worker. */
export type EngineToWorker =
  | WorkerRegisteredMessage
  | InvokeFunctionMessage
  | InvocationResultMessage
  | RegisterTriggerMessage
  | UnregisterTriggerMessage
  | TriggerRegistrationResultMessage
  | PongMessage
  | ErrorMessage;

/** Telemetry frame prefixes accepted on `/otel`. */
export const TELEMETRY_PREFIXES = ['OTLP', 'MTRC', 'LOGS'] as const;
export type TelemetryKind = (typeof TELEMETRY_PREFIXES)[number];
