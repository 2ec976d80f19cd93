import { z } from 'zod';
import { adapterRef } from '../../lib/adapter-ref.js';
import { positiveInt } from '../../lib/config-fields.js';

export const cronConfigSchema = z.strictObject({
  /** The lock each slot is taken under: `{name: memory}` (one engine) or `{name: redis, config: {redis_url}}`. */
  adapter: adapterRef({ name: 'memory' }),
  /** A `kv` adapter keeping each job's last fired slot and last run (file_based or redis: catch-up survives restarts). */
  store: adapterRef({ name: 'kv', config: { store_method: 'in_memory' } }),
  /** How long a slot's lock lives: an engine whose clock is later than this still finds the slot taken. */
  lock_ttl_ms: positiveInt(10 * 60_000),
  /** A run that has not answered after this long is failed (timed out). */
  run_timeout_ms: positiveInt(30 * 60_000),
});

export type CronConfig = z.output<typeof cronConfigSchema>;
