import { randomUUID } from 'node:crypto';
import { groupOf } from '../groups.js';
import { LocalBindings } from '../local-bindings.js';
import type { BindOptions, ConsumeOptions, Consumer, DeadLetter, DeliveryHandler, NewMessage, QueueBackend, QueueStats, WaitingMessage } from '../types.js';
import { MemoryQueue, type QueueJournal, type StoredMessage, deadView, loadData, nextSeq, waitingView } from './memory-queue.js';

/**
 * The builtin queue backend in memory: one MemoryQueue per queue and the topic bindings of this
 * engine. With a journal (file_based) every change is also written down.
 */
export class MemoryQueueBackend implements QueueBackend {
  private readonly queues = new Map<string, MemoryQueue>();
  private readonly bindings = new LocalBindings();
  private closed = false;

  constructor(
    readonly kind: string,
    private readonly journal?: QueueJournal,
  ) {}

  /** The queue named `name`, created on first use. */
  queue(name: string): MemoryQueue {
    let q = this.queues.get(name);
    if (!q) {
      q = new MemoryQueue(name, this.journal);
      this.queues.set(name, q);
    }
    return q;
  }

  async publish(queue: string, message: NewMessage): Promise<{ id: string }> {
    const msg = stored(message, message.group);
    this.queue(queue).add(msg, message.delayMs);
    return { id: msg.id };
  }

  async publishTopic(topic: string, message: NewMessage): Promise<number> {
    const bound = this.bindings.of(topic);
    if (bound.size === 0) return 0;
    // Every group is worked out before anything is stored: a refused message is stored nowhere.
    const targets = [...bound].map(([queue, options]) => ({ queue, group: groupOf(queue, message.data, options) }));
    for (const { queue, group } of targets) this.queue(queue).add(stored(message, group), message.delayMs);
    return targets.length;
  }

  async bind(topic: string, queue: string, options: BindOptions): Promise<void> {
    this.bindings.set(topic, queue, options);
  }

  async unbind(topic: string, queue: string): Promise<void> {
    this.bindings.delete(topic, queue);
  }

  async topics(): Promise<{ topic: string; queues: string[] }[]> {
    return this.bindings.list();
  }

  consume(queue: string, options: ConsumeOptions, handler: DeliveryHandler): Consumer {
    const stop = this.queue(queue).consume(options, handler);
    return {
      async stop() {
        stop();
      },
    };
  }

  async stats(queue: string): Promise<QueueStats> {
    return this.queues.get(queue)?.stats() ?? { waiting: 0, inFlight: 0, delayed: 0, dead: 0 };
  }

  async peek(queue: string, offset: number, limit: number): Promise<WaitingMessage[]> {
    const page = this.queues.get(queue)?.peek(offset, limit) ?? [];
    return Promise.all(page.map(async (m) => waitingView(m, await loadData(m))));
  }

  async remove(queue: string, id: string): Promise<boolean> {
    return this.queues.get(queue)?.remove(id) ?? false;
  }

  async deadLetters(queue: string, offset: number, limit: number): Promise<DeadLetter[]> {
    const page = this.queues.get(queue)?.deadLetters(offset, limit) ?? [];
    return Promise.all(page.map(async (d) => deadView(d, await loadData(d.msg))));
  }

  async redrive(queue: string): Promise<number> {
    return this.queues.get(queue)?.redrive() ?? 0;
  }

  async redriveMessage(queue: string, id: string): Promise<boolean> {
    return this.queues.get(queue)?.redriveMessage(id) ?? false;
  }

  async discard(queue: string, id: string): Promise<boolean> {
    return this.queues.get(queue)?.discard(id) ?? false;
  }

  async deadQueues(): Promise<{ queue: string; count: number }[]> {
    return [...this.queues.values()].filter((q) => q.deadCount > 0).map((q) => ({ queue: q.name, count: q.deadCount }));
  }

  /** Every queue, for a snapshot. */
  allQueues(): Iterable<MemoryQueue> {
    return this.queues.values();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const q of this.queues.values()) q.close();
  }
}

function stored(message: NewMessage, group: string | undefined): StoredMessage {
  // Every field set, in one order (recovery builds the same shape): the queue's code sees one shape,
  // and file_based setting the body fields later allocates nothing more per message.
  return {
    id: randomUUID(),
    seq: nextSeq(),
    data: message.data,
    attempts: 0,
    publishedAt: Date.now(),
    group,
    traceparent: message.traceparent,
    baggage: message.baggage,
    functionId: message.functionId,
    body: undefined,
    bodyAt: 0,
    bodyLength: 0,
  };
}
