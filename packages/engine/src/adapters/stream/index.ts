import type { AdapterFactory } from '../../core/api/adapters.js';
import { bridgeStreamAdapter } from './bridge.js';
import { kvStreamAdapter } from './kv.js';
import { redisStreamAdapter } from './redis.js';

/** The stream family: `kv` (in_memory or file_based, one engine), `redis` (shared by engines) and `bridge` (another engine's streams). */
export const streamAdapters: AdapterFactory<'stream'>[] = [
  kvStreamAdapter as AdapterFactory<'stream'>,
  redisStreamAdapter as AdapterFactory<'stream'>,
  bridgeStreamAdapter as AdapterFactory<'stream'>,
];
