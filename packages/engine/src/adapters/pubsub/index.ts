import type { AdapterFactory } from '../../core/api/adapters.js';
import { localPubSubAdapter } from './local.js';
import { redisPubSubAdapter } from './redis.js';

/** The pubsub family: `local` (one engine) and `redis` (every engine on the Redis). */
export const pubsubAdapters: AdapterFactory<'pubsub'>[] = [localPubSubAdapter as AdapterFactory<'pubsub'>, redisPubSubAdapter as AdapterFactory<'pubsub'>];
