import { z } from 'zod';
import type { AdapterFactory } from '../../core/api/adapters.js';
import type { AdapterLog } from '../shared/log.js';
import { RedisChannels } from '../shared/redis-channels.js';
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
 * `redis`: a Redis channel per topic (shared/redis-channels.ts: subscribed while this engine has listeners
 * for it, on a connection of its own). This engine takes its own messages back from Redis like every other
 * engine's. Messages published while Redis is down are lost (pub/sub keeps nothing).
 */
export class RedisPubSub implements PubSubBus {
  readonly kind = 'redis';
  readonly shared = true;

  private constructor(
    private readonly commands: RedisConnection,
    private readonly channels: RedisChannels,
    private readonly prefix: string,
  ) {}

  static async open(config: RedisPubSubConfig, logger?: AdapterLog): Promise<RedisPubSub> {
    const options = { url: config.redis_url, commandTimeoutMs: config.command_timeout_ms, logger };
    const commands = await RedisConnection.open({ ...options, connectionName: 'flint-pubsub' });
    try {
      const listening = await RedisConnection.open({ ...options, connectionName: 'flint-pubsub-listen' });
      return new RedisPubSub(commands, new RedisChannels(listening), config.channel_prefix);
    } catch (err) {
      await commands.close();
      throw err;
    }
  }

  async publish(topic: string, text: string): Promise<void> {
    await this.commands.call(() => this.commands.send('publish', [this.prefix + topic, text]));
  }

  listen(topic: string, listener: (text: string) => void): { listening: Promise<void>; stop: () => void } {
    const { subscribed, stop } = this.channels.listen(this.prefix + topic, listener);
    return { listening: subscribed.then(() => {}), stop };
  }

  async close(): Promise<void> {
    await this.channels.close();
    await this.commands.close();
  }
}

export const redisPubSubAdapter: AdapterFactory<'pubsub', RedisPubSubConfig> = {
  family: 'pubsub',
  name: 'redis',
  description: 'messages over Redis channels (redis_url, channel_prefix), to the subscribers of every engine using it',
  configSchema: redisPubSubConfigSchema,
  open: (config, env) => RedisPubSub.open(config, env.logger),
};
