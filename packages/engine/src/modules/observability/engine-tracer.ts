import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import type { InvocationEnd, InvocationEvent, InvocationTracer, TraceScope } from '../../core/module-api.js';
import { EngineSpan, SpanClock, type SpanOrigin, type SpanParent } from './engine-spans.js';
import { type PooledIdGenerator, hexWord } from './id-generator.js';
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
  sample: (traceId: string, parent: Parent | undefined) => boolean;
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
   * parent is found here instead of parsing and checking the traceparent text again. A table of
   * OPEN_SLOTS chains, each scope in the chain that three hex digits of its span id name. (A Map did
   * this job at twice the garbage collector's cost: its tables, rebuilt as entries came and went, kept
   * ended scopes alive into the old generation.)
   */
  private readonly open: (Scope | undefined)[] = new Array<Scope | undefined>(OPEN_SLOTS).fill(undefined);
  private openCount = 0;
  private readonly clock = new SpanClock();
  /**
   * Spans the memory store dropped, used again for new ones: a busy engine then keeps its stored spans in
   * the same objects instead of making the garbage collector move every new one into the old generation.
   */
  private readonly free: EngineSpan[] = [];

  constructor(private readonly options: EngineTracerOptions) {}

  start(event: InvocationEvent): TraceScope | undefined {
    if (event.kind === 'invocation' && event.functionId.startsWith('engine::')) return undefined;
    const firing = event.kind === 'trigger';
    const kind = firing ? (FIRING_KIND[event.trigger?.type ?? ''] ?? SpanKind.INTERNAL) : SpanKind.CLIENT;
    const parent = this.parentOf(event.traceparent);
    const { ids, sample } = this.options;
    let scope: Scope;
    // The words are read before anything else draws from the pool (see PooledIdGenerator).
    if (parent) {
      const at = ids.draw(8);
      const sampled = sample(parent.traceId, parent);
      scope = new Scope(
        this,
        parent.traceId,
        parent.t0,
        parent.t1,
        parent.t2,
        parent.t3,
        ids.hexAt(at, 8),
        ids.wordAt(at),
        ids.wordAt(at + 4),
        sampled,
        event.baggage,
      );
    } else {
      const at = ids.draw(24);
      const traceId = ids.hexAt(at, 16);
      const sampled = sample(traceId, undefined);
      scope = new Scope(
        this,
        traceId,
        ids.wordAt(at),
        ids.wordAt(at + 4),
        ids.wordAt(at + 8),
        ids.wordAt(at + 12),
        ids.hexAt(at + 16, 8),
        ids.wordAt(at + 16),
        ids.wordAt(at + 20),
        sampled,
        event.baggage,
      );
    }
    if (scope.flags === 1) {
      scope.span = (this.free.pop() ?? new EngineSpan(this.options.origin)).open(scope, parent, firing, kind, this.clock.nanos(event.startedAt), event);
    }
    // A scope left open by mistake must not make the table grow for ever: its children parse instead.
    if (this.openCount >= MAX_OPEN) {
      this.open.fill(undefined);
      this.openCount = 0;
    }
    scope.nextInSlot = this.open[scope.slot];
    this.open[scope.slot] = scope;
    this.openCount++;
    return scope;
  }

  /** Ends a scope's span (when it records) and hands it on. */
  finish(scope: Scope, event: InvocationEvent, end: InvocationEnd): void {
    this.close(scope);
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

  /** Takes an ending scope out of the table of open scopes. */
  private close(scope: Scope): void {
    let at = this.open[scope.slot];
    if (at === scope) this.open[scope.slot] = scope.nextInSlot;
    else {
      while (at !== undefined && at.nextInSlot !== scope) at = at.nextInSlot;
      // Not found: the table was cleared since (see MAX_OPEN).
      if (at === undefined) return;
      at.nextInSlot = scope.nextInSlot;
    }
    scope.nextInSlot = undefined;
    this.openCount--;
  }

  /** The parent a traceparent names: an open span of this engine, else a remote parent (none when absent or malformed). */
  private parentOf(traceparent: string | undefined): Parent | undefined {
    if (traceparent === undefined) return undefined;
    for (let scope = this.open[slotAt(traceparent, 36)]; scope !== undefined; scope = scope.nextInSlot) {
      if (scope.traceparent === traceparent) return scope;
    }
    const remote = parseTraceParent(traceparent);
    if (!remote) return undefined;
    const { traceId, spanId } = remote;
    return {
      traceId,
      t0: hexWord(traceId, 0),
      t1: hexWord(traceId, 8),
      t2: hexWord(traceId, 16),
      t3: hexWord(traceId, 24),
      s0: hexWord(spanId, 0),
      s1: hexWord(spanId, 8),
      flags: remote.traceFlags,
      remote: true,
    };
  }
}

/** Dropped spans kept for reuse at most. */
const MAX_FREE = 1024;

/** Chains in the table of open scopes (12 bits of the span id: most chains of a busy engine hold one scope or none). */
const OPEN_SLOTS = 4096;

/** Open engine spans kept for their children at most (far above the calls in flight of a busy engine). */
const MAX_OPEN = 100_000;

/** The value of each hex digit by character code (0 for any other character). */
const HEX_VALUE = new Uint8Array(128);
for (let i = 0; i < 16; i++) HEX_VALUE[i.toString(16).charCodeAt(0)] = i;

/**
 * A chain of the table of open scopes: the first three digits of a span id, at `from` in `text` (36 in a
 * traceparent, `00-<trace id>-<span id>-<flags>`). Any text gives a chain; a malformed traceparent finds
 * no scope there with the same text.
 */
function slotAt(text: string, from: number): number {
  return (HEX_VALUE[text.charCodeAt(from) & 127]! << 8) | (HEX_VALUE[text.charCodeAt(from + 1) & 127]! << 4) | HEX_VALUE[text.charCodeAt(from + 2) & 127]!;
}

/** An open span's context: what a call under it carries on, and its ids as a parent for the spans under it. */
class Scope implements TraceScope, Parent {
  readonly traceparent: string;
  readonly flags: number;
  readonly remote = false;
  /** Its chain in the table of open scopes, and the next scope in that chain. */
  readonly slot: number;
  nextInSlot: Scope | undefined = undefined;
  /** The span, when it is sampled; without one the context is handed on all the same (flags 00). */
  span: EngineSpan | undefined = undefined;
  /** Ended: a second end (a caller's bug) must not store the span twice, as the store reuses what it drops. */
  ended = false;

  constructor(
    private readonly tracer: EngineTracer,
    readonly traceId: string,
    readonly t0: number,
    readonly t1: number,
    readonly t2: number,
    readonly t3: number,
    readonly spanId: string,
    readonly s0: number,
    readonly s1: number,
    sampled: boolean,
    readonly baggage: string | undefined,
  ) {
    this.flags = sampled ? 1 : 0;
    this.traceparent = `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
    this.slot = slotAt(spanId, 0);
  }

  end(event: InvocationEvent, end: InvocationEnd): void {
    if (this.ended) return;
    this.ended = true;
    this.tracer.finish(this, event, end);
  }
}
