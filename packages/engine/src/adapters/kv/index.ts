import { resolve } from 'node:path';
import { FlintError } from '@flint/protocol';
import { openFileKvStore } from './file/store.js';
import { MemoryKvStore } from './memory.js';
import { openRedisKvStore } from './redis.js';
import type { KvStoreFactory } from './types.js';

/** The engine's KvStore factory: in_memory, file_based or redis, as the adapter config says. */
export const openKvStore: KvStoreFactory = async (config, options) => {
  if (config.name === 'kv' && config.config.store_method === 'in_memory') return new MemoryKvStore();
  if (config.name === 'kv' && config.config.store_method === 'file_based') {
    // A relative file_path resolves against the config file's folder, not the working directory.
    return openFileKvStore(resolve(options.configDir, config.config.file_path), { compactAfterBytes: config.config.compact_after_bytes, logger: options.log });
  }
  if (config.name === 'redis') return openRedisKvStore(config.config, options.log);
  // Unreachable while the config schema and this switch agree; never echo the config (it may hold a password).
  throw new FlintError('internal_error', `kv adapter "${config.name}" is not available`);
};
