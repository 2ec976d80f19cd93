import { SequenceTable } from '@flint/protocol';
import type { Channel, ConsumeMessage } from 'amqplib';
import { describeError } from '../../shared/files.js';
import type { ConsumeOptions, DeliveryHandler, Settlement } from '../types.js';
import { type Envelope, decode, toDelivery } from './codec.js';

/** What a consumer needs from its backend. */
export interface ConsumerHost {
  /** A new channel on the live connection (rejects with queue_unavailable while down). */
  channel(): Promise<Channel>;
  onUp(listener: () => void): () => void;
  ensureQueue(queue: string): Promise<string>;
  /** Stores `env` again in `queue`, after `delayMs` (0: now), confirmed. */
  republish(queue: string, env: Envelope, delayMs: number): Promise<void>;
  deadLetter(queue: string, env: Envelope): Promise<void>;
  acquireFifo(queue: string, owner: object): Promise<boolean>;
  releaseFifo(queue: string, owner: object): Promise<void>;
  retryMs: number;
  fifoPrefetch: number;
  warn(message: string): void;
}

/** A message received on the consumer's channel, not acked yet. */
interface Held {
  msg: ConsumeMessage;
  env: Envelope;
  channel: Channel;
}

/** A FIFO group in this consumer: its messages in order; while busy its head is in hand or waiting to be retried. */
interface Lane {
  name: string;
  items: Held[];
  busy: boolean;
  queued: boolean;
  /** The attempt number of the head's next delivery, once it was retried in place. */
  headAttempt?: number;
}

interface InHand {
  /** Its key in `inHand`. */
  seq: number;
  held: Held;
  attempt: number;
  settled: boolean;
  timer: NodeJS.Timeout;
  lane: Lane | undefined;
}

/**
 * One consumer of one queue, on a channel of its own with manual acks.
 *
 * Plain queues: prefetch = `concurrency`, each message goes straight to the handler. A retry, a defer
 * and an expired visibility timeout store a copy (attempts in a header) in the queue's delay queue or
 * back in the queue, confirmed, and only then ack the delivery: at-least-once, never lost.
 *
 * FIFO queues (messages with a group): order per group needs one place that sees every message, so a
 * FIFO consumer first becomes the queue's single active consumer: it owns an exclusive lock queue
 * (`<prefix>.lock.<queue>`, which the broker drops with its connection), the others stand by and try
 * again every `fifo_standby_retry_ms`. This works whatever arguments the queue was declared with (a
 * queue's `x-single-active-consumer` cannot be added once the queue exists, and queues are created by
 * whoever uses them first). The active consumer prefetches `fifo_prefetch` messages and schedules them
 * per group in the adapter, as the builtin backend does: one message of a group in hand at a time, the
 * later ones held unacked. A retried or timed-out head is kept unacked and handed out again after its
 * delay, so its group waits and the others go on; if the consumer or its connection dies meanwhile,
 * the broker puts every unacked message back in its original place, so the order survives a crash
 * (the attempt count kept in memory restarts from the stored one then). Rejected alternative:
 * consistent-hash sharding into sub-queues, which needs the plugin and fixed shard counts.
 *
 * A channel or connection lost drops everything held (the broker requeues it); settles of deliveries
 * from the lost channel are ignored, and the consumer re-attaches when the connection is back.
 */
export class RabbitConsumer {
  private channel: Channel | undefined;
  private consumerTag: string | undefined;
  private stopped = false;
  private attaching = false;
  private readonly lanes = new Map<string, Lane>();
  private ready: Lane[] = [];
  private loose: Held[] = [];
  /**
   * Deliveries handed to the handler and not settled, by a number of their own: a SequenceTable, as a
   * Set with an add and a delete per message would drag every message into the old generation.
   */
  private readonly inHand = new SequenceTable<InHand>(1024);
  private nextDelivery = 0;
  /** FIFO heads waiting in memory for their retry delay. */
  private waitingRetry = 0;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private reattachTimer: NodeJS.Timeout | undefined;
  private readonly offUp: () => void;

  constructor(
    private readonly host: ConsumerHost,
    readonly queue: string,
    private readonly options: ConsumeOptions,
    private readonly handler: DeliveryHandler,
  ) {
    this.offUp = host.onUp(() => void this.attach());
    void this.attach();
  }

