import type { AdapterFactory } from '../../core/api/adapters.js';
import { builtinQueueAdapter } from './builtin/adapter.js';
import { rabbitmqQueueAdapter } from './rabbitmq/adapter.js';
import { redisQueueAdapter } from './redis/adapter.js';

/** The queue family: `builtin`, `redis` and `rabbitmq`. */
export const queueAdapters: AdapterFactory<'queue'>[] = [builtinQueueAdapter, redisQueueAdapter, rabbitmqQueueAdapter];
