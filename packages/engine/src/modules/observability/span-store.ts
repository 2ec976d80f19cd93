import type { Span } from './span.js';

/** Bounds of a SpanStore. */
export interface SpanStoreOptions {
  /** The most spans kept (default 10,000). */
  max_spans?: number;
  /** The most bytes kept, summed over each span's size estimate (about its JSON length, see spanSize; default 64 MiB). */
  max_bytes?: number;
  /** When set, `sweep(nowMs)` drops the spans that ended more than this many seconds before `nowMs`. */
  retention_seconds?: number;
  /**
   * Called with each LazySpan the count or byte bound drops, once the store no longer reads it (its place
   * in the trace index is only cleared by position): its owner may use the object again for a new span.
   */
  recycle?: (span: LazySpan) => void;
}

export interface SpanStoreStats {
  /** Spans held. */
  spans: number;
  /** The sum of the size estimates of the spans held. */
  bytes: number;
  /** Spans dropped, oldest first, to stay within `max_spans`. */
  dropped_by_count: number;
  /** Spans dropped to stay within `max_bytes` (oldest first; a span larger than `max_bytes` on its own is never kept). */
  dropped_by_bytes: number;
  /** Spans dropped by `sweep` for being older than `retention_seconds`. */
  dropped_by_retention: number;
  /** Traces with at least one span held. */
  traces: number;
}

export const DEFAULT_MAX_SPANS = 10_000;
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * A span kept in its source form (the OpenTelemetry SDK's ended span, an SDK's OTLP/JSON) and made into a
 * Span only when a query first reads it: a span nobody looks at costs the store no conversion. The Span
 * is kept once made.
 */
export abstract class LazySpan {
  abstract readonly trace_id: string;
  abstract readonly end_time_unix_nano: number;
  private made: Span | undefined;

  get span(): Span {
    if (this.made === undefined) this.made = this.make();
    return this.made;
  }

  /** Forgets the Span made from this one, for an object used again for another span (see `recycle`). */
  protected forget(): void {
    this.made = undefined;
  }

  protected abstract make(): Span;
}

/** What the store holds: a Span, or a LazySpan standing for one. */
type Entry = Span | LazySpan;

const spanOf = (entry: Entry): Span => (entry instanceof LazySpan ? entry.span : entry);

/** The spans of one trace in insertion order: `spans[head…]` are held, the ones before were evicted. */
interface TraceEntry {
  spans: Entry[];
  head: number;
}

/** A dropped prefix longer than this (and than the live part) is cut off the array that holds it. */
const COMPACT_AFTER = 1024;

/**
 * Finished spans, oldest dropped first once either bound (`max_spans`, `max_bytes`) would be passed. Each
 * span's size is estimated once, when it is added. An index by trace id answers `byTrace` without a scan.
 *
 * The index is brought up to date when it is read (a query, stats), not on every add: under load most
 * spans pass through the store and are dropped without anyone asking for them, and those never touch the
 * index. Catching up costs at most one index step per span held plus one per indexed span dropped since.
 */
export class SpanStore {
  readonly maxSpans: number;
  readonly maxBytes: number;
  readonly retentionSeconds: number | undefined;

  /**
   * Spans held, oldest first: sequence numbers `first` to `next - 1`, the span numbered `seq` at
   * `ring[seq & mask]`, its size estimate at the same place of `sizes`. A circular buffer whose length is
   * a power of two, doubled while the spans held fill it and `max_spans` allows more: a busy store
   * allocates nothing per span (arrays cut and regrown as spans came and went were moved into the old
   * generation by the garbage collector, again and again).
   */
  private ring: (Entry | undefined)[] = [];
  private sizes = new Float64Array(0);
  private mask = -1;
  private first = 0;
  private next = 0;
  private readonly traces = new Map<string, TraceEntry>();
  /** Spans with a lower sequence number are in the index (or were, until dropped). */
  private indexedSeq = 0;
  /** Trace ids of indexed spans dropped since the index was last brought up to date, oldest first. */
  private unindexed: string[] = [];
  private bytes = 0;
  private droppedByCount = 0;
  private droppedByBytes = 0;
  private droppedByRetention = 0;
  private readonly recycle: ((span: LazySpan) => void) | undefined;

