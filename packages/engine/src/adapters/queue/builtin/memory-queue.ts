import type { ConsumeOptions, DeadLetter, Delivery, DeliveryHandler, QueueStats, Settlement, WaitingMessage } from '../types.js';
import { Deque } from './deque.js';
import { DueHeap } from './due-heap.js';

/** A message as the builtin store keeps it. */
export interface StoredMessage {
  id: string;
  /** Publish order within the store (peek sorts by it). */
  seq: number;
  data: unknown;
  /** Deliveries so far (a deferred delivery does not count). */
  attempts: number;
  publishedAt: number;
  group?: string;
  traceparent?: string;
  baggage?: string;
  functionId?: string;
}

/** A FIFO group: its messages in order; while busy, its head is in flight or waiting to be retried. */
interface Lane {
  name: string;
  items: Deque<StoredMessage>;
  busy: boolean;
  /** In the ready ring. */
  queued: boolean;
}

interface ConsumerSlot {
  handler: DeliveryHandler;
  options: ConsumeOptions;
  inFlight: number;
  stopped: boolean;
}

interface InFlight {
  msg: StoredMessage;
  consumer: ConsumerSlot;
  lease: NodeJS.Timeout;
}

interface Timed {
  dueAt: number;
  run: () => void;
  /** The message that waits (a publish delay, a retry). */
  msg: StoredMessage;
}

/** What happened to a queue's messages, for a store that writes it down (file_based). */
export interface QueueJournal {
  stored(queue: string, msg: StoredMessage, dueAt: number | undefined): void;
  removed(queue: string, id: string): void;
  dead(queue: string, letter: DeadLetter): void;
  deadRemoved(queue: string, id: string): void;
}

/**
 * One queue of the builtin store, in memory: waiting messages (a deque, and a deque per FIFO group
 * with a ring of the groups that are ready), delayed ones (a heap with one timer), leases of the ones
 * in flight, and dead letters. Delivers to its consumers round-robin, each up to its concurrency.
 */
export class MemoryQueue {
  private readonly main = new Deque<StoredMessage>();
  private readonly lanes = new Map<string, Lane>();
  private readonly ready = new Deque<Lane>();
  private readonly timed = new DueHeap<Timed>((t) => t.run());
  private readonly inFlight = new Map<string, InFlight>();
  private readonly dead: DeadLetter[] = [];
  private consumers: ConsumerSlot[] = [];
  private nextConsumer = 0;
  private dispatching = false;
  private again = false;
  private scheduled = false;

  constructor(
    readonly name: string,
    private readonly journal?: QueueJournal,
  ) {}

  /** Adds a new message (delayed when `delayMs` > 0). */
  add(msg: StoredMessage, delayMs = 0): void {
    const dueAt = delayMs > 0 ? Date.now() + delayMs : undefined;
    this.journal?.stored(this.name, msg, dueAt);
    this.place(msg, dueAt);
  }

  /** Puts a recovered message back (no journal entry): waiting, or delayed until `dueAt`. */
  restore(msg: StoredMessage, dueAt: number | undefined): void {
    this.place(msg, dueAt);
  }

  restoreDead(letter: DeadLetter): void {
    this.dead.push(letter);
  }

  private place(msg: StoredMessage, dueAt: number | undefined): void {
    if (dueAt !== undefined && dueAt > Date.now()) this.timed.add({ dueAt, run: () => this.append(msg), msg });
    else this.append(msg);
  }

  consume(options: ConsumeOptions, handler: DeliveryHandler): () => void {
    const slot: ConsumerSlot = { handler, options, inFlight: 0, stopped: false };
    this.consumers.push(slot);
    this.kick();
    return () => {
      slot.stopped = true;
      this.consumers = this.consumers.filter((c) => c !== slot);
    };
  }

  stats(): QueueStats {
    let waiting = this.main.length;
    for (const lane of this.lanes.values()) waiting += lane.items.length - (lane.busy ? 1 : 0);
    return { waiting, inFlight: this.inFlight.size, delayed: this.timed.size, dead: this.dead.length };
  }

  peek(offset: number, limit: number): WaitingMessage[] {
    const all = this.waitingMessages().sort((a, b) => a.seq - b.seq);
    return all.slice(offset, offset + limit).map(waitingView);
  }

