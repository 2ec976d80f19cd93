import type { AdapterFactory } from '../../core/api/adapters.js';
import { bridgeKvAdapter } from './bridge.js';
import { kvAdapter } from './kv-adapter.js';
import { redisKvAdapter } from './redis.js';

/** The kv family: `kv` (in_memory or file_based, by store_method), `redis`, and `bridge` (another engine's state; flint-state only). */
export const kvAdapters: AdapterFactory<'kv'>[] = [kvAdapter, redisKvAdapter, bridgeKvAdapter as AdapterFactory<'kv'>];
