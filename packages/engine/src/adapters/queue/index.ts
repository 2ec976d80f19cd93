import type { AdapterFactory } from '../../core/api/adapters.js';
import { builtinQueueAdapter } from './builtin/adapter.js';
import { rabbitmqQueueAdapter } from './rabbitmq/adapter.js';

/** The queue family: `builtin` and `rabbitmq`. */
export const queueAdapters: AdapterFactory<'queue'>[] = [builtinQueueAdapter, rabbitmqQueueAdapter];
