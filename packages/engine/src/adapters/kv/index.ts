import type { AdapterFactory } from '../../core/api/adapters.js';
import { openAdapterFrom } from '../shared/open.js';
import { kvAdapter } from './kv-adapter.js';
import { redisKvAdapter } from './redis.js';
import type { KvStoreFactory } from './types.js';

/** The kv family: `kv` (in_memory or file_based, by store_method) and `redis`. */
export const kvAdapters: AdapterFactory<'kv'>[] = [kvAdapter, redisKvAdapter];

/** The engine's KvStore factory: opens the kv adapter a (state module) config names, from `kvAdapters`. */
export const openKvStore: KvStoreFactory = (config, options) => openAdapterFrom(kvAdapters, 'kv', config, { configDir: options.configDir, log: options.log });