  constructor(options: SpanStoreOptions = {}) {
    this.recycle = options.recycle;
    this.maxSpans = options.max_spans ?? DEFAULT_MAX_SPANS;
    this.maxBytes = options.max_bytes ?? DEFAULT_MAX_BYTES;
    this.retentionSeconds = options.retention_seconds;
    if (!Number.isInteger(this.maxSpans) || this.maxSpans < 1) throw new RangeError(`max_spans must be a positive integer (got ${this.maxSpans})`);
    if (!Number.isFinite(this.maxBytes) || this.maxBytes < 1) throw new RangeError(`max_bytes must be a positive number (got ${this.maxBytes})`);
    if (this.retentionSeconds !== undefined && !(Number.isFinite(this.retentionSeconds) && this.retentionSeconds > 0))
      throw new RangeError(`retention_seconds must be a positive number (got ${this.retentionSeconds})`);
  }

  /** The number of spans held. */
  get size(): number {
    return this.next - this.first;
  }

  /**
   * Keeps `span`, dropping the oldest spans as needed to stay within both bounds. The span is held as
   * given (not copied) and must be JSON-serialisable: its size is the length of its JSON text.
   */
  add(span: Span): void {
    this.addEntry(span, spanSize(span));
  }

  /** Keeps a span that is made on first read (see LazySpan), with its size estimate given. */
  addLazy(span: LazySpan, size: number): void {
    this.addEntry(span, size);
  }

  private addEntry(span: Entry, size: number): void {
    if (size > this.maxBytes) {
      this.droppedByBytes++;
      return;
    }
    while (this.size >= this.maxSpans) {
      this.evictOldest();
      this.droppedByCount++;
    }
    while (this.bytes + size > this.maxBytes) {
      this.evictOldest();
      this.droppedByBytes++;
    }
    if (this.size === this.ring.length) this.grow();
    const at = this.next & this.mask;
    this.ring[at] = span;
    this.sizes[at] = size;
    this.next++;
    this.bytes += size;
  }

  /** The span numbered `seq` (held). */
  private at(seq: number): Entry {
    return this.ring[seq & this.mask] as Entry;
  }

  /** Doubles the circular buffer (the spans keep their sequence numbers). */
  private grow(): void {
    const length = Math.max(INITIAL_RING, this.ring.length * 2);
    const ring = new Array<Entry | undefined>(length).fill(undefined);
    const sizes = new Float64Array(length);
    const mask = length - 1;
    for (let seq = this.first; seq < this.next; seq++) {
      ring[seq & mask] = this.at(seq);
      sizes[seq & mask] = this.sizes[seq & this.mask]!;
    }
    this.ring = ring;
    this.sizes = sizes;
    this.mask = mask;
  }

  /** Brings the index up to date: drops what left since, adds what came since and is still held. */
  private syncIndex(): void {
    for (const traceId of this.unindexed) {
      const entry = this.traces.get(traceId) as TraceEntry;
      entry.spans[entry.head] = undefined as unknown as Entry;
      entry.head++;
      if (entry.head === entry.spans.length) this.traces.delete(traceId);
      else if (entry.head > COMPACT_AFTER && entry.head * 2 > entry.spans.length) {
        entry.spans = entry.spans.slice(entry.head);
        entry.head = 0;
      }
    }
    this.unindexed = [];
    for (let seq = Math.max(this.indexedSeq, this.first); seq < this.next; seq++) {
      const span = this.at(seq);
      const traceId = span.trace_id;
      const entry = this.traces.get(traceId);
      if (entry) entry.spans.push(span);
      else this.traces.set(traceId, { spans: [span], head: 0 });
    }
    this.indexedSeq = this.next;
  }

  /** The spans of a trace held, in insertion order (a new array; empty for an unknown trace). */
  byTrace(traceId: string): Span[] {
    this.syncIndex();
    const entry = this.traces.get(traceId);
    if (!entry) return [];
    const spans: Span[] = new Array(entry.spans.length - entry.head);
    for (let i = entry.head; i < entry.spans.length; i++) spans[i - entry.head] = spanOf(entry.spans[i] as Entry);
    return spans;
  }

  /** The id of each trace held, once (in no promised order). */
  traceIds(): IterableIterator<string> {
    this.syncIndex();
    return this.traces.keys();
  }

