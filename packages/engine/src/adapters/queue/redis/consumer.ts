import type { AdapterLog } from '../../shared/log.js';
import type { ConsumeOptions, Consumer, Delivery, DeliveryHandler, Settlement } from '../types.js';

/** A message as one fetch leased it to this consumer. */
export interface Leased {
  delivery: Delivery;
  /** The delivery's token: its settle counts only while no later delivery of the message exists. */
  token: string;
}

/** What one fetch leased: the messages, and the time until the queue's next delayed message or lease is due (-1: none). */
export interface Batch {
  messages: Leased[];
  nextDueMs: number;
}

export interface PendingSettle {
  leased: Leased;
  settlement: Settlement;
}

/** What a consumer needs from its backend. */
export interface ConsumerHost {
  /** Leases up to `n` messages. */
  fetch(queue: string, n: number, leaseMs: number): Promise<Batch>;
  /** Settles deliveries, then leases up to `n` messages (0: none), in one call. */
  settle(queue: string, settles: PendingSettle[], n: number, leaseMs: number): Promise<Batch>;
  /**
   * When a publish of this engine is queued or under way, calls `then` once it has been answered and returns
   * true; else returns false. Settles wait for it: Redis answers a connection's commands in order, so a
   * settle sent just before a publish would delay that publish's deliveries by its own run.
   */
  afterPublish(then: () => void): boolean;
  /** Calls `wake` whenever the queue may have something new to deliver (see the backend's wake channels). */
  listen(queue: string, wake: () => void): { subscribed: Promise<void>; stop: () => void };
  readonly pollIntervalMs: number;
  readonly logger: AdapterLog | undefined;
  /** False once the backend closes: failures of settles in hand are then expected. */
  readonly open: boolean;
}

/**
 * One consumer of a queue in this engine. Fetching is one script call leasing up to the room it has (FETCH
 * in scripts.ts); every room a fetch may fill is reserved while it is under way, so several may be (the
 * concurrency is never exceeded). It fetches:
 * - with every batch of settles (the settles of one turn of the event loop go out in one call, which then
 *   fetches into the room they made: no round trip of its own; they wait for a publish of this engine under
 *   way, see `afterPublish`);
 * - piggy-backed on a publish of this engine to its queue while it is idle (see `claim`);
 * - when woken by a publish of another engine, when a due time it was told of comes, and on a slow poll.
 * A fetch that leaves room unfilled marks the queue idle in Redis, so the next publish wakes its consumers
 * (`wake` in scripts.ts); a queue that stays busy sends no wake-ups. Idle, it sends nothing but the poll.
 */
export class RedisConsumer implements Consumer {
  private inFlight = 0;
  /** Room taken by fetches under way. */
  private reserved = 0;
  /** Calls under way (fetches and settles): `stop` waits for them. */
  private calls = 0;
  private fetches = 0;
  /** Woken while a fetch was under way: that fetch may have run before what woke it, so fetch once more. */
  private again = false;
  /**
   * The last fetch left room unfilled (the queue had nothing more, and Redis marks it idle) and nothing woke
   * this consumer since: settles then go without a fetch, as a wake-up or a publish's claim brings the next.
   */
  private drained = false;
  private stopped = false;
  private pending: PendingSettle[] = [];
  private flushQueued = false;
  private idle: (() => void)[] = [];
  private dueTimer: NodeJS.Timeout | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  private readonly poll: NodeJS.Timeout;
  private readonly stopWake: () => void;
  private failing = false;

