import type { AdapterFactory } from '../../core/api/adapters.js';
import { kvAdapter } from './kv-adapter.js';
import { redisKvAdapter } from './redis.js';

/** The kv family: `kv` (in_memory or file_based, by store_method) and `redis`. */
export const kvAdapters: AdapterFactory<'kv'>[] = [kvAdapter, redisKvAdapter];
