import type { ChannelRef, InvokeAction } from '@flint/protocol';
import type { ReconnectOptions } from './backoff.js';
import type { ChannelReader } from './channel-reader.js';
import type { ChannelWriter } from './channel-writer.js';
import type { CronTriggerConfig } from './cron.js';
import type { StreamJoinLeaveTriggerConfig, StreamTriggerConfig } from './stream-types.js';

// The public types of the SDK: worker options, handlers, registrations, calls and channels.

export interface WorkerOptions {
  /** Name shown in `flint workers`; default `<hostname>:<pid>`. */
  workerName?: string;
  /** Default time-out of `trigger()` calls (ms). */
  invocationTimeoutMs?: number;
  /**
   * How long a call made while not connected waits for a connection before it rejects with
   * `not_connected` (ms); default 10000.
   */
  connectTimeoutMs?: number;
  reconnect?: Partial<ReconnectOptions>;
  /** Extra headers on the WebSocket upgrade. */
  headers?: Record<string, string>;
  /**
   * The engine's bridge token (`bridge.auth_token`), sent as `Authorization: Bearer <token>`. Default:
   * `FLINT_TOKEN`; without either, a `?token=` in the URL (e.g. in `FLINT_URL`) is used as it is.
   */
  token?: string;
  /** Announce the worker (`engine::workers::register`) so it shows in worker listings; default true. */
  announce?: boolean;
  /** Cap on frames queued while disconnected. */
  maxQueuedFrames?: number;
  /**
   * Record a span for each handled invocation whose caller's trace is sampled (a child of the engine's
   * span for the call, named `handle <function>`) and send it to the engine, where flint-observability
   * keeps or exports it with its own. Default false: the engine's own span for each call already shows
   * its worker and duration; the worker's span adds the time the call waited in the worker, at a cost
   * on every call (bench/invoke measures it).
   */
  spans?: boolean;
  /** `service.name` of those spans; default `OTEL_SERVICE_NAME`, else `workerName`, else `flint-worker`. */
  serviceName?: string;
  /** Where the SDK reports its own problems; default `console`. */
  log?: Pick<Console, 'warn' | 'error' | 'debug'>;
}

/** What a handler gets besides its input. */
export interface HandlerContext {
  function_id: string;
  invocation_id: string | undefined;
  /** The W3C trace context of the call: the worker's own span for it when one is recorded (see `spans`). */
  traceparent?: string;
  baggage?: string;
  /**
   * Who made the call, when the caller connected through a bridge listener with an access policy: its
   * worker id and the `context` that listener's auth function gave it (its identity).
   */
  caller?: { worker_id: string; context: unknown };
}

// biome-ignore lint/suspicious/noExplicitAny: handlers default to `any` input/output so plain JS-style handlers type-check, as in iii-sdk
export type Handler<I = any, O = any> = (input: I, ctx: HandlerContext) => O | Promise<O>;

/**
 * How the engine authenticates the requests of an HTTP function. Each `*_key` is the name of an
 * environment variable of the ENGINE process holding the secret (the worker never sees the secret).
 */
export type HttpAuth =
  /** `x-flint-signature: sha256=<hex HMAC-SHA256 of "<x-flint-timestamp>.<body>">`. */
  | { type: 'hmac'; secret_key: string }
  /** `authorization: Bearer <token>`. */
  | { type: 'bearer'; token_key: string }
  /** `<header>: <value>`. */
  | { type: 'api_key'; header: string; value_key: string };

/**
 * A function implemented by an HTTP endpoint (needs the engine's `flint-http-functions` module): the
 * engine sends each call's payload to `url` as JSON and answers with the response (see docs/http-functions.md).
 */
export interface HttpInvocation {
  /** Absolute http:// or https:// URL. */
  url: string;
  /** Default `POST`; `GET` and `DELETE` send no body. */
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The call's time-out (capped by the engine's `max_timeout_ms`; default its `default_timeout_ms`). */
  timeout_ms?: number;
  /** Extra request headers. */
  headers?: Record<string, string>;
  auth?: HttpAuth;
}

export interface FunctionOptions {
  description?: string;
  request_format?: Record<string, unknown>;
  response_format?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface FunctionRef {
  id: string;
  unregister(): void;
}

/**
 * The config types of trigger types Flint's modules provide: `registerTrigger` checks the config of a
 * trigger of one of these types against its type (`worker.registerTrigger({ type: 'cron', … })`).
 */
export interface ModuleTriggerConfigs {
  cron: CronTriggerConfig;
  stream: StreamTriggerConfig;
  'stream:join': StreamJoinLeaveTriggerConfig;
  'stream:leave': StreamJoinLeaveTriggerConfig;
}

/** A trigger to register: `config` is typed by `type` for the types of `ModuleTriggerConfigs`, else `C`. */
export interface TriggerInput<C = unknown, T extends string = string> {
  type: T;
  function_id: string;
  config: T extends keyof ModuleTriggerConfigs ? ModuleTriggerConfigs[T] : C;
  metadata?: Record<string, unknown>;
}

export interface TriggerRef {
  id: string;
  /** Resolves once the engine accepted the trigger (applied, or parked until its type is provided); rejects with its error. */
  ready: Promise<{ parked: boolean }>;
  unregister(): void;
}

/** A trigger as a trigger-type handler receives it. */
export interface TriggerConfig<C = unknown> extends Omit<TriggerInput<C>, 'type'> {
  id: string;
}

/** Implemented by a worker that provides a trigger type. Throw to reject a trigger. */
export interface TriggerTypeHandler<C = unknown> {
  registerTrigger(trigger: TriggerConfig<C>): void | Promise<void>;
  unregisterTrigger(trigger: TriggerConfig<C>): void | Promise<void>;
}

export interface TriggerRequest<I = unknown> {
  function_id: string;
  payload?: I;
  action?: InvokeAction;
  timeoutMs?: number;
}

export const TriggerAction = {
  Void: (): InvokeAction => ({ type: 'void' }),
  Enqueue: (options: { queue: string }): InvokeAction => ({ type: 'enqueue', queue: options.queue }),
};

export interface Channel {
  writer: ChannelWriter;
  reader: ChannelReader;
  writerRef: ChannelRef;
  readerRef: ChannelRef;
}
