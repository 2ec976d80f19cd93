import type { AdapterFactory } from '../../../core/api/adapters.js';
import { type RedisQueueConfig, redisQueueConfigSchema } from './config.js';
import { RedisQueueBackend } from './redis-backend.js';

/** The `redis` queue adapter: work queues on a Redis server, shared by every engine on the same prefix. */
export const redisQueueAdapter: AdapterFactory<'queue', RedisQueueConfig> = {
  family: 'queue',
  name: 'redis',
  description: 'work queues on a Redis server (redis_url, prefix), shared by every engine using the same prefix',
  configSchema: redisQueueConfigSchema,
  open: (config, env) => RedisQueueBackend.open(config, env.logger),
};
