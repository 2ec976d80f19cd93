import { z } from 'zod';
import type { AdapterFactory } from '../../core/api/adapters.js';
import type { PubSubBus } from './types.js';

/** `local`: messages reach the subscribers of this engine, synchronously. */
export class LocalPubSub implements PubSubBus {
  readonly kind = 'local';
  readonly shared = false;
  private readonly topics = new Map<string, Set<(text: string) => void>>();

  async publish(topic: string, text: string): Promise<void> {
    const listeners = this.topics.get(topic);
    if (listeners) for (const listener of [...listeners]) listener(text);
  }

  listen(topic: string, listener: (text: string) => void): { listening: Promise<void>; stop: () => void } {
    const listeners = this.topics.get(topic) ?? new Set();
    this.topics.set(topic, listeners);
    listeners.add(listener);
    const stop = () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.topics.get(topic) === listeners) this.topics.delete(topic);
    };
    return { listening: Promise.resolve(), stop };
  }

  async close(): Promise<void> {
    this.topics.clear();
  }
}

export const localPubSubAdapter: AdapterFactory<'pubsub', Record<string, never>> = {
  family: 'pubsub',
  name: 'local',
  description: 'messages to the subscribers of this engine only',
  configSchema: z.strictObject({}).prefault({}) as unknown as z.ZodType<Record<string, never>>,
  open: async () => new LocalPubSub(),
};
