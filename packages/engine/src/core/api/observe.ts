import type { ErrorBody } from '@flint/protocol';
import type { TraceContext, TriggerOrigin } from './functions.js';

/** A span attribute value as OpenTelemetry takes it. */
export type AttributeValue = string | number | boolean;

/** One invocation (`kind: 'invocation'`) or one trigger firing (`kind: 'trigger'`) as hooks see it. */
export interface InvocationEvent {
  readonly kind: 'invocation' | 'trigger';
  readonly functionId: string;
  /** The trigger fired (always set for `kind: 'trigger'`; for an invocation, when it was made for a trigger). */
  readonly trigger: TriggerOrigin | undefined;
  /** Who made the call: a worker id, or the name of the module. */
  readonly caller: string | undefined;
  readonly traceparent: string | undefined;
  readonly baggage: string | undefined;
  /** `performance.now()` at the start. */
  readonly startedAt: number;
  /** The worker chosen to run an invocation (set once it is chosen; not for in-process functions). */
  workerId?: string;
  workerName?: string;
  /** A module's name for its firing (`GET /users/:id`); tracers name the span after it. */
  readonly name?: string;
  /**
   * What a module said about its firing at the start (`http.request.method`, `messaging.destination.name`, …).
   * Tracers may keep the object (and the event) until the span is read: a module must not change it afterwards.
   */
  readonly attributes?: Readonly<Record<string, AttributeValue>>;
}

export interface InvocationEnd {
  durationMs: number;
  /** Set when the invocation or firing failed. */
  error?: ErrorBody;
  /** A trigger firing whose condition function returned `false`. */
  skipped?: boolean;
  /** What a module learnt by the end of its firing (`http.response.status_code`, …); kept as given, like the start's. */
  attributes?: Record<string, AttributeValue>;
}

/**
 * Observes every invocation and every trigger firing. Hooks run synchronously on the call path: keep
 * them cheap and never throw (what they throw is logged and swallowed). With no hooks installed the
 * engine builds no event at all.
 */
export interface InvocationHooks {
  onStart?(event: InvocationEvent): void;
  onEnd?(event: InvocationEvent, end: InvocationEnd): void;
  onError?(event: InvocationEvent, end: InvocationEnd & { error: ErrorBody }): void;
}

/**
 * Opens a span for every invocation and trigger firing. One module at a time traces (flint-observability).
 * `start` runs synchronously on the call path: keep it cheap; what it throws is logged and the call goes
 * on untraced.
 */
export interface InvocationTracer {
  /** The scope of the new span, or undefined to leave this call untraced. */
  start(event: InvocationEvent): TraceScope | undefined;
}

/** A span opened by a tracer: its context is what the call carries on (to the provider, to nested calls). */
export interface TraceScope extends TraceContext {
  /** Ends the span; called exactly once. */
  end(event: InvocationEvent, end: InvocationEnd): void;
}

/** How a module starts a trigger firing (all optional). */
export interface FiringOptions extends TraceContext {
  /** The span's name (`GET /users/:id`); tracers fall back to `<type> <trigger id>`. */
  name?: string;
  attributes?: Record<string, AttributeValue>;
}

/** A trigger firing in progress, for trigger-type providers that run the steps themselves. */
export interface TriggerFiring {
  /**
   * The trace context of the firing: calls made for it (condition, middleware, the function) carry this
   * one, so that their spans sit under the firing's. Without a tracer it is the context the firing began with.
   */
  readonly trace: TraceContext;
  /** False when no hook or tracer sees the firing (a module may then skip gathering details for it). */
  readonly observed: boolean;
  /** Ends the firing: with an error, as skipped (its condition said no), or as done. Once only. */
  end(outcome?: { error?: ErrorBody; skipped?: boolean; attributes?: Record<string, AttributeValue> }): void;
}

export type LogLevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** One log record of the engine or of a worker (`engine::log::*`), as the log tap delivers it. */
export interface LogRecord {
  /** Epoch milliseconds. */
  time: number;
  level: LogLevelName;
  msg: string;
  /** `engine` for the engine's own records, `worker` for what workers logged through `engine::log::*`. */
  source: 'engine' | 'worker';
  /** The record's fields: the logger's bindings (component, module, …) and the fields logged with it. */
  fields: Record<string, unknown>;
}