  /** For stats: held here unacked and not in hand (waiting), in hand, waiting in memory for a retry. */
  counts(): { waiting: number; inFlight: number; delayed: number } {
    let held = this.loose.length;
    for (const lane of this.lanes.values()) held += lane.items.length - (lane.busy ? 1 : 0);
    return { waiting: held, inFlight: this.inHand.size, delayed: this.waitingRetry };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.offUp();
    clearTimeout(this.reattachTimer);
    const ch = this.channel;
    if (ch && this.consumerTag) await ch.cancel(this.consumerTag).catch(() => {});
    // Held messages and heads waiting for a retry go back to the queue, in place, for the next consumer.
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    const inHandMsgs = new Set(this.inHand.snapshot().map((e) => e.held.msg));
    const back: Held[] = [...this.loose];
    for (const lane of this.lanes.values()) back.push(...lane.items.filter((h) => !inHandMsgs.has(h.msg)));
    for (const h of back) if (h.channel === ch) settleOnChannel(() => h.channel.nack(h.msg, false, true));
    this.loose = [];
    this.lanes.clear();
    this.ready = [];
    this.waitingRetry = 0;
    if (this.options.fifo) await this.host.releaseFifo(this.queue, this).catch(() => {});
    this.closeWhenIdle();
  }

  // ---- attaching ----

  private async attach(): Promise<void> {
    if (this.stopped || this.attaching || this.channel) return;
    this.attaching = true;
    try {
      const name = await this.host.ensureQueue(this.queue);
      if (this.options.fifo && !(await this.host.acquireFifo(this.queue, this))) {
        this.reattachLater();
        return;
      }
      if (this.stopped) return;
      const ch = await this.host.channel();
      ch.on('close', () => this.lost(ch));
      await ch.prefetch(this.options.fifo ? Math.max(this.options.concurrency, this.host.fifoPrefetch) : this.options.concurrency);
      this.channel = ch;
      const { consumerTag } = await ch.consume(name, (msg) => this.receive(ch, msg), { noAck: false });
      this.consumerTag = consumerTag;
      if (this.stopped) await ch.cancel(consumerTag).catch(() => {});
    } catch {
      // Down: the onUp listener attaches again. Up (a refused channel): try again shortly.
      this.reattachLater();
    } finally {
      this.attaching = false;
    }
  }

  private reattachLater(): void {
    if (this.stopped) return;
    clearTimeout(this.reattachTimer);
    this.reattachTimer = setTimeout(() => void this.attach(), this.host.retryMs);
    this.reattachTimer.unref?.();
  }

  /** The channel is gone: the broker requeued everything unacked; forget it and attach again. */
  private lost(ch: Channel): void {
    if (this.channel !== ch) return;
    this.channel = undefined;
    this.consumerTag = undefined;
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    for (const entry of this.inHand.snapshot()) {
      entry.settled = true;
      clearTimeout(entry.timer);
      this.inHand.delete(entry.seq);
    }
    this.lanes.clear();
    this.ready = [];
    this.loose = [];
    this.waitingRetry = 0;
    if (!this.stopped) {
      void this.host.releaseFifo(this.queue, this).catch(() => {});
      this.reattachLater();
    }
  }

  private closeWhenIdle(): void {
    if (!this.stopped || this.inHand.size > 0) return;
    const ch = this.channel;
    this.channel = undefined;
    void ch?.close().catch(() => {});
  }

  // ---- delivering ----

  private receive(ch: Channel, msg: ConsumeMessage | null): void {
    if (msg === null) {
      // Cancelled by the broker (the queue was deleted): attach again, which declares it anew.
      void ch.close().catch(() => {});
      return;
    }
    let env: Envelope;
    try {
      env = decode(msg, this.queue);
    } catch (err) {
      // Not a Flint message (a foreign publisher): a dead letter, not a poison pill.
      const text = msg.content.toString();
      const id = String(msg.properties.messageId ?? `foreign-${msg.fields.deliveryTag}`);
      this.host
        .deadLetter(this.queue, {
          id,
          data: text,
          attempts: 0,
          publishedAt: Date.now(),
          error: `not a Flint message: ${describeError(err)}`,
          failedAt: Date.now(),
        })
        .then(
          () => settleOnChannel(() => ch.ack(msg)),
          () => void ch.close().catch(() => {}),
        );
      return;
    }
    const held: Held = { msg, env, channel: ch };
    if (this.options.fifo && env.group !== undefined) {
      const lane = this.laneOf(env.group);
      lane.items.push(held);
      this.queueLane(lane);
    } else this.loose.push(held);
    this.dispatch();
  }

