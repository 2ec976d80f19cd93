import { randomFillSync } from 'node:crypto';

/** Random bytes drawn at once: 2,048 span ids' worth (each draw is a system call). */
const POOL_BYTES = 16384;

/**
 * Trace and span ids cut from a pool of random bytes refilled from the system's CSPRNG, rather than built
 * byte by byte for each span (the SDK's default generator was a tenth of the tracing cost). `draw` hands
 * out the offset of fresh bytes; the caller reads them as hex text (`hexAt`, for traceparents) and as
 * 32-bit words (`wordAt`, what a span keeps: numbers live in the span object itself, where a string would
 * be a new object for the garbage collector to move for as long as the span is stored). What is read must
 * be read before the next `draw`, which may refill the pool. W3C forbids all-zero ids: `draw` never hands
 * out an id whose bytes are all zero.
 */
export class PooledIdGenerator {
  private readonly bytes = Buffer.allocUnsafe(POOL_BYTES);
  /** The pool's words, read without Buffer's argument checks. */
  private readonly view = new DataView(this.bytes.buffer, this.bytes.byteOffset, POOL_BYTES);
  private hex = '';
  private offset = POOL_BYTES;

  /**
   * The offset of `length` fresh random bytes: a span id (8), a trace id and a span id (24: the trace's
   * 16, then the span's 8). Neither id is all zero.
   */
  draw(length: 8 | 24): number {
    for (;;) {
      if (this.offset + length > POOL_BYTES) {
        randomFillSync(this.bytes);
        this.hex = this.bytes.toString('hex');
        this.offset = 0;
      }
      const at = this.offset;
      this.offset += length;
      if (length === 8 ? !this.isZero(at, 8) : !this.isZero(at, 16) && !this.isZero(at + 16, 8)) return at;
    }
  }

  /** The `length` bytes at `offset` as lower-case hex text. */
  hexAt(offset: number, length: number): string {
    return this.hex.substring(offset * 2, (offset + length) * 2);
  }

  /** The 4 bytes at `offset` as a signed 32-bit integer, big-endian (as the hex text reads). */
  wordAt(offset: number): number {
    return this.view.getInt32(offset);
  }

  private isZero(offset: number, length: number): boolean {
    for (let i = offset; i < offset + length; i += 4) if (this.view.getInt32(i) !== 0) return false;
    return true;
  }
}

/** A 32-bit word (as `wordAt` reads it) as 8 hex digits. */
export function wordHex(word: number): string {
  return (word >>> 0).toString(16).padStart(8, '0');
}

/** 8 hex digits as a signed 32-bit word, as `wordAt` would read their bytes (NaN-free: non-hex text gives 0). */
export function hexWord(hex: string, from: number): number {
  const n = Number.parseInt(hex.substring(from, from + 8), 16);
  return Number.isNaN(n) ? 0 : n | 0;
}
