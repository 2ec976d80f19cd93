import { randomUUID } from 'node:crypto';

const HEX12 = /^[0-9a-f]{12}$/;

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
    if (id.length !== 36 || !id.startsWith(this.prefix) || !HEX12.test(id.slice(24))) return undefined;
    const seq = Number.parseInt(id.slice(24), 16);
    return Number.isSafeInteger(seq) && seq < this.counter ? seq : undefined;
  }
}
