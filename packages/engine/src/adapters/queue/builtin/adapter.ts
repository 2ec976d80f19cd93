import type { AdapterFactory } from '../../../core/api/adapters.js';
import { type BuiltinQueueConfig, builtinQueueConfigSchema } from './config.js';
import { MemoryQueueBackend } from './memory-backend.js';

/** The `builtin` queue adapter: queues inside the engine process. */
export const builtinQueueAdapter: AdapterFactory<'queue', BuiltinQueueConfig> = {
  family: 'queue',
  name: 'builtin',
  description: 'queues inside the engine (store_method: in_memory)',
  configSchema: builtinQueueConfigSchema,
  async open() {
    return new MemoryQueueBackend('in_memory');
  },
};
