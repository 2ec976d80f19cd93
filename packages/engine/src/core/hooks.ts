import { performance } from 'node:perf_hooks';
import type { ErrorBody } from '@flint/protocol';
import { errorMessage } from '../lib/errors.js';
import type { TraceContext, TriggerOrigin } from './api/functions.js';
import type { FiringOptions, InvocationEnd, InvocationEvent, InvocationHooks, InvocationTracer, TraceScope, TriggerFiring } from './api/observe.js';
import type { Logger } from './logger.js';

/** Called exactly once per routed invocation, with its error or result and the trace context it came back with. */
export type Done = (error: ErrorBody | undefined, result: unknown, trace?: TraceContext) => void;

/** An invocation under hooks: its `done` wrapped to report the end, the context it carries on, its event. */
export interface Wrapped {
  done: Done;
  /** The tracer's span context when one traces it, else the context the call came with. */
  trace: TraceContext;
  event: InvocationEvent;
}

/**
 * The installed invocation hooks and tracer. `active` is false while none is installed: the invoker
 * then checks one boolean per call and builds nothing (bench/invoke measures that this costs nothing).
 */
export class HookHub {
  active = false;
  private hooks: InvocationHooks[] = [];
  private tracer: InvocationTracer | undefined;

  constructor(private readonly logger: Logger) {}

  add(hooks: InvocationHooks): () => void {
    this.hooks = [...this.hooks, hooks];
    this.active = true;
    return () => {
      this.hooks = this.hooks.filter((h) => h !== hooks);
      this.refresh();
    };
  }

  /** Installs the tracer; a second one while the first is installed is refused (one span per call). */
  trace(tracer: InvocationTracer, owner: string): () => void {
    if (this.tracer) throw new Error(`${owner} cannot trace invocations: another module already does`);
    this.tracer = tracer;
    this.active = true;
    return () => {
      if (this.tracer === tracer) this.tracer = undefined;
      this.refresh();
    };
  }

  /** Emits the start of an invocation and returns `done` wrapped to emit its end. Call only when `active`. */
  wrap(functionId: string, trigger: TriggerOrigin | undefined, caller: string | undefined, trace: TraceContext, done: Done): Wrapped {
    const event = this.event('invocation', functionId, trigger, caller, trace, undefined);
    const scope = this.open(event);
    const wrapped: Done = (error, result, resultTrace) => {
      this.finish(event, scope, error ? { durationMs: performance.now() - event.startedAt, error } : { durationMs: performance.now() - event.startedAt });
      done(error, result, resultTrace);
    };
    return { done: wrapped, trace: scope ?? trace, event };
  }

  /** Starts a trigger firing; without hooks or tracer a light object that only carries `trace` on. */
  beginTrigger(trigger: TriggerOrigin, functionId: string, caller: string | undefined, options: FiringOptions | undefined): TriggerFiring {
    if (!this.active) {
      // Background firings mostly come with no trace context: one shared object for all of them.
      if (options === undefined || (options.traceparent === undefined && options.baggage === undefined)) return UNOBSERVED;
      return { trace: options, observed: false, end: noop };
    }
    const event = this.event('trigger', functionId, trigger, caller, options ?? NO_TRACE, options);
    return new ObservedFiring(this, event, this.open(event), options);
  }

  private refresh(): void {
    this.active = this.hooks.length > 0 || this.tracer !== undefined;
  }

  private event(
    kind: InvocationEvent['kind'],
    functionId: string,
    trigger: TriggerOrigin | undefined,
    caller: string | undefined,
    trace: TraceContext,
    firing: FiringOptions | undefined,
  ): InvocationEvent {
    const event: InvocationEvent = {
      kind,
      functionId,
      trigger,
      caller,
      traceparent: trace.traceparent,
      baggage: trace.baggage,
      startedAt: performance.now(),
      name: firing?.name,
      attributes: firing?.attributes,
    };
    for (const h of this.hooks) if (h.onStart) this.run(() => h.onStart?.(event));
    return event;
  }

  private open(event: InvocationEvent): TraceScope | undefined {
    const tracer = this.tracer;
    if (!tracer) return undefined;
    try {
      return tracer.start(event);
    } catch (err) {
      this.logger.error(`the invocation tracer threw (call not traced): ${errorMessage(err)}`);
      return undefined;
    }
  }

  /** Reports the end of an invocation or firing to the tracer's scope and to the hooks. */
  finish(event: InvocationEvent, scope: TraceScope | undefined, end: InvocationEnd): void {
    if (scope) {
      try {
        scope.end(event, end);
      } catch (err) {
        this.logger.error(`the invocation tracer threw ending a span (ignored): ${errorMessage(err)}`);
      }
    }
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

const NO_TRACE: TraceContext = Object.freeze({});
const noop = (): void => {};
/** A firing nobody observes, with no trace context to carry on. */
const UNOBSERVED: TriggerFiring = Object.freeze({ trace: NO_TRACE, observed: false, end: noop });

/** A firing that hooks or a tracer see: one object per firing (its end is a method, not a closure). */
class ObservedFiring implements TriggerFiring {
  readonly observed = true;
  readonly trace: TraceContext;
  private ended = false;

  constructor(
    private readonly hub: HookHub,
    private readonly event: InvocationEvent,
    private readonly scope: TraceScope | undefined,
    options: FiringOptions | undefined,
  ) {
    this.trace = scope ?? options ?? NO_TRACE;
  }

  end(outcome: Parameters<TriggerFiring['end']>[0] = {}): void {
    if (this.ended) return;
    this.ended = true;
    // Field by field, not a spread: this runs for every observed firing.
    const end: InvocationEnd = { durationMs: performance.now() - this.event.startedAt };
    if (outcome.error !== undefined) end.error = outcome.error;
    if (outcome.skipped !== undefined) end.skipped = outcome.skipped;
    if (outcome.attributes !== undefined) end.attributes = outcome.attributes;
    this.hub.finish(this.event, this.scope, end);
  }
}
