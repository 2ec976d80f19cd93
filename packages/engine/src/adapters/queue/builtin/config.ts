import type { z } from 'zod';
import { fileStoreConfigSchema } from '../../shared/file-store-config.js';

/** The config of the `builtin` queue adapter: queues in memory, or in a folder (`file_based`). */
export const builtinQueueConfigSchema = fileStoreConfigSchema('./data/queue');

export type BuiltinQueueConfig = z.output<typeof builtinQueueConfigSchema>;
