import type { AdapterFactory } from '../../core/api/adapters.js';
import { builtinQueueAdapter } from './builtin/adapter.js';
import { redisQueueAdapter } from './redis/adapter.js';

/** The queue family: `builtin` and `redis`. */
export const queueAdapters: AdapterFactory<'queue'>[] = [builtinQueueAdapter, redisQueueAdapter];
