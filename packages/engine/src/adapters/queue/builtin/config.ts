import { z } from 'zod';

/** The config of the `builtin` queue adapter: queues in memory, or in a folder (`file_based`). */
export const builtinQueueConfigSchema = z
  .strictObject({
    store_method: z.enum(['in_memory', 'file_based']).default('in_memory'),
    /** file_based: the folder; relative paths resolve against the config file's folder. */
    file_path: z.string().min(1).default('./data/queue'),
    /** file_based: compact the log into a snapshot once it holds this many bytes (and at least as much as the last snapshot). */
    compact_after_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024),
  })
  .prefault({});

export type BuiltinQueueConfig = z.output<typeof builtinQueueConfigSchema>;