  remove(id: string): boolean {
    const match = (m: StoredMessage) => m.id === id;
    let removed = this.main.removeFirst(match);
    if (!removed) {
      for (const lane of this.lanes.values()) {
        const head = lane.items.peek();
        if (lane.busy && head?.id === id) continue; // in flight or waiting for its retry: not a waiting message
        if (lane.items.removeFirst(match)) {
          removed = true;
          this.dropIfEmpty(lane);
          break;
        }
      }
    }
    if (removed) this.journal?.removed(this.name, id);
    return removed;
  }

  deadLetters(offset: number, limit: number): DeadLetter[] {
    return [...this.dead].reverse().slice(offset, offset + limit);
  }

  redrive(): number {
    const letters = this.dead.splice(0);
    for (const letter of letters) this.revive(letter);
    if (letters.length > 0) this.kick();
    return letters.length;
  }

  redriveMessage(id: string): boolean {
    const at = this.dead.findIndex((d) => d.id === id);
    if (at < 0) return false;
    const [letter] = this.dead.splice(at, 1) as [DeadLetter];
    this.revive(letter);
    this.kick();
    return true;
  }

  discard(id: string): boolean {
    const at = this.dead.findIndex((d) => d.id === id);
    if (at < 0) return false;
    this.dead.splice(at, 1);
    this.journal?.deadRemoved(this.name, id);
    return true;
  }

  get deadCount(): number {
    return this.dead.length;
  }

  /** Every message not dead (waiting, delayed, in flight), for a snapshot. */
  liveMessages(): { msg: StoredMessage; dueAt?: number }[] {
    const out: { msg: StoredMessage; dueAt?: number }[] = this.waitingMessages().map((msg) => ({ msg }));
    for (const f of this.inFlight.values()) out.push({ msg: f.msg });
    for (const t of this.timed.values()) out.push({ msg: t.msg, dueAt: t.dueAt });
    return out;
  }

  deadList(): readonly DeadLetter[] {
    return this.dead;
  }

  close(): void {
    this.timed.stop();
    for (const f of this.inFlight.values()) clearTimeout(f.lease);
    this.inFlight.clear();
    this.consumers = [];
  }

  // ---- delivery ----

  private revive(letter: DeadLetter): void {
    this.journal?.deadRemoved(this.name, letter.id);
    const msg: StoredMessage = {
      id: letter.id,
      seq: nextSeq(),
      data: letter.data,
      attempts: 0,
      publishedAt: letter.publishedAt,
      group: letter.group,
      traceparent: letter.traceparent,
      baggage: letter.baggage,
      functionId: letter.functionId,
    };
    this.journal?.stored(this.name, msg, undefined);
    this.append(msg);
  }

  private append(msg: StoredMessage): void {
    if (msg.group === undefined) this.main.push(msg);
    else {
      const lane = this.laneOf(msg.group);
      lane.items.push(msg);
      this.queueLane(lane);
    }
    this.kick();
  }

  private laneOf(group: string): Lane {
    let lane = this.lanes.get(group);
    if (!lane) {
      lane = { name: group, items: new Deque(), busy: false, queued: false };
      this.lanes.set(group, lane);
    }
    return lane;
  }

  private queueLane(lane: Lane): void {
    if (lane.busy || lane.queued || lane.items.length === 0) return;
    lane.queued = true;
    this.ready.push(lane);
  }

  private dropIfEmpty(lane: Lane): void {
    if (!lane.busy && lane.items.length === 0 && !lane.queued) this.lanes.delete(lane.name);
  }

  /** Dispatches on a microtask, so that a burst of publishes is delivered in one pass. */
  private kick(): void {
    if (this.scheduled || this.consumers.length === 0) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    if (this.dispatching) {
      this.again = true;
      return;
    }
    this.dispatching = true;
    try {
      do {
        this.again = false;
        for (;;) {
          const consumer = this.pickConsumer();
          if (!consumer) break;
          const msg = this.takeNext();
          if (!msg) break;
          this.deliver(consumer, msg);
        }
      } while (this.again);
    } finally {
      this.dispatching = false;
    }
  }

  private pickConsumer(): ConsumerSlot | undefined {
    const n = this.consumers.length;
    for (let i = 0; i < n; i++) {
      const c = this.consumers[(this.nextConsumer + i) % n] as ConsumerSlot;
      if (!c.stopped && c.inFlight < c.options.concurrency) {
        this.nextConsumer = (this.nextConsumer + i + 1) % n;
        return c;
      }
    }
    return undefined;
  }

