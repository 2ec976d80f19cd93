import { z } from 'zod';

/**
 * The config keys of a builtin store that lives in memory or in a folder (the kv adapter, the builtin
 * queue): `store_method`, `file_path` (relative paths resolve against the config file's folder) and
 * `compact_after_bytes`, strict, with defaults.
 */
export function fileStoreConfigSchema(defaultPath: string) {
  return z
    .strictObject({
      store_method: z.enum(['in_memory', 'file_based']).default('in_memory'),
      /** file_based: the folder; relative paths resolve against the config file's folder. */
      file_path: z.string().min(1).default(defaultPath),
      /** file_based: compact the log into a snapshot once it holds this many bytes (the queue store also waits for it to hold as much as the last snapshot). */
      compact_after_bytes: z
        .number()
        .int()
        .positive()
        .default(64 * 1024 * 1024),
    })
    .prefault({});
}
