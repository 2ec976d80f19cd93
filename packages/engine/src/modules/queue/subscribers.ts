import type { Consumer, QueueBackend } from '../../adapters/queue/types.js';
import type { ModuleContext, TriggerRecord, TriggerTypeProvider } from '../../core/module-api.js';
import type { DeliveryDefaults } from './config.js';
import { handleDelivery } from './delivery.js';
import { subscriberQueue } from './names.js';
import type { CounterTable } from './rates.js';
import { type SubscriberConfig, subscriberSettings } from './subscriber-config.js';

interface Subscription {
  topic: string;
  functionId: string;
  queue: string;
  consumer: Consumer;
}

/**
 * `durable:subscriber` triggers. Each distinct function subscribed to a topic has its own queue that
 * the topic feeds, so every function gets every message; each trigger (a replica of the function in
 * some worker) is a consumer of that queue, so replicas compete and each message is handled once.
 */
export class Subscribers implements TriggerTypeProvider<SubscriberConfig> {
  private readonly subs = new Map<string, Subscription>();
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private stopped = false;

  constructor(
    private readonly ctx: ModuleContext,
    private readonly backend: QueueBackend,
    private readonly defaults: DeliveryDefaults,
    private readonly counters: CounterTable,
  ) {}

  async registerTrigger(t: TriggerRecord<SubscriberConfig>): Promise<void> {
    const settings = subscriberSettings(t.config, this.defaults);
    const topic = t.config.topic;
    const queue = subscriberQueue(topic, t.function_id);
    await this.backend.bind(topic, queue, { fifo: settings.fifo, groupField: settings.groupField });
    this.subs.get(t.id)?.consumer.stop();
    const target = {
      trigger: {
        id: t.id,
        type: t.type,
        function_id: t.function_id,
        condition_function_id: t.config.condition_function_id,
        origin: { id: t.id, type: t.type },
      },
      settings,
      counters: this.counters.of(queue),
      logFields: { topic },
      spanTarget: topic,
    };
    const consumer = this.backend.consume(
      queue,
      { concurrency: settings.concurrency, fifo: settings.fifo, visibilityTimeoutMs: settings.visibilityTimeoutMs },
      (delivery, settle) => {
        this.inFlight++;
        handleDelivery(this.ctx, target, delivery, settle, this.finished);
      },
    );
    this.subs.set(t.id, { topic, functionId: t.function_id, queue, consumer });
  }

  async unregisterTrigger(t: TriggerRecord<SubscriberConfig>): Promise<void> {
    const sub = this.subs.get(t.id);
    if (!sub) return;
    this.subs.delete(t.id);
    await sub.consumer.stop();
    // The function's queue stays fed while another of its triggers subscribes to the topic.
    if (![...this.subs.values()].some((s) => s.queue === sub.queue) && !this.stopped) await this.backend.unbind(sub.topic, sub.queue);
  }

  /** Subscriber triggers on this engine, by topic: function id → number of triggers. */
  byTopic(): Map<string, Map<string, number>> {
    const out = new Map<string, Map<string, number>>();
    for (const s of this.subs.values()) {
      let fns = out.get(s.topic);
      if (!fns) {
        fns = new Map();
        out.set(s.topic, fns);
      }
      fns.set(s.functionId, (fns.get(s.functionId) ?? 0) + 1);
    }
    return out;
  }

  /** Takes no new messages and resolves once the ones in hand are settled. */
  async drain(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.subs.values()].map((s) => s.consumer.stop()));
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private readonly finished = () => {
    this.inFlight--;
    if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
  };
}
