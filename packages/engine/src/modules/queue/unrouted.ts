import { FlintError, formatError } from '@flint/protocol';
import type { NewMessage, QueueBackend } from '../../adapters/queue/types.js';
import type { Logger } from '../../core/logger.js';
import { unroutedQueue } from './names.js';

/**
 * Messages published to a topic while nothing subscribed to it. Never dropped: they wait in the
 * topic's unrouted queue (bounded by `unrouted_max`; a publish beyond it is refused with
 * `unrouted_full`), are counted in the topic's stats, and a redrive hands them to the topic's
 * subscribers of the moment. The first one of each topic is logged at warn.
 */
export class Unrouted {
  private readonly warned = new Set<string>();
  /** Topics this engine parked messages for (so listings show a topic that only has unrouted messages). */
  private readonly parked = new Set<string>();

  constructor(
    private readonly backend: QueueBackend,
    private readonly max: number,
    private readonly logger: Logger,
  ) {}

  async park(topic: string, message: NewMessage): Promise<void> {
    const queue = unroutedQueue(topic);
    const { waiting } = await this.backend.stats(queue);
    if (waiting >= this.max) throw new FlintError('unrouted_full', formatError('unrouted_full', { topic, limit: this.max }));
    await this.backend.publish(queue, { data: message.data, traceparent: message.traceparent, baggage: message.baggage });
    this.parked.add(topic);
    if (!this.warned.has(topic)) {
      this.warned.add(topic);
      this.logger.warn(
        { topic },
        `topic ${topic} has no subscriber: its messages are kept as unrouted (redrive them with flint::queue::redrive once a function subscribes)`,
      );
    }
  }

  /** Topics with unrouted messages parked through this engine since it started. */
  topics(): string[] {
    return [...this.parked];
  }

  async count(topic: string): Promise<number> {
    return (await this.backend.stats(unroutedQueue(topic))).waiting;
  }

  /** Hands the unrouted messages to the topic's subscribers, oldest first; stops when it has none. Resolves with how many went. */
  async redrive(topic: string): Promise<number> {
    const queue = unroutedQueue(topic);
    let moved = 0;
    for (;;) {
      const batch = await this.backend.peek(queue, 0, 100);
      if (batch.length === 0) return moved;
      for (const m of batch) {
        // Published first, removed after: a crash in between delivers it twice, never loses it.
        const copies = await this.backend.publishTopic(topic, { data: m.data, traceparent: m.traceparent, baggage: m.baggage });
        if (copies === 0) return moved;
        await this.backend.remove(queue, m.id);
        moved++;
      }
      this.warned.delete(topic);
    }
  }
}
