import { randomUUID } from 'node:crypto';
import type { Channel, GetMessage } from 'amqplib';
import type { AdapterLog } from '../../shared/log.js';
import { groupOf } from '../groups.js';
import { LocalBindings } from '../local-bindings.js';
import type { BindOptions, ConsumeOptions, Consumer, DeadLetter, DeliveryHandler, NewMessage, QueueBackend, QueueStats, WaitingMessage } from '../types.js';
import { type Envelope, decode, encode, toDeadLetter, toWaiting } from './codec.js';
import type { RabbitmqQueueConfig } from './config.js';
import { type ConsumerHost, RabbitConsumer } from './consumer.js';
import { type AmqpLink, RoutedNowhere } from './link.js';
import { Names, delayBucket, delayQueueExpiry } from './names.js';

/** A registry record: every queue and exchange the adapter declared (what `deadQueues` and a clean-up read). */
interface RegistryRecord {
  kind: 'queue' | 'dlq' | 'delay' | 'exchange';
  /** The broker-side name. */
  name: string;
  /** The Flint queue (or topic) it belongs to. */
  of: string;
}

/**
 * `rabbitmq`: every Flint queue is a durable classic queue `<prefix>.q.<name>` (persistent messages,
 * publisher confirms, manual acks), with
 *
 * - a dead-letter queue `<prefix>.dlq.<name>`: a dead letter is a copy with error, attempts and
 *   failed_at in headers, stored (confirmed) before the delivery is acked;
 * - delay queues `<prefix>.delay.<bucket>.<name>` with a queue TTL of `bucket` ms that dead-letter back
 *   into the queue: delayed publishes, retries (attempt count in a header) and defers (not counted) go
 *   there. Delays are rounded up to a bucket (names.ts) so a queue needs few of them, and `x-expires`
 *   removes one that has been idle long enough;
 * - topics: a durable fanout exchange `<prefix>.t.<topic>` (every message goes to every bound queue,
 *   no routing keys), one publish routed by the broker atomically to all bound queues. A topic message
 *   carries the group of each FIFO queue bound to it (a header keyed by queue), computed before the
 *   publish, so `message_group_missing` stores nothing.
 *
 * What the broker cannot tell over AMQP (no management API is assumed):
 *
 * - Bindings and their BindOptions are known per adapter instance (like the builtin backend); the broker
 *   binding itself is shared. So `publishTopic` counts the queues *this instance* bound (or 1 when none is
 *   known here but the broker routed the message: `mandatory` publishes tell "nowhere" from "somewhere",
 *   not how many), and `unbind` removes the broker binding for every instance.
 * - Queues cannot be listed: the adapter writes what it declares into `<prefix>.registry` (a durable
 *   queue of small records, duplicates compacted when read), which `deadQueues` reads.
 * - Messages cannot be looked up by id: peek, remove and the dead-letter operations take the messages
 *   with basic.get on a channel of their own and close it, which puts every message not acked back in
 *   its original place. That is O(messages in the queue) per call, and the messages taken are invisible
 *   to consumers for that moment: tools for operators, not for a hot path.
 * - `stats`: waiting/dead from the broker's counts (checkQueue), in flight and held from this adapter's
 *   consumers, delayed from the delay queues this instance used for the queue.
 */
export class RabbitQueueBackend implements QueueBackend {
  readonly kind = 'rabbitmq';
  private readonly names: Names;
  private readonly bindings = new LocalBindings();
  private readonly consumers = new Set<RabbitConsumer>();
  private readonly delayBuckets = new Map<string, Set<number>>();
  private readonly registered = new Set<string>();
  private readonly fifoOwners = new Map<string, object>();
  private readonly host: ConsumerHost;
  private closed = false;

