import type { ErrorBody } from '@flint/protocol';
import type { TriggerOrigin } from './functions.js';

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
}

export interface InvocationEnd {
  durationMs: number;
  /** Set when the invocation or firing failed. */
  error?: ErrorBody;
  /** A trigger firing whose condition function returned `false`. */
  skipped?: boolean;
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

/** A trigger firing in progress, for trigger-type providers that run the steps themselves. */
export interface TriggerFiring {
  /** Ends the firing: with an error, as skipped (its condition said no), or as done. Once only. */
  end(outcome?: { error?: ErrorBody; skipped?: boolean }): void;
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
