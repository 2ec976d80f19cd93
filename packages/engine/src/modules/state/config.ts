import { z } from 'zod';
import { adapterRef } from '../../lib/adapter-ref.js';
import { positiveInt } from '../../lib/config-fields.js';

export const stateConfigSchema = z.strictObject({
  /** A `kv` adapter: `{name: kv, config: {store_method: in_memory | file_based, …}}` or `{name: redis, config: {…}}`. */
  adapter: adapterRef({ name: 'kv', config: { store_method: 'in_memory' } }),
  /** Largest value (as JSON) that set/update accept. */
  max_value_bytes: positiveInt(1024 * 1024),
});

export type StateConfig = z.output<typeof stateConfigSchema>;