  constructor(
    readonly link: AmqpLink,
    config: RabbitmqQueueConfig,
    private readonly logger: AdapterLog,
  ) {
    this.names = new Names(config.prefix);
    this.host = {
      channel: () => this.link.channel(),
      onUp: (l) => this.link.onUp(l),
      ensureQueue: (q) => this.ensureQueue(q),
      republish: (q, env, delayMs) => this.store(q, env, delayMs),
      deadLetter: (q, env) => this.storeDead(q, env),
      acquireFifo: (q, owner) => this.acquireFifo(q, owner),
      releaseFifo: (q, owner) => this.releaseFifo(q, owner),
      retryMs: config.fifo_standby_retry_ms,
      fifoPrefetch: config.fifo_prefetch,
      warn: (m) => this.logger.warn(m),
    };
  }

  async publish(queue: string, message: NewMessage): Promise<{ id: string }> {
    const env = envelope(message, message.group);
    await this.store(queue, env, message.delayMs ?? 0);
    return { id: env.id };
  }

  async publishTopic(topic: string, message: NewMessage): Promise<number> {
    const bound = this.bindings.of(topic);
    // Every group is worked out before anything is stored: a refused message is stored nowhere.
    const groups: Record<string, string> = {};
    for (const [queue, options] of bound) {
      const group = groupOf(queue, message.data, options);
      if (group !== undefined) groups[queue] = group;
    }
    const env = envelope(message, undefined);
    if (Object.keys(groups).length > 0) env.groups = groups;
    const exchange = await this.ensureExchange(topic);
    const { content, options } = encode(env);
    const delayMs = message.delayMs ?? 0;
    if (delayMs > 0) {
      if (bound.size === 0) return 0;
      const bucket = delayBucket(delayMs);
      const name = this.names.topicDelay(topic, bucket);
      await this.link.declare(name, (ch) =>
        ch.assertQueue(name, {
          durable: true,
          arguments: { 'x-message-ttl': bucket, 'x-dead-letter-exchange': exchange, 'x-dead-letter-routing-key': '', 'x-expires': delayQueueExpiry(bucket) },
        }),
      );
      await this.register({ kind: 'delay', name, of: topic });
      await this.link.publish('', name, content, options);
      return bound.size;
    }
    try {
      await this.link.publish(exchange, '', content, options);
    } catch (err) {
      if (err instanceof RoutedNowhere) return 0;
      throw err;
    }
    return Math.max(bound.size, 1);
  }

  async bind(topic: string, queue: string, options: BindOptions): Promise<void> {
    const name = await this.ensureQueue(queue);
    const exchange = await this.ensureExchange(topic);
    await this.link.withChannel((ch) => ch.bindQueue(name, exchange, ''));
    this.bindings.set(topic, queue, options);
  }

  async unbind(topic: string, queue: string): Promise<void> {
    this.bindings.delete(topic, queue);
    await this.link.withChannel((ch) => ch.unbindQueue(this.names.queue(queue), this.names.topic(topic), ''));
  }

  async topics(): Promise<{ topic: string; queues: string[] }[]> {
    return this.bindings.list();
  }

  consume(queue: string, options: ConsumeOptions, handler: DeliveryHandler): Consumer {
    const consumer = new RabbitConsumer(this.host, queue, options, handler);
    this.consumers.add(consumer);
    return {
      stop: async () => {
        this.consumers.delete(consumer);
        await consumer.stop();
      },
    };
  }

  async stats(queue: string): Promise<QueueStats> {
    const buckets = [...(this.delayBuckets.get(queue) ?? [])];
    const [waiting, dead, ...delays] = await Promise.all([
      this.count(this.names.queue(queue)),
      this.count(this.names.dlq(queue)),
      ...buckets.map((b) => this.count(this.names.delay(queue, b))),
    ]);
    const stats: QueueStats = { waiting, inFlight: 0, delayed: delays.reduce((a, b) => a + b, 0), dead };
    for (const c of this.consumers) {
      if (c.queue !== queue) continue;
      const local = c.counts();
      stats.waiting += local.waiting;
      stats.inFlight += local.inFlight;
      stats.delayed += local.delayed;
    }
    return stats;
  }

