import { resolve } from 'node:path';
import type { AdapterFactory } from '../../core/api/adapters.js';
import { FileKvStore } from './file/store.js';
import { type KvConfig, kvConfigSchema } from './kv-config.js';
import { MemoryKvStore } from './memory.js';

/** The `kv` adapter: `in_memory` (lost on restart) or `file_based` (a folder, crash-safe; see file/). */
export const kvAdapter: AdapterFactory<'kv', KvConfig> = {
  family: 'kv',
  name: 'kv',
  description: 'key-value store in memory (store_method: in_memory) or in a folder (store_method: file_based, file_path)',
  configSchema: kvConfigSchema,
  async open(config, env) {
    if (config.store_method === 'in_memory') return new MemoryKvStore();
    // A relative file_path resolves against the config file's folder, not the working directory.
    return FileKvStore.open(resolve(env.configDir, config.file_path), { compactAfterBytes: config.compact_after_bytes, logger: env.logger });
  },
};
