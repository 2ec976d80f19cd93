import type { AdapterFactory } from '../core/api/adapters.js';
import { kvAdapters } from './kv/index.js';
import { lockAdapters } from './lock/index.js';
import { pubsubAdapters } from './pubsub/index.js';
import { queueAdapters } from './queue/index.js';
import { streamAdapters } from './stream/index.js';

/** Every adapter, by `(family, name)`: the table the composition root hands the engine. */
export const ADAPTERS: readonly AdapterFactory[] = [...kvAdapters, ...queueAdapters, ...lockAdapters, ...streamAdapters, ...pubsubAdapters];
