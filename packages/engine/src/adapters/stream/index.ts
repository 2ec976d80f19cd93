import type { AdapterFactory } from '../../core/api/adapters.js';
import { kvStreamAdapter } from './kv.js';
import { redisStreamAdapter } from './redis.js';

/** The stream family: `kv` (in_memory or file_based, one engine) and `redis` (shared by engines). */
export const streamAdapters: AdapterFactory<'stream'>[] = [kvStreamAdapter as AdapterFactory<'stream'>, redisStreamAdapter as AdapterFactory<'stream'>];
