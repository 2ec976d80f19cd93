import { z } from 'zod';
import { kvAdapterSchema } from '../../adapters/kv/types.js';

export const stateConfigSchema = z.strictObject({
  adapter: kvAdapterSchema.default({
    name: 'kv',
    config: { store_method: 'in_memory', file_path: './data/state', compact_after_bytes: 64 * 1024 * 1024 },
  }),
  /** Largest value (as JSON) that set/update accept. */
  max_value_bytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
});

export type StateConfig = z.output<typeof stateConfigSchema>;
