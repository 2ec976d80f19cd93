import { z } from 'zod';

/** The config of the `builtin` queue adapter. */
export const builtinQueueConfigSchema = z
  .strictObject({
    store_method: z.enum(['in_memory']).default('in_memory'),
  })
  .prefault({});

export type BuiltinQueueConfig = z.output<typeof builtinQueueConfigSchema>;