  private laneOf(group: string): Lane {
    let lane = this.lanes.get(group);
    if (!lane) {
      lane = { name: group, items: [], busy: false, queued: false };
      this.lanes.set(group, lane);
    }
    return lane;
  }

  private queueLane(lane: Lane): void {
    if (lane.busy || lane.queued || lane.items.length === 0) return;
    lane.queued = true;
    this.ready.push(lane);
  }

  private dispatch(): void {
    while (!this.stopped && this.inHand.size < this.options.concurrency) {
      // Alternate between ungrouped messages and ready groups so that neither starves the other.
      const lane = this.ready.length > 0 && (this.loose.length === 0 || this.ready.length >= this.loose.length) ? this.ready.shift() : undefined;
      if (lane) {
        lane.queued = false;
        lane.busy = true;
        const head = lane.items[0] as Held;
        this.deliver(head, lane.headAttempt ?? head.env.attempts + 1, lane);
        continue;
      }
      const held = this.loose.shift();
      if (!held) return;
      this.deliver(held, held.env.attempts + 1, undefined);
    }
  }

  private deliver(held: Held, attempt: number, lane: Lane | undefined): void {
    const entry: InHand = { seq: this.nextDelivery++, held, attempt, settled: false, lane, timer: undefined as unknown as NodeJS.Timeout };
    entry.timer = setTimeout(
      () => this.settle(entry, { type: 'retry', delayMs: 0, error: 'visibility timeout: the handler did not answer in time' }),
      this.options.visibilityTimeoutMs,
    );
    entry.timer.unref?.();
    this.inHand.set(entry.seq, entry);
    try {
      this.handler(toDelivery(held.env, attempt), (s) => this.settle(entry, s));
    } catch (err) {
      this.settle(entry, { type: 'retry', delayMs: 0, error: describeError(err) });
    }
  }

  private settle(entry: InHand, s: Settlement): void {
    if (entry.settled) return; // settled already, its lease expired, or its channel is gone
    entry.settled = true;
    clearTimeout(entry.timer);
    this.inHand.delete(entry.seq);
    const { held, lane, attempt } = entry;
    const ch = held.channel;
    switch (s.type) {
      case 'ack':
        settleOnChannel(() => ch.ack(held.msg));
        this.release(lane);
        break;
      case 'dead':
        this.carryOut(held, this.host.deadLetter(this.queue, { ...held.env, attempts: attempt, error: s.error, failedAt: Date.now() }), lane);
        break;
      case 'retry':
      case 'defer': {
        const next = s.type === 'retry' ? attempt + 1 : attempt;
        if (lane) this.retryInPlace(lane, next, s.delayMs);
        else this.carryOut(held, this.host.republish(this.queue, { ...held.env, attempts: next - 1 }, s.delayMs), undefined);
        break;
      }
    }
    this.dispatch();
    this.closeWhenIdle();
  }

  /** Acks once the copy is stored; a copy that cannot be stored closes the channel, so the broker requeues the original. */
  private carryOut(held: Held, stored: Promise<void>, lane: Lane | undefined): void {
    stored.then(
      () => {
        settleOnChannel(() => held.channel.ack(held.msg));
        if (this.channel === held.channel) this.release(lane);
        this.dispatch();
      },
      (err) => {
        this.host.warn(`rabbitmq queue ${this.queue}: could not store a settled message (${describeError(err)}); it goes back to the queue`);
        void held.channel.close().catch(() => {});
      },
    );
  }

  /** A FIFO head to go again after `delayMs`: it stays unacked at the head of its group, which waits meanwhile. */
  private retryInPlace(lane: Lane, nextAttempt: number, delayMs: number): void {
    lane.headAttempt = nextAttempt;
    this.waitingRetry++;
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.waitingRetry--;
      lane.busy = false;
      this.queueLane(lane);
      this.dispatch();
    }, delayMs);
    this.retryTimers.add(timer);
  }

  private release(lane: Lane | undefined): void {
    if (!lane) return;
    lane.items.shift();
    lane.busy = false;
    lane.headAttempt = undefined;
    this.queueLane(lane);
    if (lane.items.length === 0 && !lane.queued) this.lanes.delete(lane.name);
  }
}

/**
 * Acks or nacks on a channel that may be closing (the consumer stopped, the connection dropped): amqplib
 * then throws at once. Nothing is lost: the broker puts every message not acked on a closed channel
 * back in its queue, to be delivered again (at least once).
 */
function settleOnChannel(settle: () => void): void {
  try {
    settle();
  } catch {
    // The channel is closing: see above.
  }
}
