import { resolve } from 'node:path';
import type { AdapterFactory } from '../../../core/api/adapters.js';
import { type BuiltinQueueConfig, builtinQueueConfigSchema } from './config.js';
import { FileQueueBackend } from './file/store.js';
import { MemoryQueueBackend } from './memory-backend.js';

/** The `builtin` queue adapter: queues inside the engine process, in memory or kept in a folder (see file/). */
export const builtinQueueAdapter: AdapterFactory<'queue', BuiltinQueueConfig> = {
  family: 'queue',
  name: 'builtin',
  description: 'queues inside the engine (store_method: in_memory, or file_based with file_path: crash-safe, data kept on disk)',
  configSchema: builtinQueueConfigSchema,
  async open(config, env) {
    if (config.store_method === 'in_memory') return new MemoryQueueBackend('in_memory');
    // A relative file_path resolves against the config file's folder, not the working directory.
    return FileQueueBackend.open(resolve(env.configDir, config.file_path), { compactAfterBytes: config.compact_after_bytes, logger: env.logger });
  },
};
