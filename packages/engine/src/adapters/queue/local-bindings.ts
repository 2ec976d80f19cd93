import type { BindOptions } from './types.js';

/**
 * The topic bindings one adapter instance keeps in its own memory (topic → queue → BindOptions): all of
 * them for the builtin backend, and what RabbitMQ cannot tell over AMQP (which queues a topic feeds,
 * and each one's FIFO group rule) for the rabbitmq backend.
 */
export class LocalBindings {
  private readonly byTopic = new Map<string, Map<string, BindOptions>>();

  /** The queues bound to `topic` and their options (empty when none). */
  of(topic: string): ReadonlyMap<string, BindOptions> {
    return this.byTopic.get(topic) ?? EMPTY;
  }

  /** Binds (or rebinds, replacing the options). */
  set(topic: string, queue: string, options: BindOptions): void {
    let bound = this.byTopic.get(topic);
    if (!bound) {
      bound = new Map();
      this.byTopic.set(topic, bound);
    }
    bound.set(queue, { ...options });
  }

  delete(topic: string, queue: string): void {
    const bound = this.byTopic.get(topic);
    bound?.delete(queue);
    if (bound?.size === 0) this.byTopic.delete(topic);
  }

  list(): { topic: string; queues: string[] }[] {
    return [...this.byTopic].map(([topic, bound]) => ({ topic, queues: [...bound.keys()] }));
  }
}

const EMPTY: ReadonlyMap<string, BindOptions> = new Map();
