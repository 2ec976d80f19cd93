/**
 * Values keyed by sequence number (ids issued in increasing order: invocations, channels, a worker's
 * calls), for per-request bookkeeping. A `Map` with an insert and a delete per request keeps
 * reallocating its hash table, and V8 leaves each replaced table (in the old generation, once the
 * map is long-lived) pointing at its successor and at the entries of the moment: young per-request
 * objects reachable from that garbage survive scavenges and get promoted, and every promoted request
 * then drags the next ones along. With a larger heap (1,000 routes) the engine fell into that mode
 * and spent a third of its time in garbage collection. A ring of slots indexed by the sequence
 * number is written in place; the rare value that outlives `slots` later insertions (a slow call, a
 * long stream) moves to an overflow map.
 */
export class SequenceTable<T> {
  private readonly values: (T | undefined)[];
  private readonly seqs: Float64Array;
  private readonly overflow = new Map<number, T>();
  private readonly mask: number;
  private count = 0;

  /** `slots`: a power of two; each takes 16 bytes. */
  constructor(slots = 16_384) {
    if (!Number.isInteger(slots) || slots < 1 || (slots & (slots - 1)) !== 0) throw new RangeError(`slots must be a power of two, not ${slots}`);
    this.values = new Array(slots).fill(undefined);
    this.seqs = new Float64Array(slots).fill(-1);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count;
  }

  set(seq: number, value: T): void {
    const slot = seq & this.mask;
    const occupant = this.values[slot];
    if (occupant !== undefined) this.overflow.set(this.seqs[slot] as number, occupant);
    this.values[slot] = value;
    this.seqs[slot] = seq;
    this.count++;
  }

  get(seq: number): T | undefined {
    const slot = seq & this.mask;
    if (this.seqs[slot] === seq) return this.values[slot];
    return this.overflow.size === 0 ? undefined : this.overflow.get(seq);
  }

  delete(seq: number): boolean {
    const slot = seq & this.mask;
    if (this.seqs[slot] === seq) {
      this.values[slot] = undefined;
      this.seqs[slot] = -1;
    } else if (this.overflow.size === 0 || !this.overflow.delete(seq)) {
      return false;
    }
    this.count--;
    return true;
  }

  /** Every value, oldest slots first (a snapshot: the table may change while it is used). */
  snapshot(): T[] {
    const out = [...this.overflow.values()];
    if (this.count > out.length) for (const value of this.values) if (value !== undefined) out.push(value);
    return out;
  }
}