  /** Every span held, oldest first. */
  *all(): IterableIterator<Span> {
    for (let seq = this.first; seq < this.next; seq++) yield spanOf(this.at(seq));
  }

  /** Drops every span and resets the counters. */
  clear(): void {
    this.ring = [];
    this.sizes = new Float64Array(0);
    this.mask = -1;
    this.first = this.next;
    this.traces.clear();
    this.indexedSeq = this.next;
    this.unindexed = [];
    this.bytes = 0;
    this.droppedByCount = 0;
    this.droppedByBytes = 0;
    this.droppedByRetention = 0;
  }

  stats(): SpanStoreStats {
    this.syncIndex();
    return {
      spans: this.size,
      bytes: this.bytes,
      dropped_by_count: this.droppedByCount,
      dropped_by_bytes: this.droppedByBytes,
      dropped_by_retention: this.droppedByRetention,
      traces: this.traces.size,
    };
  }

  /**
   * Drops the spans that ended before `nowMs - retention_seconds` and returns how many; nothing without a
   * retention. Spans need not arrive in the order they end, so this looks at every span held.
   */
  sweep(nowMs: number): number {
    if (this.retentionSeconds === undefined || this.size === 0) return 0;
    const cutoffNano = (nowMs - this.retentionSeconds * 1000) * 1e6;
    const keptSpans: Entry[] = [];
    const keptSizes: number[] = [];
    for (let seq = this.first; seq < this.next; seq++) {
      const span = this.at(seq);
      if (span.end_time_unix_nano < cutoffNano) continue;
      keptSpans.push(span);
      keptSizes.push(this.sizes[seq & this.mask]!);
    }
    const dropped = this.size - keptSpans.length;
    if (dropped === 0) return 0;
    // The spans kept get new sequence numbers; the index is rebuilt when next read.
    this.ring.fill(undefined);
    this.first = this.next;
    this.bytes = 0;
    for (let i = 0; i < keptSpans.length; i++) {
      const at = this.next & this.mask;
      this.ring[at] = keptSpans[i];
      this.sizes[at] = keptSizes[i]!;
      this.bytes += keptSizes[i]!;
      this.next++;
    }
    this.traces.clear();
    this.indexedSeq = this.first;
    this.unindexed = [];
    this.droppedByRetention += dropped;
    return dropped;
  }

  /**
   * Drops the oldest span. If it is in the index, it is the oldest held of its trace (the head of that
   * trace's entry), and leaves the index at the next sync.
   */
  private evictOldest(): void {
    const at = this.first & this.mask;
    const span = this.ring[at] as Entry;
    if (this.first < this.indexedSeq) this.unindexed.push(span.trace_id);
    this.bytes -= this.sizes[at]!;
    this.ring[at] = undefined;
    this.first++;
    if (this.recycle !== undefined && span instanceof LazySpan) this.recycle(span);
  }
}

/** The first length of the circular buffer. */
const INITIAL_RING = 1024;

/** The JSON text of a span whose strings are all empty, with no parent, attributes, events or links. */
const SPAN_JSON_BASE = 218;

/**
 * The size estimate of a span: about the length of its JSON text (a byte a character for ASCII text),
 * summed from its strings rather than by serialising it, which would cost more than everything else
 * the store does per span. Events and links (rare) are measured as JSON.
 */
export function spanSize(span: Span): number {
  let n = SPAN_JSON_BASE + span.trace_id.length + span.span_id.length + span.name.length + span.service_name.length;
  if (span.parent_span_id !== null) n += span.parent_span_id.length - 2;
  if (span.status_description !== undefined) n += span.status_description.length + 23;
  if (span.instrumentation_scope_name !== undefined) n += span.instrumentation_scope_name.length + 33;
  if (span.instrumentation_scope_version !== undefined) n += span.instrumentation_scope_version.length + 36;
  if (span.flags !== undefined) n += 10;
  const attributes = span.attributes;
  for (let i = 0; i < attributes.length; i++) {
    const pair = attributes[i] as [string, string];
    n += pair[0].length + pair[1].length + 8;
  }
  if (span.events.length > 0) n += JSON.stringify(span.events).length;
  if (span.links.length > 0) n += JSON.stringify(span.links).length;
  return n;
}
