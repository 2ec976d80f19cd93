import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import type { InvocationEnd, InvocationEvent, InvocationTracer, TraceScope } from '../../core/module-api.js';
import { EngineSpan, SpanClock, type SpanOrigin, type SpanParent } from './engine-spans.js';
import type { PooledIdGenerator } from './id-generator.js';
import type { LazySpan } from './span-store.js';

/** Firings of these trigger types open spans of these kinds (a message delivery consumes); the rest are internal. */
const FIRING_KIND: Readonly<Record<string, SpanKind>> = {
  http: SpanKind.SERVER,
  'durable:subscriber': SpanKind.CONSUMER,
  enqueue: SpanKind.CONSUMER,
};

/** The trace a new span joins: its parent's ids and flags, and whether the parent lives in another process. */
interface Parent extends SpanParent {
  traceId: string;
}

export interface EngineTracerOptions {
  ids: PooledIdGenerator;
  /** Whether a new span is sampled (recorded), given its trace id and its parent (none for a new trace). */
  sample: (traceId: string, name: string, kind: SpanKind, parent: Parent | undefined) => boolean;
  /** Takes every sampled span once it ends. */
  ended: (span: EngineSpan) => void;
  origin: SpanOrigin;
}

/**
 * The engine's spans, one per invocation (`call <function>`, a client span: the engine calls the
 * provider) and one per trigger firing (named by the module, e.g. `GET /users/:id`, else `<type> <id>`),
 * under the context the call came with. The span's own context is what the call carries on, so a
 * worker's spans and nested calls sit under it. The spans are EngineSpans (see engine-spans.ts), made
 * here rather than by the OpenTelemetry SDK's tracer, which cost several times as much per call; sampling
 * still uses the SDK's samplers and the export its exporters.
 *
 * The engine's introspection functions (`engine::*`: log calls, listings, the console's queries) are
 * not traced: they would bury the application's traces.
 */
export class EngineTracer implements InvocationTracer {
  /**
   * The engine's spans still open, by the traceparent they hand on. Most calls are children of one of
   * them (an HTTP request's call, a worker's nested call carrying the engine's context back): their
   * parent is found here instead of parsing and checking the traceparent text again.
   */
  private readonly open = new Map<string, Scope>();
  private readonly clock = new SpanClock();
  /**
   * Spans the memory store dropped, used again for new ones: a busy engine then keeps its stored spans in
   * the same objects instead of making the garbage collector move every new one into the old generation.
   */
  private readonly free: EngineSpan[] = [];

  constructor(private readonly options: EngineTracerOptions) {}

  start(event: InvocationEvent): TraceScope | undefined {
    if (event.kind === 'invocation' && event.functionId.startsWith('engine::')) return undefined;
    const trigger = event.trigger;
    const firing = event.kind === 'trigger';
    const name = firing ? (event.name ?? `${trigger?.type} ${trigger?.id}`) : `call ${event.functionId}`;
    const kind = firing ? (FIRING_KIND[trigger?.type ?? ''] ?? SpanKind.INTERNAL) : SpanKind.CLIENT;
    const parent = this.parentOf(event.traceparent);
    const { ids, sample, origin } = this.options;
    const traceId = parent?.traceId ?? ids.generateTraceId();
    const spanId = ids.generateSpanId();
    let span: EngineSpan | undefined;
    if (sample(traceId, name, kind, parent)) {
      span = (this.free.pop() ?? new EngineSpan(origin)).open(traceId, spanId, parent, name, kind, this.clock.nanos(event.startedAt), event);
    }
    const scope = new Scope(traceId, spanId, span, event.baggage, this);
    // A scope left open by mistake must not make the map grow for ever: its children parse instead.
    if (this.open.size >= MAX_OPEN) this.open.clear();
    this.open.set(scope.traceparent, scope);
    return scope;
  }

  /** Ends a scope's span (when it records) and hands it on. */
  finish(scope: Scope, event: InvocationEvent, end: InvocationEnd): void {
    this.open.delete(scope.traceparent);
    const span = scope.span;
    if (!span) return;
    span.end_time_unix_nano = span.start_time_unix_nano + Math.max(0, end.durationMs) * 1e6;
    span.workerId = event.workerId;
    span.workerName = event.workerName;
    span.endAttributes = end.attributes;
    if (end.error) {
      span.status = SpanStatusCode.ERROR;
      span.errorCode = end.error.code;
      span.errorMessage = end.error.message;
    } else {
      span.skipped = end.skipped === true;
      span.status = SpanStatusCode.OK;
    }
    this.options.ended(span);
  }

  /** Takes back a span the store dropped (see `free`). */
  recycle(span: LazySpan): void {
    if (span instanceof EngineSpan && this.free.length < MAX_FREE) this.free.push(span);
  }

  /** The parent a traceparent names: an open span of this engine, else a remote parent (none when absent or malformed). */
  private parentOf(traceparent: string | undefined): Parent | undefined {
    if (traceparent === undefined) return undefined;
    const scope = this.open.get(traceparent);
    if (scope) return scope.asParent;
    const remote = parseTraceParent(traceparent);
    return remote ? { traceId: remote.traceId, spanId: remote.spanId, flags: remote.traceFlags, remote: true } : undefined;
  }
}

/** Dropped spans kept for reuse at most. */
const MAX_FREE = 1024;

/** Open engine spans kept for their children at most (far above the calls in flight of a busy engine). */
const MAX_OPEN = 100_000;

class Scope implements TraceScope {
  readonly traceparent: string;
  /** Ended: a second end (a caller's bug) must not store the span twice, as the store reuses what it drops. */
  ended = false;

  constructor(
    readonly traceId: string,
    readonly spanId: string,
    /** Undefined when the span is not sampled: its context is handed on all the same (flags 00). */
    readonly span: EngineSpan | undefined,
    readonly baggage: string | undefined,
    private readonly tracer: EngineTracer,
  ) {
    this.traceparent = `00-${traceId}-${spanId}-${span ? '01' : '00'}`;
  }

  /** This span as the parent of a call made under it. */
  get asParent(): Parent {
    return { traceId: this.traceId, spanId: this.spanId, flags: this.span ? 1 : 0, remote: false };
  }

  end(event: InvocationEvent, end: InvocationEnd): void {
    if (this.ended) return;
    this.ended = true;
    this.tracer.finish(this, event, end);
  }
}