  constructor(
    private readonly host: ConsumerHost,
    readonly queue: string,
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
    if (this.pending.length > 0) this.flush();
    if (this.calls > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /**
   * For a publish of this engine to the queue: when the consumer is idle (room, and nothing under way), it
   * reserves its room and the publish's script fetches into it right after storing (`received` takes the
   * reply, `released` gives the room back when it did not run). Returns the room reserved (0: none).
   */
  claim(): number {
    // Settles waiting to go out do not stop a claim: they fetch only into the room left after it.
    if (this.stopped || this.fetches > 0) return 0;
    const n = this.room();
    if (n <= 0) return 0;
    this.begin(n);
    return n;
  }

  /** A claimed fetch's reply. */
  received(batch: Batch, reserved: number): void {
    this.end(reserved);
    if (this.stopped) {
      // Stopped while the fetch was under way: hand the messages back at once, no attempt counted.
      const back = batch.messages.map((leased) => ({ leased, settlement: { type: 'defer', delayMs: 0 } as Settlement }));
      if (back.length > 0) void this.host.settle(this.queue, back, 0, 0).catch(() => {});
      return;
    }
    if (reserved > 0) this.drained = batch.messages.length < reserved;
    this.armDue(batch.nextDueMs);
    for (const leased of batch.messages) this.deliver(leased);
    if (this.again) this.pump();
  }

  /** A claimed fetch that did not run (its call failed, or was refused). */
  released(reserved: number): void {
    this.end(reserved);
    // Whatever woke this consumer meanwhile was left to the claimed fetch.
    this.pump();
  }

  get visibilityTimeoutMs(): number {
    return this.options.visibilityTimeoutMs;
  }

  private room(): number {
    return this.options.concurrency - this.inFlight - this.reserved;
  }

  private begin(n: number): void {
    this.calls++;
    if (n > 0) {
      this.fetches++;
      this.reserved += n;
      this.again = false;
    }
  }

  private end(n: number): void {
    if (n > 0) {
      this.fetches--;
      this.reserved -= n;
    }
    this.calls--;
    if (this.calls === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Fetches if there is room and no fetch under way (else once more after it); settles waiting to go out fetch instead. */
  private pump(): void {
    if (this.stopped) return;
    this.drained = false;
    if (this.pending.length > 0) return this.queueFlush();
    if (this.fetches > 0) {
      this.again = true;
      return;
    }
    const n = this.room();
    if (n <= 0) return;
    this.begin(n);
    this.host.fetch(this.queue, n, this.options.visibilityTimeoutMs).then(
      (batch) => {
        if (this.failing) {
          this.failing = false;
          this.host.logger?.info(`queue ${this.queue}: fetching works again`);
        }
        this.received(batch, n);
      },
      (err: Error) => {
        if (!this.failing && !this.stopped && this.host.open) {
          this.failing = true;
          this.host.logger?.warn(`queue ${this.queue}: fetching failed (${err.message}); retrying every ${this.host.pollIntervalMs} ms`);
        }
        // Not `released`: a failing Redis is retried by the poll, not at once.
        this.end(n);
      },
    );
  }

  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    // At the end of this turn of the event loop (the settles of every handler that finished in it go
    // together), or once the publish this turn sent is answered.
    setImmediate(this.flushWhenFree);
  }

  private readonly flushWhenFree = (): void => {
    if (this.stopped || !this.host.afterPublish(this.flushNow)) this.flush();
  };

  private readonly flushNow = (): void => this.flush();

  /** Sends the settles waiting, with a fetch into the room there is (the settles run first, in the same script). */
  private flush(): void {
    this.flushQueued = false;
    const settles = this.pending;
    if (settles.length === 0) return;
    this.pending = [];
    // A FIFO ack may free its group's next message, and a retry puts one back: those fetch even when drained.
    const fetch = !this.stopped && (!this.drained || this.options.fifo || settles.some((s) => s.settlement.type === 'retry' || s.settlement.type === 'defer'));
    const n = fetch ? Math.max(0, this.room()) : 0;
    this.begin(n);
    this.host.settle(this.queue, settles, n, this.options.visibilityTimeoutMs).then(
      (batch) => this.received(batch, n),
      (err: Error) => {
        if (this.host.open)
          for (const { leased } of settles)
            this.host.logger?.warn(
              `queue ${this.queue}: settling message ${leased.delivery.id} failed (${err.message}); it is delivered again after its lease`,
            );
        this.end(n);
      },
    );
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
      this.pending.push({ leased, settlement });
      if (this.stopped) this.flush();
      else this.queueFlush();
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
