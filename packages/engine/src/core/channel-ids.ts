import { randomFillSync } from 'node:crypto';
import { UuidSequence } from './uuid-sequence.js';

/** Keys of this many most recent channels are kept, so a late socket can be told from a stranger. */
const RING_SLOTS = 16_384;
const KEY_BYTES = 16;
/** Random key bytes are drawn this many slots at a time. */
const FILL_SLOTS = 256;

export interface IssuedChannel {
  id: string;
  key: string;
  seq: number;
}

/**
 * Issues channel ids and access keys, and remembers recently closed channels without keeping an
 * object per channel: an id comes from a UuidSequence (a random prefix plus a sequence number), and the
 * 16 random key bytes of the last RING_SLOTS channels live in one preallocated buffer (with the time
 * each was closed). One HTTP request takes a channel, so per-channel garbage that outlives the
 * request (it would be promoted to the old generation) costs more than everything else it does.
 */
export class ChannelIds {
  private readonly ids = new UuidSequence();
  private readonly keys = Buffer.allocUnsafeSlow(RING_SLOTS * KEY_BYTES);
  private readonly closedAt = new Float64Array(RING_SLOTS);

  issue(): IssuedChannel {
    const seq = this.ids.issued;
    const id = this.ids.next();
    const slot = seq % RING_SLOTS;
    if (slot % FILL_SLOTS === 0) randomFillSync(this.keys, slot * KEY_BYTES, FILL_SLOTS * KEY_BYTES);
    this.closedAt[slot] = 0;
    const offset = slot * KEY_BYTES;
    return { id, key: this.keys.toString('hex', offset, offset + KEY_BYTES), seq };
  }

  /** The sequence number of a channel id this issued, else undefined. */
  seqOf(id: string): number | undefined {
    return this.ids.seqOf(id);
  }

  /** Records when the channel `seq` was closed. */
  closed(seq: number, at: number): void {
    if (this.ids.issued - seq <= RING_SLOTS) this.closedAt[seq % RING_SLOTS] = at;
  }

  /** True when `id`/`key` name a channel of this process that was closed at or after `since` (epoch ms). */
  closedSince(id: string, key: string | null, since: number): boolean {
    const seq = key === null ? undefined : this.ids.seqOf(id);
    if (seq === undefined || this.ids.issued - seq > RING_SLOTS) return false;
    const slot = seq % RING_SLOTS;
    const at = this.closedAt[slot] as number;
    return at > 0 && at >= since && this.keys.toString('hex', slot * KEY_BYTES, (slot + 1) * KEY_BYTES) === key;
  }
}
