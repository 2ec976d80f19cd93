import { performance } from 'node:perf_hooks';
import type { ErrorBody } from '@flint/protocol';
import { errorMessage } from '../lib/errors.js';
import type { TraceContext, TriggerOrigin } from './api/functions.js';
import type { InvocationEnd, InvocationEvent, InvocationHooks, TriggerFiring } from './api/observe.js';
import type { Logger } from './logger.js';

/** Called exactly once per routed invocation, with its error or result and the trace context it came back with. */
export type Done = (error: ErrorBody | undefined, result: unknown, trace?: TraceContext) => void;

const NO_FIRING: TriggerFiring = Object.freeze({ end() {} });

/**
 * The installed invocation hooks. `active` is false while none are installed: the invoker then
 * checks one boolean per call and builds nothing (bench/invoke measures that this costs nothing).
 */
export class HookHub {
  active = false;
  private hooks: InvocationHooks[] = [];

  constructor(private readonly logger: Logger) {}

  add(hooks: InvocationHooks): () => void {
    this.hooks = [...this.hooks, hooks];
    this.active = true;
    return () => {
      this.hooks = this.hooks.filter((h) => h !== hooks);
      this.active = this.hooks.length > 0;
    };
  }

  /** Emits the start of an invocation and returns `done` wrapped to emit its end. Call only when `active`. */
  wrap(functionId: string, trigger: TriggerOrigin | undefined, caller: string | undefined, trace: TraceContext, done: Done): Done {
    const event = this.event('invocation', functionId, trigger, caller, trace);
    return (error, result, resultTrace) => {
      this.finish(event, error ? { durationMs: performance.now() - event.startedAt, error } : { durationMs: performance.now() - event.startedAt });
      done(error, result, resultTrace);
    };
  }

  /** Starts a trigger firing; a shared no-op when no hooks are installed. */
  beginTrigger(trigger: TriggerOrigin, functionId: string, caller: string | undefined, trace: TraceContext | undefined): TriggerFiring {
    if (!this.active) return NO_FIRING;
    const event = this.event('trigger', functionId, trigger, caller, trace ?? {});
    let ended = false;
    return {
      end: (outcome = {}) => {
        if (ended) return;
        ended = true;
        this.finish(event, { durationMs: performance.now() - event.startedAt, ...outcome });
      },
    };
  }

  private event(kind: InvocationEvent['kind'], functionId: string, trigger: TriggerOrigin | undefined, caller: string | undefined, trace: TraceContext) {
    const event: InvocationEvent = {
      kind,
      functionId,
      trigger,
      caller,
      traceparent: trace.traceparent,
      baggage: trace.baggage,
      startedAt: performance.now(),
    };
    for (const h of this.hooks) if (h.onStart) this.run(() => h.onStart?.(event));
    return event;
  }

  private finish(event: InvocationEvent, end: InvocationEnd): void {
    for (const h of this.hooks) {
      if (end.error) {
        const failed = end as InvocationEnd & { error: ErrorBody };
        if (h.onError) this.run(() => h.onError?.(event, failed));
      } else if (h.onEnd) this.run(() => h.onEnd?.(event, end));
    }
  }

  private run(call: () => void): void {
    try {
      call();
    } catch (err) {
      this.logger.error(`an invocation hook threw (ignored): ${errorMessage(err)}`);
    }
  }
}
