/**
 * The `queue` adapter family: durable work queues with leases, delayed messages, dead letters and
 * FIFO groups, and topics that copy each message into every queue bound to them.
 *
 * The split between the queue module and an adapter: the module decides *what* happens to a message
 * (which queues a topic feeds, when a failure is retried and after how long, when it is dead); the
 * adapter stores messages and carries those decisions out atomically on its backend. Every adapter
 * passes the same contract suite (`test/adapters/queue-contract.ts`).
 */

/** A message as a producer hands it to the adapter. */
export interface NewMessage {
  /** Any JSON value (`null` included). */
  data: unknown;
  /** Not delivered before this many milliseconds from now. */
  delayMs?: number;
  /** The W3C trace context of the publisher, restored when the message is handled. */
  traceparent?: string;
  baggage?: string;
  /** Named function queues: the function each message is for. */
  functionId?: string;
  /** FIFO queues: the message's group, when the producer knows it (named queues). Topics compute it per queue (`groupOf` with the queue's `BindOptions`). A message with a group is delivered in order within its group, one at a time. */
  group?: string;
}

/** A message handed to a consumer. */
export interface Delivery {
  /** The message's id in its queue: what the dead-letter operations take. Unique per queue. */
  id: string;
  data: unknown;
  /**
   * The data as the JSON text the backend holds it in, when it does (redis): a delivery's call takes it as
   * it is, and `data` is then only parsed when read.
   */
  dataJson?: string;
  /** 1 on the first delivery; retries and lease expiries count up. */
  attempt: number;
  /** When the message was stored (ms since the epoch). */
  publishedAt: number;
  group?: string;
  traceparent?: string;
  baggage?: string;
  functionId?: string;
}

/** What the consumer decided about a delivery. Exactly one settle per delivery; later ones are ignored. */
export type Settlement =
  /** Done: the message is removed. */
  | { type: 'ack' }
  /**
   * Failed, to be tried again after `delayMs` (attempt counts up). In a FIFO queue the message stays
   * at the head of its group: the group waits, other groups go on.
   */
  | { type: 'retry'; delayMs: number; error: string }
  /** Not to be handled before `delayMs` from now, without counting an attempt (a subscriber's own delay). */
  | { type: 'defer'; delayMs: number }
  /** Failed for good: moved to the queue's dead letters with the error, its attempt count and the time. */
  | { type: 'dead'; error: string };

export interface ConsumeOptions {
  /** At most this many unsettled deliveries at once, for this consumer. */
  concurrency: number;
  /** FIFO: messages of one group are delivered in publish order, one at a time; groups run in parallel. */
  fifo: boolean;
  /**
   * A delivery not settled within this time (its consumer died, or hangs) is delivered again, to any
   * consumer of the queue, with its attempt counted up.
   */
  visibilityTimeoutMs: number;
}

export type DeliveryHandler = (delivery: Delivery, settle: (settlement: Settlement) => void) => void;

export interface Consumer {
  /** Takes no new deliveries; the ones in hand may still be settled. Resolves once stopped. */
  stop(): Promise<void>;
}

/** How a queue is fed from a topic. */
export interface BindOptions {
  /** A FIFO queue: each message gets a group (see `groupOf`); without `groupField` all share one group. */
  fifo?: boolean;
  /** FIFO queues: the field of a message's `data` that names its group (a missing or null field refuses the publish). */
  groupField?: string;
}

export interface QueueStats {
  /** Ready to be delivered. */
  waiting: number;
  /** Delivered and not settled yet. */
  inFlight: number;
  /** Waiting for their time (published with a delay, or to be retried). */
  delayed: number;
  /** Dead letters. */
  dead: number;
}

export interface DeadLetter {
  id: string;
  data: unknown;
  /** The error of the last attempt. */
  error: string;
  /** Attempts made. */
  attempts: number;
  /** When it was moved to the dead letters (ms since the epoch). */
  failedAt: number;
  publishedAt: number;
  group?: string;
  functionId?: string;
  traceparent?: string;
  baggage?: string;
}

/** A waiting message as `peek` shows it (without delivering it). */
export interface WaitingMessage {
  id: string;
  data: unknown;
  publishedAt: number;
  group?: string;
  functionId?: string;
  traceparent?: string;
  baggage?: string;
}

/**
 * A queue backend. Queues exist from their first use; names are any non-empty strings (an adapter
 * encodes them for its backend). Backend failures reject with a FlintError `queue_unavailable`, never
 * hang; a refused message rejects with the FlintError that names why.
 */
export interface QueueBackend {
  /** `in_memory`, `file_based`, `redis`, `rabbitmq`. */
  readonly kind: string;

  /** Stores a message in one queue; resolves once it is stored for the backend's guarantee. */
  publish(queue: string, message: NewMessage): Promise<{ id: string }>;
  /**
   * Stores one copy of a message in every queue bound to `topic`, all or none. Resolves with the
   * number of queues (0: none bound, nothing stored). Rejects with `message_group_missing` when a
   * FIFO queue's group field is missing or null in `data`.
   */
  publishTopic(topic: string, message: NewMessage): Promise<number>;
  /**
   * Binds a queue to a topic for this adapter instance (an engine). A binding holds while any instance
   * holds it; binding again replaces the options.
   */
  bind(topic: string, queue: string, options: BindOptions): Promise<void>;
  /** Releases this instance's hold; queued messages stay in the queue. */
  unbind(topic: string, queue: string): Promise<void>;
  /** Topics with at least one bound queue, and their queues. */
  topics(): Promise<{ topic: string; queues: string[] }[]>;

  /** Starts delivering the queue's messages to `handler` (oldest first; due delayed messages before newer waiting ones). */
  consume(queue: string, options: ConsumeOptions, handler: DeliveryHandler): Consumer;

  stats(queue: string): Promise<QueueStats>;
  /** Waiting messages, oldest first. */
  peek(queue: string, offset: number, limit: number): Promise<WaitingMessage[]>;
  /** Removes a waiting message; false when there is none with that id. */
  remove(queue: string, id: string): Promise<boolean>;

  /** Dead letters, newest failure first. */
  deadLetters(queue: string, offset: number, limit: number): Promise<DeadLetter[]>;
  /** Moves every dead letter back to waiting with its attempts reset; resolves with how many. */
  redrive(queue: string): Promise<number>;
  redriveMessage(queue: string, id: string): Promise<boolean>;
  discard(queue: string, id: string): Promise<boolean>;
  /** Queues that hold dead letters, with their count. */
  deadQueues(): Promise<{ queue: string; count: number }[]>;

  /** Stops the consumers, flushes and releases the backend. */
  close(): Promise<void>;
}

declare module '../../core/api/adapters.js' {
  interface AdapterFamilies {
    queue: QueueBackend;
  }
}
