import type { ConsumeOptions, DeadLetter, Delivery, DeliveryHandler, QueueStats, Settlement, WaitingMessage } from '../types.js';
import { Deque } from './deque.js';
import { DueHeap } from './due-heap.js';

/** A message as the builtin store keeps it. */
export interface StoredMessage {
  id: string;
  /** Publish order within the store (peek sorts by it). */
  seq: number;
  /** The message's data; with `body` set, what that source needs instead (file_based keeps data on disk). */
  data: unknown;
  /** Where the data is read from when it is not kept in memory (file_based: a log or snapshot file). */
  body?: BodySource;
  /** For `body`: the byte offset and length of the data's JSON text in its file. */
  bodyAt?: number;
  bodyLength?: number;
  /** Deliveries so far (a deferred delivery does not count). */
  attempts: number;
  publishedAt: number;
  group?: string;
  traceparent?: string;
  baggage?: string;
  functionId?: string;
}

/** Reads a message's data that is not kept in memory. */
export interface BodySource {
  load(msg: StoredMessage): Promise<unknown>;
}

/** A message's data: at hand (in_memory), or read from where it is stored (file_based). */
export function loadData(msg: StoredMessage): unknown | Promise<unknown> {
  return msg.body === undefined ? msg.data : msg.body.load(msg);
}

/** A dead letter as the store keeps it: the message (its data possibly on disk) and why it died. */
export interface DeadEntry {
  msg: StoredMessage;
  error: string;
  /** Attempts made when it died. */
  attempts: number;
  failedAt: number;
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
  /** A retry (or defer): the message goes back first of its queue or group, not last. */
  retry: boolean;
}

/** A message not dead, as `liveMessages` lists it for a snapshot. */
export interface LiveMessage {
  msg: StoredMessage;
  /** Delayed until then. */
  dueAt?: number;
  /** Waiting for a retry: first of its queue or group once due (see `restore`). */
  retry?: boolean;
}

/**
 * What happened to a queue's messages, for a store that writes it down (file_based). Called
 * synchronously with every change; only `stored` may throw (the message is then not stored).
 */
export interface QueueJournal {
  /** A new message (published). */
  stored(queue: string, msg: StoredMessage, dueAt: number | undefined): void;
  /** Handed to a consumer: `msg.attempts` counted up. */
  delivered(queue: string, msg: StoredMessage): void;
  /** To go again (a retry, a defer, an expired lease), after `dueAt` when set; `msg.attempts` as it stands. */
  rescheduled(queue: string, msg: StoredMessage, dueAt: number | undefined): void;
  /** Gone: acked, or removed while waiting. */
  removed(queue: string, id: string): void;
  /** Moved to the dead letters. */
  dead(queue: string, entry: DeadEntry): void;
  /** A dead letter moved back to waiting (last), its attempts reset. */
  revived(queue: string, msg: StoredMessage): void;
  /** A dead letter discarded. */
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
  private readonly dead: DeadEntry[] = [];
  /** Deliveries whose data is being read (file_based): handed over in delivery order. */
  private handoffs: Promise<void> = Promise.resolve();
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

  /**
   * Puts a recovered message back (no journal entry), after the ones restored before it: waiting, or
   * delayed until `dueAt`. A `retry` goes back as it waited: a FIFO group's head (the group waits for
   * it), or first of the queue once due.
   */
  restore(msg: StoredMessage, dueAt: number | undefined, retry = false): void {
    const due = dueAt !== undefined && dueAt > Date.now();
    if (!retry || (!due && msg.group === undefined)) return this.place(msg, due ? dueAt : undefined);
    if (msg.group === undefined) {
      this.timed.add({ dueAt: dueAt as number, run: () => this.front(msg), msg, retry: true });
      return;
    }
    const lane = this.laneOf(msg.group);
    lane.items.unshift(msg);
    if (!due) {
      this.queueLane(lane);
      this.kick();
      return;
    }
    lane.busy = true; // takeNext skips it should the lane be in the ready ring already
    this.timed.add({ dueAt: dueAt as number, run: () => this.unblock(lane), msg, retry: true });
  }

  /** Puts a recovered dead letter back (after the ones restored before it: newest failure last). */
  restoreDead(entry: DeadEntry): void {
    this.dead.push(entry);
  }

