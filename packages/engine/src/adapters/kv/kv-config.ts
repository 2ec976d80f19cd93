import { z } from 'zod';

/** The config of the `kv` adapter: in memory, or in a folder (`file_based`). */
export const kvConfigSchema = z
  .strictObject({
    store_method: z.enum(['in_memory', 'file_based']).default('in_memory'),
    /** A folder; relative paths resolve against the config file's folder. */
    file_path: z.string().min(1).default('./data/state'),
    /** Compact the log into a snapshot once it holds this many bytes. */
    compact_after_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024),
  })
  .prefault({});

export type KvConfig = z.output<typeof kvConfigSchema>;
