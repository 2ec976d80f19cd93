import { FlintError, formatError } from '@flint/protocol';
import type { DeadLetter, QueueBackend, QueueStats } from '../../adapters/queue/types.js';
import type { NamedQueueConfig } from './config.js';
import { namedQueue, parseQueueName } from './names.js';
import type { CounterTable } from './rates.js';
import type { Subscribers } from './subscribers.js';
import type { Unrouted } from './unrouted.js';

type Resolved = { kind: 'named'; queues: string[] } | { kind: 'topic'; queues: string[]; functionOf: Map<string, string> };

const sum = (all: QueueStats[]): QueueStats =>
  all.reduce((a, s) => ({ waiting: a.waiting + s.waiting, inFlight: a.inFlight + s.inFlight, delayed: a.delayed + s.delayed, dead: a.dead + s.dead }), {
    waiting: 0,
    inFlight: 0,
    delayed: 0,
    dead: 0,
  });

/**
 * What the admin functions see: a name is a named queue when `queue_configs` has it, else a topic,
 * which stands for the queue of every function subscribed to it (here or on another engine sharing the
 * backend), and for the queues of functions that subscribed once and still hold dead letters.
 */
export class QueueCatalog {
  constructor(
    private readonly backend: QueueBackend,
    private readonly subscribers: Subscribers,
    private readonly named: Record<string, NamedQueueConfig>,
    private readonly counters: CounterTable,
    private readonly unrouted: Unrouted,
  ) {}

  async resolve(name: string): Promise<Resolved> {
    if (this.named[name]) return { kind: 'named', queues: [namedQueue(name)] };
    const functionOf = new Map<string, string>();
    const add = (queue: string) => {
      const parsed = parseQueueName(queue);
      if (parsed?.kind === 'topic' && parsed.topic === name) functionOf.set(queue, parsed.functionId);
    };
    for (const t of await this.backend.topics()) if (t.topic === name) t.queues.forEach(add);
    for (const d of await this.backend.deadQueues()) add(d.queue);
    return { kind: 'topic', queues: [...functionOf.keys()], functionOf };
  }

  countPublished(topic: string): void {
    this.counters.of(`publish:${topic}`).published.add();
  }

  async listTopics(): Promise<{ name: string; broker_type: string; subscriber_count: number }[]> {
    const out = new Map<string, { name: string; broker_type: string; subscriber_count: number }>();
    for (const t of await this.backend.topics()) out.set(t.topic, { name: t.topic, broker_type: this.backend.kind, subscriber_count: t.queues.length });
    for (const [topic, fns] of this.subscribers.byTopic()) {
      const triggers = [...fns.values()].reduce((a, b) => a + b, 0);
      const entry = out.get(topic);
      out.set(topic, { name: topic, broker_type: this.backend.kind, subscriber_count: Math.max(entry?.subscriber_count ?? 0, triggers) });
    }
    for (const topic of this.unrouted.topics()) {
      if (!out.has(topic) && (await this.unrouted.count(topic)) > 0) out.set(topic, { name: topic, broker_type: this.backend.kind, subscriber_count: 0 });
    }
    const named = Object.entries(this.named).map(([name, c]) => ({ name, broker_type: 'function_queue', subscriber_count: c.concurrency }));
    return [...[...out.values()].sort((a, b) => a.name.localeCompare(b.name)), ...named];
  }

  async stats(name: string): Promise<Record<string, unknown>> {
    const target = await this.resolve(name);
    const perQueue = await Promise.all(target.queues.map(async (q) => ({ queue: q, stats: await this.backend.stats(q) })));
    const total = sum(perQueue.map((p) => p.stats));
    const local = target.kind === 'topic' ? this.subscribers.byTopic().get(name) : undefined;
    const rates = target.kind === 'named' ? this.counters.of(namedQueue(name)).view() : this.topicRates(name, target.queues);
    const base = {
      name,
      kind: target.kind === 'named' ? 'function_queue' : 'topic',
      broker_type: this.backend.kind,
      depth: total.waiting + total.inFlight,
      waiting: total.waiting,
      in_flight: total.inFlight,
      delayed: total.delayed,
      dead: total.dead,
      dlq_depth: total.dead,
      consumer_count: target.kind === 'named' ? 1 : [...(local?.values() ?? [])].reduce((a, b) => a + b, 0),
      rates,
      config: target.kind === 'named' ? this.named[name] : null,
    };
    if (target.kind === 'named') return base;
    return {
      ...base,
      unrouted: await this.unrouted.count(name),
      subscribers: perQueue.map(({ queue, stats }) => ({
        function_id: target.functionOf.get(queue),
        waiting: stats.waiting,
        in_flight: stats.inFlight,
        delayed: stats.delayed,
        dead: stats.dead,
        consumers: local?.get(target.functionOf.get(queue) as string) ?? 0,
      })),
    };
  }

  async deadTopics(): Promise<{ topic: string; broker_type: string; message_count: number }[]> {
    const counts = new Map<string, { topic: string; broker_type: string; message_count: number }>();
    for (const { queue, count } of await this.backend.deadQueues()) {
      const parsed = parseQueueName(queue);
      if (!parsed || parsed.kind === 'unrouted') continue;
      const key = parsed.kind === 'named' ? parsed.name : parsed.topic;
      const broker = parsed.kind === 'named' ? 'function_queue' : this.backend.kind;
      const entry = counts.get(key) ?? { topic: key, broker_type: broker, message_count: 0 };
      entry.message_count += count;
      counts.set(key, entry);
    }
    return [...counts.values()].sort((a, b) => a.topic.localeCompare(b.topic));
  }

  async deadLetters(name: string, offset: number, limit: number): Promise<Record<string, unknown>[]> {
    const target = await this.resolve(name);
    if (target.kind === 'topic' && target.queues.length === 0 && !(await this.isKnownTopic(name))) {
      throw new FlintError('queue_not_found', formatError('queue_not_found', { queue: name }));
    }
    const lists = await Promise.all(
      target.queues.map(async (q) =>
        (await this.backend.deadLetters(q, 0, offset + limit)).map((d) => ({ d, fn: target.kind === 'topic' ? target.functionOf.get(q) : d.functionId })),
      ),
    );
    return lists
      .flat()
      .sort((a, b) => b.d.failedAt - a.d.failedAt)
      .slice(offset, offset + limit)
      .map(({ d, fn }) => deadView(d, fn));
  }

  private async isKnownTopic(name: string): Promise<boolean> {
    return this.subscribers.byTopic().has(name) || (await this.unrouted.count(name)) > 0;
  }

  private topicRates(topic: string, queues: string[]): Record<string, number> {
    const views = queues.map((q) => this.counters.of(q).view());
    const add = (key: 'handled_per_sec' | 'failed_per_sec' | 'dead_per_sec') => Math.round(views.reduce((a, v) => a + v[key], 0) * 100) / 100;
    return {
      published_per_sec: this.counters.of(`publish:${topic}`).view().published_per_sec,
      handled_per_sec: add('handled_per_sec'),
      failed_per_sec: add('failed_per_sec'),
      dead_per_sec: add('dead_per_sec'),
    };
  }
}

function deadView(d: DeadLetter, functionId: string | undefined): Record<string, unknown> {
  const payload = JSON.stringify(d.data) ?? 'null';
  return {
    id: d.id,
    payload: d.data,
    error: d.error,
    failed_at: Math.floor(d.failedAt / 1000),
    retries: d.attempts,
    size_bytes: Buffer.byteLength(payload),
    function_id: functionId ?? null,
  };
}
