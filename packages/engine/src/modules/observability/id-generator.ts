import { randomFillSync } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

/** Random bytes drawn at once: 2,048 span ids' worth (each draw is a system call). */
const POOL_BYTES = 16384;

/**
 * Trace and span ids cut from a pool of random hex text refilled from the system's CSPRNG, rather than
 * built byte by byte for each span (the SDK's default generator was a tenth of the tracing cost). An
 * all-zero id, which W3C forbids, is drawn again.
 */
export class PooledIdGenerator implements IdGenerator {
  private hex = '';
  private offset = 0;
  private readonly bytes = Buffer.allocUnsafe(POOL_BYTES);

  generateTraceId(): string {
    return this.take(32);
  }

  generateSpanId(): string {
    return this.take(16);
  }

  private take(length: number): string {
    if (this.offset + length > this.hex.length) {
      randomFillSync(this.bytes);
      this.hex = this.bytes.toString('hex');
      this.offset = 0;
    }
    const id = this.hex.substring(this.offset, this.offset + length);
    this.offset += length;
    // An id starting with a digit other than 0 is not all zero: the check is rarely needed.
    return id.charCodeAt(0) === ZERO && ALL_ZERO.test(id) ? this.take(length) : id;
  }
}

const ALL_ZERO = /^0+$/;
const ZERO = 48;
