import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AdapterFactory } from '../../core/api/adapters.js';
import { RedisKvStore } from '../kv/redis.js';
import type { AdapterLog } from '../shared/log.js';
import { RedisConnection } from '../shared/redis-connection.js';
import { KvStreamStore } from './kv-streams.js';
import type { StreamFrame } from './types.js';

export const redisStreamConfigSchema = z
  .strictObject({
    redis_url: z.string().min(1).default('redis://127.0.0.1:6379'),
    /** Groups are hashes `${key_prefix}<stream>:<group>`; frames go over the channel `${key_prefix}events`. */
    key_prefix: z.string().default('flint:stream:'),
    /** A command that gets no answer within this time fails with store_unavailable. */
    command_timeout_ms: z.number().int().positive().default(2000),
  })
  .prefault({});

export type RedisStreamConfig = z.output<typeof redisStreamConfigSchema>;

/**
 * `redis`: a hash per stream group (the redis kv store's layout and scripts) and Redis pub/sub for frames,
 * so that subscribers on every engine sharing the Redis (and the prefix) see every engine's writes.
 *
 * A frame is delivered to this engine's listeners at once and PUBLISHed as `<engine id>\n<frame text>`;
 * each engine skips its own on the way back. The subscriber has a connection of its own (a subscribed
 * connection can run nothing else); ioredis subscribes again when Redis comes back. Frames published
 * while Redis is down are lost for the other engines (pub/sub keeps nothing), which the log says once
 * per outage; the writes themselves fail with store_unavailable meanwhile.
 */
export class RedisStreamStore extends KvStreamStore {
  override readonly shared = true;
  private readonly origin = randomUUID();
  private readonly channel: string;
  private publishFailing = false;

  private constructor(
    private readonly commands: RedisConnection,
    private readonly subscriber: RedisConnection,
    config: RedisStreamConfig,
    private readonly logger: AdapterLog | undefined,
  ) {
    super(RedisKvStore.on(commands, config));
    this.channel = `${config.key_prefix}events`;
    subscriber.client.on('message', (_channel: string, message: string) => this.receive(message));
    // ioredis subscribes again by itself when Redis comes back; asking once more covers a SUBSCRIBE lost
    // in the reconnection (subscribing twice to a channel is harmless).
    // (The connection was opened before this listener was added: every 'ready' it sees is a reconnection.)
    subscriber.client.on('ready', () => {
      void subscriber.call(() => subscriber.client.subscribe(this.channel)).catch(() => {});
    });
  }

  static async open(config: RedisStreamConfig, logger?: AdapterLog): Promise<RedisStreamStore> {
    const options = { url: config.redis_url, commandTimeoutMs: config.command_timeout_ms, logger };
    const commands = await RedisConnection.open({ ...options, connectionName: 'flint-stream' });
    let subscriber: RedisConnection;
    try {
      subscriber = await RedisConnection.open({ ...options, connectionName: 'flint-stream-events' });
    } catch (err) {
      await commands.close();
      throw err;
    }
    const store = new RedisStreamStore(commands, subscriber, config, logger);
    try {
      await subscriber.call(() => subscriber.client.subscribe(store.channel));
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  override get kind(): string {
    return 'redis';
  }

  override publish(frame: StreamFrame): void {
    this.deliver(frame);
    this.commands
      .call(() => this.commands.client.publish(this.channel, `${this.origin}\n${frame.text}`))
      .then(
        () => {
          if (!this.publishFailing) return;
          this.publishFailing = false;
          this.logger?.info(`stream frames reach the other engines again (channel ${this.channel})`);
        },
        (err: Error) => {
          if (this.publishFailing) return;
          this.publishFailing = true;
          this.logger?.warn(`stream frames cannot reach the other engines: ${err.message}`);
        },
      );
  }

  override async close(): Promise<void> {
    await this.subscriber.close();
    await super.close();
  }

  private receive(message: string): void {
    const newline = message.indexOf('\n');
    if (newline < 0 || message.slice(0, newline) === this.origin) return;
    const text = message.slice(newline + 1);
    let parsed: { streamName?: unknown; groupId?: unknown; id?: unknown };
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    const { streamName, groupId, id } = parsed;
    if (typeof streamName !== 'string' || typeof groupId !== 'string') return;
    this.deliver({ stream: streamName, group: groupId, id: typeof id === 'string' ? id : null, text });
  }
}

export const redisStreamAdapter: AdapterFactory<'stream', RedisStreamConfig> = {
  family: 'stream',
  name: 'redis',
  description: 'stream items in Redis hashes and frames over Redis pub/sub (redis_url, key_prefix), shared by every engine using it',
  configSchema: redisStreamConfigSchema,
  open: (config, env) => RedisStreamStore.open(config, env.logger),
};
