import type { z } from 'zod';
import { fileStoreConfigSchema } from '../shared/file-store-config.js';

/** The config of the `kv` adapter: in memory, or in a folder (`file_based`). */
export const kvConfigSchema = fileStoreConfigSchema('./data/state');

export type KvConfig = z.output<typeof kvConfigSchema>;
