import { createHash } from 'node:crypto';

/** RabbitMQ names are short strings: at most 255 bytes of UTF-8. */
const MAX_NAME_BYTES = 255;

/**
 * Line breaks: RabbitMQ declares a queue or an exchange whose name has a CR or an LF in it, then answers
 * 404 NOT_FOUND to a publish to it (the other control characters work: checked one by one).
 */
const LINE_BREAK = /[\r\n]/;

/**
 * The broker-side names of one adapter's objects. A Flint name is used as it is after a kind segment
 * (`<prefix>.q.<name>`), so names with separators or unicode stay distinct and readable in the broker's
 * tools; a name too long for the broker, or with a line break in it, becomes a hash.
 */
export class Names {
  constructor(readonly prefix: string) {}

  queue(name: string): string {
    return this.fit(`${this.prefix}.q.`, name);
  }
  dlq(name: string): string {
    return this.fit(`${this.prefix}.dlq.`, name);
  }
  /** A queue's delay queue for one bucket: its messages dead-letter back into the queue after `bucketMs`. */
  delay(name: string, bucketMs: number): string {
    return this.fit(`${this.prefix}.delay.${bucketMs}.`, name);
  }
  topic(topic: string): string {
    return this.fit(`${this.prefix}.t.`, topic);
  }
  /** A topic's delay queue: dead-letters into the topic's exchange, so the queues bound then get the message. */
  topicDelay(topic: string, bucketMs: number): string {
    return this.fit(`${this.prefix}.tdelay.${bucketMs}.`, topic);
  }
  /** The exclusive queue whose owner is the one active FIFO consumer of a queue. */
  fifoLock(name: string): string {
    return this.fit(`${this.prefix}.lock.`, name);
  }
  /** Where the adapter writes down every queue and exchange it declared (see registry.ts). */
  registry(): string {
    return `${this.prefix}.registry`;
  }

  private fit(head: string, name: string): string {
    const full = head + name;
    if (Buffer.byteLength(full) <= MAX_NAME_BYTES && !LINE_BREAK.test(name)) return full;
    return `${head}#${createHash('sha256').update(name).digest('hex')}`;
  }
}

/**
 * Delays are rounded up to a bucket (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k ms, at least 10 ms), so a
 * message is never early, at most 25% late, and a queue has at most ten delay queues per decade of delays.
 */
const STEPS = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8];

export function delayBucket(delayMs: number): number {
  const ms = Math.max(10, Math.ceil(delayMs));
  let scale = 10 ** Math.floor(Math.log10(ms));
  for (;;) {
    for (const step of STEPS) {
      const bucket = Math.round(step * scale);
      if (bucket >= ms) return bucket;
    }
    scale *= 10;
  }
}

/**
 * A delay queue is deleted by the broker once unused (`x-expires`) for long enough that every message
 * in it has long moved on: twice its delay plus a minute, counted from its last declaration.
 */
export function delayQueueExpiry(bucketMs: number): number {
  return bucketMs * 2 + 60_000;
}
