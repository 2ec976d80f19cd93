import type { AdapterLog } from '../../shared/log.js';
import type { ConsumeOptions, Consumer, Delivery, DeliveryHandler, Settlement } from '../types.js';

/** A message as one fetch leased it to this consumer. */
export interface Leased {
  delivery: Delivery;
  /** The delivery's token: its settle counts only while no later delivery of the message exists. */
  token: string;
}

/** What a consumer needs from its backend. */
export interface ConsumerHost {
  /** Leases up to `n` messages; `nextDueMs` is the time until the queue's next delayed message or lease is due (-1: none). */
  fetch(queue: string, n: number, leaseMs: number): Promise<{ messages: Leased[]; nextDueMs: number }>;
  settle(queue: string, leased: Leased, settlement: Settlement): Promise<void>;
  /** Calls `wake` whenever the queue may have something new to deliver (see WakeChannels). */
  listen(queue: string, wake: () => void): { subscribed: Promise<void>; stop: () => void };
  readonly pollIntervalMs: number;
  readonly logger: AdapterLog | undefined;
  /** False once the backend closes: failures of settles in hand are then expected. */
  readonly open: boolean;
}

/**
 * One consumer of a queue in this engine. It fetches (one script call leasing up to the room it has,
 * see FETCH in scripts.ts) when woken by a publish, when a due time it was told of comes, when a delivery
 * is settled and on a slow poll, never more than one fetch at a time. Idle, it sends nothing but the poll.
 */
export class RedisConsumer implements Consumer {
  private inFlight = 0;
  private stopped = false;
  private fetching: Promise<void> | undefined;
  private again = false;
  private dueTimer: NodeJS.Timeout | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  private readonly poll: NodeJS.Timeout;
  private readonly stopWake: () => void;
  private failing = false;

  constructor(
    private readonly host: ConsumerHost,
    private readonly queue: string,
    private readonly options: ConsumeOptions,
    private readonly handler: DeliveryHandler,
  ) {
    const wake = host.listen(queue, () => this.pump());
    this.stopWake = wake.stop;
    this.poll = setInterval(() => this.pump(), host.pollIntervalMs);
    this.poll.unref?.();
    this.pump();
    // What was published before the wake-ups reached this engine is found by one more fetch.
    void wake.subscribed.then(() => this.pump());
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.poll);
    this.clearDue();
    this.stopWake();
    await this.fetching;
  }

  /** Fetches if there is room, or once more after the fetch under way. */
  private pump(): void {
    if (this.stopped) return;
    if (this.fetching) {
      this.again = true;
      return;
    }
    const room = this.options.concurrency - this.inFlight;
    if (room <= 0) return;
    this.fetching = this.fetch(room).finally(() => {
      this.fetching = undefined;
      if (this.again) {
        this.again = false;
        this.pump();
      }
    });
  }

  private async fetch(room: number): Promise<void> {
    let batch: Awaited<ReturnType<ConsumerHost['fetch']>>;
    try {
      batch = await this.host.fetch(this.queue, room, this.options.visibilityTimeoutMs);
    } catch (err) {
      if (!this.failing && !this.stopped && this.host.open) {
        this.failing = true;
        this.host.logger?.warn(`queue ${this.queue}: fetching failed (${(err as Error).message}); retrying every ${this.host.pollIntervalMs} ms`);
      }
      return;
    }
    if (this.failing) {
      this.failing = false;
      this.host.logger?.info(`queue ${this.queue}: fetching works again`);
    }
    if (this.stopped) {
      // Stopped while the fetch was under way: hand the messages back at once, no attempt counted.
      for (const leased of batch.messages) void this.host.settle(this.queue, leased, { type: 'defer', delayMs: 0 }).catch(() => {});
      return;
    }
    this.armDue(batch.nextDueMs);
    for (const leased of batch.messages) this.deliver(leased);
  }

  private deliver(leased: Leased): void {
    this.inFlight++;
    let settled = false;
    let expired = false;
    // Past its lease the delivery no longer takes a slot: the message goes again (to any consumer).
    const lease = setTimeout(() => {
      expired = true;
      this.inFlight--;
      this.pump();
    }, this.options.visibilityTimeoutMs);
    lease.unref?.();
    const settle = (settlement: Settlement) => {
      if (settled) return;
      settled = true;
      clearTimeout(lease);
      if (!expired) this.inFlight--;
      this.host.settle(this.queue, leased, settlement).catch((err: Error) => {
        if (this.host.open)
          this.host.logger?.warn(`queue ${this.queue}: settling message ${leased.delivery.id} failed (${err.message}); it is delivered again after its lease`);
      });
      // Issued after the settle on the same connection, so the fetch sees its effect.
      this.pump();
    };
    try {
      this.handler(leased.delivery, settle);
    } catch (err) {
      settle({ type: 'retry', delayMs: 0, error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Fetches again when the queue's next delayed message or lease is due. */
  private armDue(ms: number): void {
    if (ms < 0) return;
    // +1: Redis's clock decides, and a timer a hair early would find nothing due yet.
    const at = Date.now() + ms + 1;
    if (this.dueTimer && this.dueAt <= at) return;
    this.clearDue();
    this.dueAt = at;
    this.dueTimer = setTimeout(() => {
      this.dueTimer = undefined;
      this.dueAt = Number.POSITIVE_INFINITY;
      this.pump();
    }, ms + 1);
    this.dueTimer.unref?.();
  }

  private clearDue(): void {
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    this.dueAt = Number.POSITIVE_INFINITY;
  }
}
