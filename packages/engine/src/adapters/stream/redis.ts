import { z } from 'zod';
import type { AdapterFactory } from '../../core/api/adapters.js';
import { RedisKvStore } from '../kv/redis.js';
import type { KvUpdateResult, KvUpdater, KvWriteResult } from '../kv/types.js';
import type { AdapterLog } from '../shared/log.js';
import { RedisChannels } from '../shared/redis-channels.js';
import { RedisConnection } from '../shared/redis-connection.js';
import { groupScope } from './group-scope.js';
import { KvStreamStore } from './kv-streams.js';
import type { FrameParts, StreamFrame, UpdateFrame } from './types.js';

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
 * `redis`: a hash per stream group (the redis kv store's layout) and Redis pub/sub for frames, so that
 * subscribers on every engine sharing the Redis (and the prefix) see every engine's writes.
 *
 * Each write PUBLISHes its frame from inside its own Lua script, and every engine (the writer too) takes
 * the frames from its subscription (shared/redis-channels.ts): all engines see the frames in the order
 * the writes were stored, so a subscriber always ends with the value Redis holds, whoever wrote last.
 * Pub/sub keeps nothing: a client connected to an engine whose subscription was down misses those frames
 * (it gets the current values when it joins again).
 */
export class RedisStreamStore extends KvStreamStore {
  override readonly shared = true;
  private readonly channel: string;
  private readonly items: RedisKvStore;

  private constructor(
    private readonly commands: RedisConnection,
    private readonly channels: RedisChannels,
    config: RedisStreamConfig,
  ) {
    const items = RedisKvStore.on(commands, config);
    super(items);
    this.items = items;
    this.channel = `${config.key_prefix}events`;
  }

  static async open(config: RedisStreamConfig, logger?: AdapterLog): Promise<RedisStreamStore> {
    const options = { url: config.redis_url, commandTimeoutMs: config.command_timeout_ms, logger };
    const commands = await RedisConnection.open({ ...options, connectionName: 'flint-stream' });
    let listening: RedisConnection;
    try {
      listening = await RedisConnection.open({ ...options, connectionName: 'flint-stream-events' });
    } catch (err) {
      await commands.close();
      throw err;
    }
    const store = new RedisStreamStore(commands, new RedisChannels(listening), config);
    const { subscribed } = store.channels.listen(store.channel, (text) => store.receive(text));
    if (!(await subscribed)) {
      await store.close();
      throw listening.failure(`channel ${store.channel} could not be subscribed`);
    }
    return store;
  }

  override get kind(): string {
    return 'redis';
  }

  override set(stream: string, group: string, item: string, value: unknown, frame: FrameParts): Promise<KvWriteResult> {
    const notice = { channel: this.channel, before: frame.before, ifNew: 'create', ifExisted: 'update', after: frame.after };
    return this.items.set(groupScope(stream, group), item, value, notice);
  }

  override delete(stream: string, group: string, item: string, frame: FrameParts): Promise<KvWriteResult> {
    return this.items.delete(groupScope(stream, group), item, { channel: this.channel, ...frame });
  }

  override update<R>(stream: string, group: string, item: string, updater: KvUpdater<R>, frame: UpdateFrame): Promise<KvUpdateResult<R>> {
    return this.items.update(groupScope(stream, group), item, updater, (existed, value) => ({ channel: this.channel, text: frame(existed, value) }));
  }

  override async publish(frame: StreamFrame): Promise<void> {
    await this.commands.call(() => this.commands.send('publish', [this.channel, frame.text]));
  }

  override async close(): Promise<void> {
    await this.channels.close();
    await super.close();
  }

  /** A frame from the channel: the routing fields are read back from its text. */
  private receive(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    // Anything may be published on the channel: only a frame object is delivered.
    if (typeof parsed !== 'object' || parsed === null) return;
    const { streamName, groupId, id } = parsed as { streamName?: unknown; groupId?: unknown; id?: unknown };
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