  private takeNext(): StoredMessage | undefined {
    // Alternate between ungrouped messages and ready groups so that neither starves the other.
    const lane = this.ready.length > 0 && (this.main.length === 0 || this.ready.length >= this.main.length) ? this.ready.shift() : undefined;
    if (lane) {
      lane.queued = false;
      lane.busy = true;
      return lane.items.peek();
    }
    return this.main.shift();
  }

  private deliver(consumer: ConsumerSlot, msg: StoredMessage): void {
    msg.attempts++;
    consumer.inFlight++;
    const lease = setTimeout(
      () => this.settle(msg, entry, { type: 'retry', delayMs: 0, error: 'visibility timeout: the handler did not answer in time' }),
      consumer.options.visibilityTimeoutMs,
    );
    lease.unref?.();
    const entry: InFlight = { msg, consumer, lease };
    this.inFlight.set(msg.id, entry);
    const delivery: Delivery = {
      id: msg.id,
      data: msg.data,
      attempt: msg.attempts,
      publishedAt: msg.publishedAt,
      group: msg.group,
      traceparent: msg.traceparent,
      baggage: msg.baggage,
      functionId: msg.functionId,
    };
    try {
      consumer.handler(delivery, (s) => this.settle(msg, entry, s));
    } catch (err) {
      this.settle(msg, entry, { type: 'retry', delayMs: 0, error: err instanceof Error ? err.message : String(err) });
    }
  }

  private settle(msg: StoredMessage, entry: InFlight, s: Settlement): void {
    if (this.inFlight.get(msg.id) !== entry) return; // settled already, or its lease expired and it went again
    this.inFlight.delete(msg.id);
    clearTimeout(entry.lease);
    entry.consumer.inFlight--;
    const lane = msg.group === undefined ? undefined : this.lanes.get(msg.group);
    switch (s.type) {
      case 'ack':
        this.journal?.removed(this.name, msg.id);
        this.release(lane);
        break;
      case 'dead': {
        const letter: DeadLetter = {
          id: msg.id,
          data: msg.data,
          error: s.error,
          attempts: msg.attempts,
          failedAt: Date.now(),
          publishedAt: msg.publishedAt,
          group: msg.group,
          functionId: msg.functionId,
          traceparent: msg.traceparent,
          baggage: msg.baggage,
        };
        this.dead.push(letter);
        this.journal?.removed(this.name, msg.id);
        this.journal?.dead(this.name, letter);
        this.release(lane);
        break;
      }
      case 'retry':
      case 'defer':
        if (s.type === 'defer') msg.attempts--;
        this.retryLater(msg, lane, s.delayMs);
        break;
    }
    this.kick();
  }

  /** A group's head is done (acked or dead): the group takes its next message. */
  private release(lane: Lane | undefined): void {
    if (!lane) return;
    lane.items.shift();
    lane.busy = false;
    this.queueLane(lane);
    this.dropIfEmpty(lane);
  }

  /** A delivery to go again after `delayMs`: first of its lane (a group waits for it meanwhile). */
  private retryLater(msg: StoredMessage, lane: Lane | undefined, delayMs: number): void {
    const dueAt = Date.now() + delayMs;
    if (this.journal) this.journal.stored(this.name, msg, delayMs > 0 ? dueAt : undefined);
    if (lane) {
      // The head stays in place and the group stays busy until the retry is due.
      const unblock = () => {
        lane.busy = false;
        this.queueLane(lane);
        this.kick();
      };
      if (delayMs > 0) this.timed.add({ dueAt, run: unblock, msg });
      else unblock();
      return;
    }
    if (delayMs > 0) this.timed.add({ dueAt, run: () => this.front(msg), msg });
    else this.front(msg);
  }

  private front(msg: StoredMessage): void {
    this.main.unshift(msg);
    this.kick();
  }

  private waitingMessages(): StoredMessage[] {
    const out = this.main.toArray();
    for (const lane of this.lanes.values()) {
      const items = lane.items.toArray();
      out.push(...(lane.busy ? items.slice(1) : items));
    }
    return out;
  }
}

let seqCounter = 0;
/** Publish order across the store. */
export function nextSeq(): number {
  return ++seqCounter;
}

function waitingView(m: StoredMessage): WaitingMessage {
  return { id: m.id, data: m.data, publishedAt: m.publishedAt, group: m.group, functionId: m.functionId, traceparent: m.traceparent, baggage: m.baggage };
}
