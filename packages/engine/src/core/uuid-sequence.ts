import { randomUUID } from 'node:crypto';

/**
 * Unique UUID-shaped ids, cheaply: a random v4 UUID's first four groups (fixed per sequence) and a
 * 48-bit counter as the fifth. Unique within the process and unlikely to meet another process's; not
 * secret (whatever must not be guessed, such as a channel's access key, is drawn at random).
 * randomUUID() is dearer and builds its string from some twenty pieces, which every Map lookup and
 * frame write then has to flatten.
 */
export class UuidSequence {
  readonly prefix = randomUUID().slice(0, 24);
  private counter = 0;

  /** The next id and its sequence number. */
  next(): string {
    return this.prefix + (this.counter++).toString(16).padStart(12, '0');
  }

  /** How many ids were issued. */
  get issued(): number {
    return this.counter;
  }

  /** The sequence number of an id this sequence issued, else undefined. */
  seqOf(id: string): number | undefined {
    if (id.length !== 36 || !id.startsWith(this.prefix)) return undefined;
    // The counter's 12 lowercase hex digits, read in place: about half the time of a regular expression
    // and parseInt on slices of the id (a microbenchmark: 166-198 -> 70-83 ns per id).
    let seq = 0;
    for (let i = 24; i < 36; i++) {
      const c = id.charCodeAt(i);
      const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
      if (digit < 0) return undefined;
      seq = seq * 16 + digit;
    }
    return seq < this.counter ? seq : undefined;
  }
}
