import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { AdapterFactory } from '../../core/api/adapters.js';
import type { AdapterLog } from '../shared/log.js';
import { RedisConnection } from '../shared/redis-connection.js';
import { defineScripts } from '../shared/redis-scripts.js';
import type { LockBackend } from './types.js';

export const redisLockConfigSchema = z
  .strictObject({
    redis_url: z.string().min(1).default('redis://127.0.0.1:6379'),
    /** Lock keys are `${prefix}${key}`; engines sharing a prefix share the locks. */
    prefix: z.string().default('flint:lock:'),
    /** A command that gets no answer within this time fails with store_unavailable. */
    command_timeout_ms: z.number().int().positive().default(2000),
    /** How long start-up waits for Redis. */
    connect_timeout_ms: z.number().int().positive().default(5000),
  })
  .prefault({});

export type RedisLockConfig = z.output<typeof redisLockConfigSchema>;

/** Deletes the key only when it still holds the caller's owner id (a lock that expired and was taken by another stays). */
const RELEASE_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

interface LockScripts {
  flintLockRelease(key: string, owner: string): Promise<number>;
}

/** Locks on a Redis server: `SET key owner NX PX ttl` to take, a compare-and-delete script to release. */
export class RedisLocks implements LockBackend {
  readonly kind = 'redis';
  readonly shared = true;
  private readonly redis: Redis;
  private readonly scripts: LockScripts;

  private constructor(
    private readonly connection: RedisConnection,
    private readonly prefix: string,
  ) {
    this.scripts = defineScripts<LockScripts>(connection.send, { flintLockRelease: { numberOfKeys: 1, lua: RELEASE_LUA } });
    this.redis = connection.client;
  }

  static async open(config: RedisLockConfig, logger?: AdapterLog): Promise<RedisLocks> {
    const connection = await RedisConnection.open({
      url: config.redis_url,
      connectionName: 'flint-lock',
      commandTimeoutMs: config.command_timeout_ms,
      openTimeoutMs: config.connect_timeout_ms,
      logger,
    });
    return new RedisLocks(connection, config.prefix);
  }

  async acquire(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const reply = await this.connection.call(() => this.redis.set(this.prefix + key, owner, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'));
    return reply === 'OK';
  }

  async release(key: string, owner: string): Promise<boolean> {
    return (await this.connection.call(() => this.scripts.flintLockRelease(this.prefix + key, owner))) === 1;
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}

export const redisLockAdapter: AdapterFactory<'lock', RedisLockConfig> = {
  family: 'lock',
  name: 'redis',
  description: 'locks on a Redis server (redis_url, prefix), shared by every engine using the same prefix',
  configSchema: redisLockConfigSchema,
  open: (config, env) => RedisLocks.open(config, env.logger),
};