  private place(msg: StoredMessage, dueAt: number | undefined): void {
    if (dueAt !== undefined && dueAt > Date.now()) this.timed.add({ dueAt, run: () => this.append(msg), msg, retry: false });
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

  /** Waiting messages, oldest first (their data may still have to be loaded: `loadData`). */
  peek(offset: number, limit: number): StoredMessage[] {
    const all = this.waitingMessages().sort((a, b) => a.seq - b.seq);
    return all.slice(offset, offset + limit);
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

  /** Dead letters, newest failure first (their data may still have to be loaded: `loadData`). */
  deadLetters(offset: number, limit: number): DeadEntry[] {
    const out: DeadEntry[] = [];
    for (let i = this.dead.length - 1 - offset; i >= 0 && out.length < limit; i--) out.push(this.dead[i] as DeadEntry);
    return out;
  }

  redrive(): number {
    const letters = this.dead.splice(0);
    for (const letter of letters) this.revive(letter);
    if (letters.length > 0) this.kick();
    return letters.length;
  }

  redriveMessage(id: string): boolean {
    const at = this.dead.findIndex((d) => d.msg.id === id);
    if (at < 0) return false;
    const [entry] = this.dead.splice(at, 1) as [DeadEntry];
    this.revive(entry);
    this.kick();
    return true;
  }

  discard(id: string): boolean {
    const at = this.dead.findIndex((d) => d.msg.id === id);
    if (at < 0) return false;
    this.dead.splice(at, 1);
    this.journal?.deadRemoved(this.name, id);
    return true;
  }

  get deadCount(): number {
    return this.dead.length;
  }

  /**
   * Every message not dead (waiting, in flight, delayed), for a snapshot: `visit` is called once per
   * message, without building a list (a queue may hold millions).
   */
  liveMessages(visit: (msg: StoredMessage, dueAt: number | undefined, retry: boolean) => void): void {
    this.main.forEach((msg) => {
      visit(msg, undefined, false);
    });
    for (const lane of this.lanes.values()) {
      let head = lane.busy; // in flight or waiting for its retry: visited below
      lane.items.forEach((msg) => {
        if (head) head = false;
        else visit(msg, undefined, false);
      });
    }
    for (const f of this.inFlight.values()) visit(f.msg, undefined, false);
    for (const t of this.timed.values()) visit(t.msg, t.dueAt, t.retry);
  }

  /** The dead letters, oldest failure first. */
  deadList(): readonly DeadEntry[] {
    return this.dead;
  }

  close(): void {
    this.timed.stop();
    for (const f of this.inFlight.values()) clearTimeout(f.lease);
    this.inFlight.clear();
    this.consumers = [];
  }

  // ---- delivery ----

  private revive(entry: DeadEntry): void {
    const msg = entry.msg;
    msg.seq = nextSeq();
    msg.attempts = 0;
    this.journal?.revived(this.name, msg);
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
    for (;;) {
      // Alternate between ungrouped messages and ready groups so that neither starves the other.
      const lane = this.ready.length > 0 && (this.main.length === 0 || this.ready.length >= this.main.length) ? this.ready.shift() : undefined;
      if (!lane) return this.main.shift();
      lane.queued = false;
      if (lane.busy) continue; // restored with its head waiting for a retry: queued again once that is due
      lane.busy = true;
      return lane.items.peek();
    }
  }

  private deliver(consumer: ConsumerSlot, msg: StoredMessage): void {
    msg.attempts++;
    this.journal?.delivered(this.name, msg);
    consumer.inFlight++;
    const lease = setTimeout(
      () => this.settle(msg, entry, { type: 'retry', delayMs: 0, error: 'visibility timeout: the handler did not answer in time' }),
      consumer.options.visibilityTimeoutMs,
    );
    lease.unref?.();
    const entry: InFlight = { msg, consumer, lease };
    this.inFlight.set(msg.id, entry);
    if (msg.body === undefined) return this.handOver(entry, msg.data);
    // The data is on disk: read it, then hand over in delivery order (reads may finish out of order).
    const data = msg.body.load(msg);
    const handoff = this.handoffs.then(
      () => data,
      () => data,
    );
    this.handoffs = handoff.then(
      (value) => {
        if (this.inFlight.get(msg.id) !== entry) return; // its lease expired meanwhile, or the queue closed
        if (entry.consumer.stopped) return this.settle(msg, entry, { type: 'defer', delayMs: 0 }); // not handed over: back first
        this.handOver(entry, value);
      },
      (err) =>
        this.settle(msg, entry, {
          type: 'retry',
          delayMs: 1000,
          error: `the message's data cannot be read: ${err instanceof Error ? err.message : String(err)}`,
        }),
    );
  }

  private handOver(entry: InFlight, data: unknown): void {
    const { msg, consumer } = entry;
    const delivery: Delivery = {
      id: msg.id,
      data,
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
        const dead: DeadEntry = { msg, error: s.error, attempts: msg.attempts, failedAt: Date.now() };
        this.dead.push(dead);
        this.journal?.dead(this.name, dead);
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
    this.journal?.rescheduled(this.name, msg, delayMs > 0 ? dueAt : undefined);
    if (lane) {
      // The head stays in place and the group stays busy until the retry is due.
      if (delayMs > 0) this.timed.add({ dueAt, run: () => this.unblock(lane), msg, retry: true });
      else this.unblock(lane);
      return;
    }
    if (delayMs > 0) this.timed.add({ dueAt, run: () => this.front(msg), msg, retry: true });
    else this.front(msg);
  }

  /** A group's head may go again (its retry is due). */
  private unblock(lane: Lane): void {
    lane.busy = false;
    this.queueLane(lane);
    this.kick();
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

/** What `peek` shows of a waiting message, with its data loaded. */
export function waitingView(m: StoredMessage, data: unknown): WaitingMessage {
  return { id: m.id, data, publishedAt: m.publishedAt, group: m.group, functionId: m.functionId, traceparent: m.traceparent, baggage: m.baggage };
}

/** What `deadLetters` shows of a dead letter, with its data loaded. */
export function deadView(d: DeadEntry, data: unknown): DeadLetter {
  const m = d.msg;
  return {
    id: m.id,
    data,
    error: d.error,
    attempts: d.attempts,
    failedAt: d.failedAt,
    publishedAt: m.publishedAt,
    group: m.group,
    functionId: m.functionId,
    traceparent: m.traceparent,
    baggage: m.baggage,
  };
}
