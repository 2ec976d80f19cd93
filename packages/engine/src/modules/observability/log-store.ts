import { type StoredLogRecord, recordTimeMillis } from './log-record.js';
import { estimateLogBytes } from './log-size.js';

export interface LogStoreOptions {
  /** At most this many records are kept; the oldest go first. */
  max_count: number;
  /** The records kept add up to at most this many bytes (by estimateLogBytes); the oldest go first. */
  max_bytes: number;
  /** `sweep` drops the records older than this many seconds; unset or 0: records are kept until a cap pushes them out. */
  retention_seconds?: number | undefined;
}

/** A record in the store, with what the store worked out once when it came in. */
export interface StoredLog {
  readonly record: StoredLogRecord;
  /** The estimate charged against `max_bytes`. */
  readonly bytes: number;
  /** The record's instant (recordTimeMillis), in milliseconds since the epoch. */
  readonly time_ms: number;
  /** Arrival order: higher is newer. */
  readonly seq: number;
}

export interface LogStoreStats {
  logs: number;
  bytes: number;
  /** Records dropped (since the store was made) because `max_count` was reached. */
  dropped_by_count: number;
  /** Records dropped because `max_bytes` was reached, including a record larger than `max_bytes` on its own. */
  dropped_by_bytes: number;
  /** Records `sweep` dropped for being older than `retention_seconds`. */
  dropped_by_retention: number;
}

/** The records of one trace, oldest first, from `head` on (entries before it were evicted). */
interface TraceQueue {
  items: (StoredLog | undefined)[];
  head: number;
}

/**
 * The in-memory log store: a ring bounded both in records (`max_count`) and in estimated bytes
 * (`max_bytes`), the oldest records dropped first, with an index by trace id so that the records of a
 * trace are found without a scan. Everything it does is synchronous and bounded by the caps.
 */
export class LogStore {
  readonly max_count: number;
  readonly max_bytes: number;
  readonly retention_seconds: number | undefined;

  /** The ring: `count` entries from `head` on, oldest first; it grows to `max_count` slots as needed. */
  private ring: (StoredLog | undefined)[] = [];
  private head = 0;
  private count = 0;
  private totalBytes = 0;
  private nextSeq = 0;
  private readonly byTrace = new Map<string, TraceQueue>();
  private droppedByCount = 0;
  private droppedByBytes = 0;
  private droppedByRetention = 0;

  constructor(options: LogStoreOptions) {
    if (!Number.isSafeInteger(options.max_count) || options.max_count < 1)
      throw new RangeError(`max_count must be a positive integer (got ${options.max_count})`);
    if (!Number.isSafeInteger(options.max_bytes) || options.max_bytes < 1)
      throw new RangeError(`max_bytes must be a positive integer (got ${options.max_bytes})`);
    const retention = options.retention_seconds;
    if (retention !== undefined && (!Number.isFinite(retention) || retention < 0)) {
      throw new RangeError(`retention_seconds must be a non-negative number (got ${retention})`);
    }
    this.max_count = options.max_count;
    this.max_bytes = options.max_bytes;
    this.retention_seconds = retention === 0 ? undefined : retention;
  }

  get size(): number {
    return this.count;
  }

  /**
   * Stores `record`, first dropping the oldest records until it fits both caps. A record larger than
   * `max_bytes` on its own is not stored (and counted in `dropped_by_bytes`): the result is false.
   */
  add(record: StoredLogRecord): boolean {
    const bytes = estimateLogBytes(record);
    if (bytes > this.max_bytes) {
      this.droppedByBytes++;
      return false;
    }
    while (this.count > 0 && this.count >= this.max_count) {
      this.evictOldest();
      this.droppedByCount++;
    }
    while (this.count > 0 && this.totalBytes + bytes > this.max_bytes) {
      this.evictOldest();
      this.droppedByBytes++;
    }
    const entry: StoredLog = { record, bytes, time_ms: recordTimeMillis(record), seq: this.nextSeq++ };
    if (this.count === this.ring.length) this.grow();
    this.ring[(this.head + this.count) % this.ring.length] = entry;
    this.count++;
    this.totalBytes += bytes;
    if (record.trace_id !== null) {
      const queue = this.byTrace.get(record.trace_id);
      if (queue === undefined) this.byTrace.set(record.trace_id, { items: [entry], head: 0 });
      else queue.items.push(entry);
    }
    return true;
  }

  /** Every record, oldest first (a new array). */
  entries(): StoredLog[] {
    return this.inOrder();
  }

  /** The records of one trace (its id as stored: see normaliseId), oldest first (a new array); no scan of the store. */
  byTraceId(traceId: string): StoredLog[] {
    const queue = this.byTrace.get(traceId);
    return queue === undefined ? [] : (queue.items.slice(queue.head) as StoredLog[]);
  }

  /** How many trace ids the index holds (each has at least one stored record). */
  get indexedTraces(): number {
    return this.byTrace.size;
  }

  /** Drops every record. The dropped counters are totals since the store was made: they stay. */
  clear(): void {
    this.ring = [];
    this.head = 0;
    this.count = 0;
    this.totalBytes = 0;
    this.byTrace.clear();
  }

  /**
   * Drops the records whose instant is before `nowMs - retention_seconds`, wherever they are in the
   * ring (a source may send old records late). Returns how many went. Without retention, does nothing.
   */
  sweep(nowMs: number): number {
    if (this.retention_seconds === undefined) return 0;
    const cutoff = nowMs - this.retention_seconds * 1000;
    const all = this.inOrder();
    const kept = all.filter((entry) => entry.time_ms >= cutoff);
    const removed = all.length - kept.length;
    if (removed === 0) return 0;
    this.clear();
    this.ring = kept;
    this.count = kept.length;
    for (const entry of kept) {
      this.totalBytes += entry.bytes;
      const traceId = entry.record.trace_id;
      if (traceId === null) continue;
      const queue = this.byTrace.get(traceId);
      if (queue === undefined) this.byTrace.set(traceId, { items: [entry], head: 0 });
      else queue.items.push(entry);
    }
    this.droppedByRetention += removed;
    return removed;
  }

  stats(): LogStoreStats {
    return {
      logs: this.count,
      bytes: this.totalBytes,
      dropped_by_count: this.droppedByCount,
      dropped_by_bytes: this.droppedByBytes,
      dropped_by_retention: this.droppedByRetention,
    };
  }

  private evictOldest(): void {
    const entry = this.ring[this.head];
    if (entry === undefined) return;
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) % this.ring.length;
    this.count--;
    this.totalBytes -= entry.bytes;
    const traceId = entry.record.trace_id;
    if (traceId === null) return;
    // The oldest record of the store is the oldest of its trace: both lists are in arrival order.
    const queue = this.byTrace.get(traceId)!;
    queue.items[queue.head++] = undefined;
    if (queue.head === queue.items.length) this.byTrace.delete(traceId);
    else if (queue.head >= 64 && queue.head * 2 >= queue.items.length) {
      queue.items = queue.items.slice(queue.head);
      queue.head = 0;
    }
  }

  private inOrder(): StoredLog[] {
    const out: StoredLog[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.ring[(this.head + i) % this.ring.length]!);
    return out;
  }

  /** Doubles the ring (up to `max_count` slots), laying its entries out from slot 0. */
  private grow(): void {
    const capacity = Math.min(this.max_count, Math.max(16, this.ring.length * 2));
    const next: (StoredLog | undefined)[] = this.inOrder();
    while (next.length < capacity) next.push(undefined);
    this.ring = next;
    this.head = 0;
  }
}
