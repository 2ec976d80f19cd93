import { z } from 'zod';
import type { AdapterFactory } from '../../core/api/adapters.js';
import type { AdapterLog } from '../shared/log.js';
import { RedisConnection } from '../shared/redis-connection.js';
import type { PubSubBus } from './types.js';

export const redisPubSubConfigSchema = z
  .strictObject({
    redis_url: z.string().min(1).default('redis://127.0.0.1:6379'),
    /** Topic `t` travels on the Redis channel `${channel_prefix}t`; engines share topics when they share the prefix. */
    channel_prefix: z.string().default('flint:pubsub:'),
    /** A PUBLISH that gets no answer within this time fails with store_unavailable. */
    command_timeout_ms: z.number().int().positive().default(2000),
  })
  .prefault({});

export type RedisPubSubConfig = z.output<typeof redisPubSubConfigSchema>;

/**
 * `redis`: a Redis channel per topic. This engine SUBSCRIBEs to a topic's channel while it has listeners
 * for it (on a connection of its own: a subscribed connection can run nothing else) and takes its own
 * messages back from Redis like every other engine's. ioredis subscribes again when Redis comes back;
 * messages published meanwhile are lost (pub/sub keeps nothing).
 */
export class RedisPubSub implements PubSubBus {
  readonly kind = 'redis';
  readonly shared = true;
  /** Per topic: its listeners, and the SUBSCRIBE that made its channel reach this engine. */
  private readonly topics = new Map<string, { listeners: Set<(text: string) => void>; subscribed: Promise<void> }>();

  private constructor(
    private readonly commands: RedisConnection,
    private readonly subscriber: RedisConnection,
    private readonly prefix: string,
  ) {
    subscriber.client.on('message', (channel: string, text: string) => {
      if (!channel.startsWith(prefix)) return;
      const entry = this.topics.get(channel.slice(prefix.length));
      if (entry) for (const listener of [...entry.listeners]) listener(text);
    });
    // The connection was opened before this listener was added: every 'ready' is a reconnection. ioredis
    // subscribes again by itself; asking once more covers a SUBSCRIBE lost on the way (harmless twice).
    subscriber.client.on('ready', () => {
      for (const topic of this.topics.keys()) void this.subscribe(topic);
    });
  }

  static async open(config: RedisPubSubConfig, logger?: AdapterLog): Promise<RedisPubSub> {
    const options = { url: config.redis_url, commandTimeoutMs: config.command_timeout_ms, logger };
    const commands = await RedisConnection.open({ ...options, connectionName: 'flint-pubsub' });
    try {
      return new RedisPubSub(commands, await RedisConnection.open({ ...options, connectionName: 'flint-pubsub-listen' }), config.channel_prefix);
    } catch (err) {
      await commands.close();
      throw err;
    }
  }

  async publish(topic: string, text: string): Promise<void> {
    await this.commands.call(() => this.commands.client.publish(this.prefix + topic, text));
  }

  listen(topic: string, listener: (text: string) => void): { listening: Promise<void>; stop: () => void } {
    let entry = this.topics.get(topic);
    if (!entry) {
      entry = { listeners: new Set(), subscribed: this.subscribe(topic) };
      this.topics.set(topic, entry);
    }
    entry.listeners.add(listener);
    const own = entry;
    const stop = () => {
      own.listeners.delete(listener);
      if (own.listeners.size > 0 || this.topics.get(topic) !== own) return;
      this.topics.delete(topic);
      void this.subscriber.call(() => this.subscriber.client.unsubscribe(this.prefix + topic)).catch(() => {});
    };
    return { listening: own.subscribed, stop };
  }

  async close(): Promise<void> {
    this.topics.clear();
    await this.subscriber.close();
    await this.commands.close();
  }

  /** SUBSCRIBEs to the topic's channel; settles either way (a failed one is asked again at reconnection). */
  private subscribe(topic: string): Promise<void> {
    return this.subscriber
      .call(() => this.subscriber.client.subscribe(this.prefix + topic))
      .then(
        () => {},
        () => {},
      );
  }
}

export const redisPubSubAdapter: AdapterFactory<'pubsub', RedisPubSubConfig> = {
  family: 'pubsub',
  name: 'redis',
  description: 'messages over Redis channels (redis_url, channel_prefix), to the subscribers of every engine using it',
  configSchema: redisPubSubConfigSchema,
  open: (config, env) => RedisPubSub.open(config, env.logger),
};
