import type { AdapterFactory } from '../../core/api/adapters.js';
import { memoryLockAdapter } from './memory.js';
import { redisLockAdapter } from './redis.js';

/** The lock family: `memory` (one engine) and `redis` (shared by the engines on one Redis). */
export const lockAdapters: AdapterFactory<'lock'>[] = [memoryLockAdapter as AdapterFactory<'lock'>, redisLockAdapter as AdapterFactory<'lock'>];