  async peek(queue: string, offset: number, limit: number): Promise<WaitingMessage[]> {
    return this.link.withChannel(async (ch) => {
      const got = await takeAll(ch, this.names.queue(queue), offset + limit);
      return got.slice(offset).map((m) => toWaiting(decode(m, queue)));
    });
  }

  async remove(queue: string, id: string): Promise<boolean> {
    return this.link.withChannel(async (ch) => {
      const found = (await takeAll(ch, this.names.queue(queue))).find((m) => m.properties.messageId === id);
      if (found) ch.ack(found);
      return found !== undefined;
    });
  }

  async deadLetters(queue: string, offset: number, limit: number): Promise<DeadLetter[]> {
    return this.link.withChannel(async (ch) => {
      const all = (await takeAll(ch, this.names.dlq(queue))).map((m) => toDeadLetter(decode(m, queue)));
      return all.reverse().slice(offset, offset + limit);
    });
  }

  async redrive(queue: string): Promise<number> {
    return this.link.withChannel(async (ch) => {
      const all = await takeAll(ch, this.names.dlq(queue));
      for (const m of all) await this.revive(ch, queue, m);
      return all.length;
    });
  }

  async redriveMessage(queue: string, id: string): Promise<boolean> {
    return this.link.withChannel(async (ch) => {
      const found = (await takeAll(ch, this.names.dlq(queue))).find((m) => m.properties.messageId === id);
      if (found) await this.revive(ch, queue, found);
      return found !== undefined;
    });
  }

  async discard(queue: string, id: string): Promise<boolean> {
    return this.link.withChannel(async (ch) => {
      const found = (await takeAll(ch, this.names.dlq(queue))).find((m) => m.properties.messageId === id);
      if (found) ch.ack(found);
      return found !== undefined;
    });
  }

  async deadQueues(): Promise<{ queue: string; count: number }[]> {
    const records = await this.readRegistry();
    const queues = [...new Set(records.filter((r) => r.kind === 'dlq').map((r) => r.of))];
    const counts = await Promise.all(queues.map((q) => this.count(this.names.dlq(q))));
    return queues.map((queue, i) => ({ queue, count: counts[i] as number })).filter((q) => q.count > 0);
  }

