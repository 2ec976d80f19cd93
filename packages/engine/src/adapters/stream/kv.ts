import type { AdapterFactory } from '../../core/api/adapters.js';
import { kvAdapter } from '../kv/kv-adapter.js';
import { fileStoreConfigSchema } from '../shared/file-store-config.js';
import { KvStreamStore } from './kv-streams.js';

/** The config of the stream family's `kv` adapter: the kv adapter's keys, with its own default folder. */
export const kvStreamConfigSchema = fileStoreConfigSchema('./data/streams');

/** `kv`: items in memory or in a folder, frames within this engine (one engine only). */
export const kvStreamAdapter: AdapterFactory<'stream', ReturnType<typeof kvStreamConfigSchema.parse>> = {
  family: 'stream',
  name: 'kv',
  description: 'stream items in memory (store_method: in_memory) or in a folder (store_method: file_based, file_path); one engine',
  configSchema: kvStreamConfigSchema,
  async open(config, env) {
    return new KvStreamStore(await kvAdapter.open(config, env));
  },
};
