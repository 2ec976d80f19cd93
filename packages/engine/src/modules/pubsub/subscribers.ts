import { z } from 'zod';
import type { PubSubBus } from '../../adapters/pubsub/types.js';
import type { ModuleContext, TriggerRecord, TriggerTypeProvider } from '../../core/module-api.js';
import { type FiringTrigger, fireTrigger } from '../../lib/triggers.js';

/** A `subscribe` trigger's config: the topic (required) and an optional condition. */
export const subscribeTriggerConfigSchema = z.strictObject({
  topic: z.string().min(1),
  condition_function_id: z.string().min(1).optional(),
});

type SubscribeConfig = z.output<typeof subscribeTriggerConfigSchema>;

/** What travels on the bus: the data and the publisher's trace context. */
export interface Envelope {
  data: unknown;
  traceparent?: string;
  baggage?: string;
}

interface Topic {
  triggers: Map<string, FiringTrigger>;
  stop: () => void;
}

/**
 * `subscribe` triggers: each one runs with every message published to its topic (on this engine or, with
 * a shared bus, any engine) from the moment its registration is confirmed. Failures are logged; nothing
 * is retried or kept (that is what flint-queue is for).
 */
export class Subscribers implements TriggerTypeProvider<SubscribeConfig> {
  private readonly topics = new Map<string, Topic>();

  constructor(
    private readonly ctx: ModuleContext,
    private readonly bus: PubSubBus,
  ) {}

  /** Resolves once messages published from now on reach the trigger. */
  async registerTrigger(t: TriggerRecord<SubscribeConfig>): Promise<void> {
    const { topic, condition_function_id } = t.config;
    let entry = this.topics.get(topic);
    let listening = Promise.resolve();
    if (!entry) {
      const triggers = new Map<string, FiringTrigger>();
      const listener = this.bus.listen(topic, (text) => this.deliver(topic, triggers, text));
      entry = { triggers, stop: listener.stop };
      listening = listener.listening;
      this.topics.set(topic, entry);
    }
    entry.triggers.set(t.id, { id: t.id, type: 'subscribe', function_id: t.function_id, condition_function_id });
    await listening;
  }

  unregisterTrigger(t: TriggerRecord<SubscribeConfig>): void {
    const entry = this.topics.get(t.config.topic);
    if (!entry?.triggers.delete(t.id) || entry.triggers.size > 0) return;
    entry.stop();
    this.topics.delete(t.config.topic);
  }

  /** Topics with subscribers on this engine, and how many. */
  counts(): { topic: string; subscribers: number }[] {
    return [...this.topics].map(([topic, entry]) => ({ topic, subscribers: entry.triggers.size })).sort((a, b) => (a.topic < b.topic ? -1 : 1));
  }

  private deliver(topic: string, triggers: Map<string, FiringTrigger>, text: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(text);
    } catch {
      this.ctx.logger.warn({ topic }, `pubsub: a message on topic ${topic} is not JSON; dropped`);
      return;
    }
    for (const trigger of triggers.values()) {
      void fireTrigger(this.ctx, trigger, envelope.data, {
        logger: this.ctx.logger,
        logFields: { topic },
        traceparent: envelope.traceparent,
        baggage: envelope.baggage,
        spanName: `process ${topic}`,
        attributes: { 'messaging.system': 'flint-pubsub', 'messaging.destination.name': topic, 'messaging.operation.type': 'process' },
      });
    }
  }
}