  /** Every queue and exchange the adapter (any instance with this prefix) declared, duplicates removed. */
  async readRegistry(): Promise<RegistryRecord[]> {
    return this.link.withChannel(async (ch) => {
      const seen = new Map<string, RegistryRecord>();
      for (const m of await takeAll(ch, this.names.registry())) {
        const record = JSON.parse(m.content.toString()) as RegistryRecord;
        const key = `${record.kind}\n${record.name}`;
        if (seen.has(key))
          ch.ack(m); // a duplicate: compacted away
        else seen.set(key, record);
      }
      return [...seen.values()];
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((c) => c.stop().catch(() => {})));
    this.consumers.clear();
    await this.link.close();
  }

  // ---- storing ----

  /** Stores `env` in `queue`: now, or through the delay queue of `delayMs`'s bucket. */
  private async store(queue: string, env: Envelope, delayMs: number): Promise<void> {
    const name = await this.ensureQueue(queue);
    const { content, options } = encode(env);
    if (delayMs <= 0) {
      await this.link.publish('', name, content, options);
      return;
    }
    const bucket = delayBucket(delayMs);
    const delay = this.names.delay(queue, bucket);
    await this.link.declare(delay, (ch) =>
      ch.assertQueue(delay, {
        durable: true,
        arguments: { 'x-message-ttl': bucket, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': name, 'x-expires': delayQueueExpiry(bucket) },
      }),
    );
    await this.register({ kind: 'delay', name: delay, of: queue });
    let buckets = this.delayBuckets.get(queue);
    if (!buckets) {
      buckets = new Set();
      this.delayBuckets.set(queue, buckets);
    }
    buckets.add(bucket);
    await this.link.publish('', delay, content, options);
  }

  private async storeDead(queue: string, env: Envelope): Promise<void> {
    const name = this.names.dlq(queue);
    await this.link.declare(name, (ch) => ch.assertQueue(name, { durable: true }));
    await this.register({ kind: 'dlq', name, of: queue });
    const { content, options } = encode(env);
    await this.link.publish('', name, content, options);
  }

  /** A dead letter back to its queue with its attempts reset, then removed from the dead letters. */
  private async revive(ch: Channel, queue: string, m: GetMessage): Promise<void> {
    const env = decode(m, queue);
    await this.store(queue, { ...env, attempts: 0, error: undefined, failedAt: undefined }, 0);
    ch.ack(m);
  }

  async ensureQueue(queue: string): Promise<string> {
    const name = this.names.queue(queue);
    await this.link.declare(name, (ch) => ch.assertQueue(name, { durable: true }));
    await this.register({ kind: 'queue', name, of: queue });
    return name;
  }

  private async ensureExchange(topic: string): Promise<string> {
    const name = this.names.topic(topic);
    await this.link.declare(`exchange:${name}`, (ch) => ch.assertExchange(name, 'fanout', { durable: true }));
    await this.register({ kind: 'exchange', name, of: topic });
    return name;
  }

  /** Writes a record once per adapter instance (duplicates from other instances are compacted on read). */
  private async register(record: RegistryRecord): Promise<void> {
    const key = `${record.kind}\n${record.name}`;
    if (this.registered.has(key)) return;
    const registry = this.names.registry();
    await this.link.declare(registry, (ch) => ch.assertQueue(registry, { durable: true }));
    await this.link.publish('', registry, Buffer.from(JSON.stringify(record)), { persistent: true, messageId: randomUUID(), mandatory: true });
    this.registered.add(key);
  }

  /** The ready messages of a broker queue (0 when it does not exist), on a throwaway channel (a 404 closes it). */
  private async count(name: string): Promise<number> {
    const ch = await this.link.channel();
    try {
      return (await ch.checkQueue(name)).messageCount;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return 0;
      throw this.link.failure(err instanceof Error ? err.message : String(err));
    } finally {
      await ch.close().catch(() => {});
    }
  }

  // ---- FIFO: one active consumer per queue ----

  private async acquireFifo(queue: string, owner: object): Promise<boolean> {
    const holder = this.fifoOwners.get(queue);
    if (holder && holder !== owner) return false; // another consumer of this instance is active
    const ch = await this.link.channel();
    try {
      // Exclusive: only this connection may declare it until it closes; another one gets RESOURCE_LOCKED.
      await ch.assertQueue(this.names.fifoLock(queue), { exclusive: true, durable: false });
      this.fifoOwners.set(queue, owner);
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === 405) return false;
      throw err;
    } finally {
      await ch.close().catch(() => {});
    }
  }

  private async releaseFifo(queue: string, owner: object): Promise<void> {
    if (this.fifoOwners.get(queue) !== owner) return;
    this.fifoOwners.delete(queue);
    if (this.link.up) await this.link.withChannel((ch) => ch.deleteQueue(this.names.fifoLock(queue)));
  }
}

function envelope(message: NewMessage, group: string | undefined): Envelope {
  return {
    id: randomUUID(),
    data: message.data === undefined ? null : message.data,
    attempts: 0,
    publishedAt: Date.now(),
    group,
    traceparent: message.traceparent,
    baggage: message.baggage,
    functionId: message.functionId,
  };
}

/** Takes up to `max` ready messages, oldest first, without acking them (closing the channel puts them back in place). */
async function takeAll(ch: Channel, queue: string, max = Number.POSITIVE_INFINITY): Promise<GetMessage[]> {
  const out: GetMessage[] = [];
  try {
    while (out.length < max) {
      const m = await ch.get(queue, { noAck: false });
      if (m === false) break;
      out.push(m);
    }
  } catch (err) {
    if ((err as { code?: number }).code === 404) return []; // never used: no such queue
    throw err;
  }
  return out;
}
