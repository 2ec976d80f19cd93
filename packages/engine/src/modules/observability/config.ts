import { z } from 'zod';
import { positiveInt } from '../../lib/config-fields.js';

/**
 * `flint-observability` config (strict): the log store and what feeds it. Each `OTEL_*`-style
 * environment fallback applies only when the key is absent.
 */
export const observabilityConfigSchema = z.strictObject({
  /** The `service.name` of records the engine writes itself. */
  service_name: z
    .string()
    .min(1)
    .default(process.env.OTEL_SERVICE_NAME ?? 'flint'),
  /** Keep logs (the engine's own, `engine::log::*` calls) for `engine::logs::list` and `log` triggers. */
  logs_enabled: z.boolean().default(true),
  /** Records kept at most (the oldest go first). */
  logs_max_count: positiveInt(10_000),
  /** Estimated bytes kept at most (the oldest go first). */
  logs_max_bytes: positiveInt(32 * 1024 * 1024),
  /** Records older than this are dropped by a sweep every minute; 0 keeps them until a cap pushes them out. */
  logs_retention_seconds: z.number().int().min(0).default(3600),
  /** The least level of the engine's own records that are kept (workers' records are all kept). */
  level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
});

export type ObservabilityConfig = z.output<typeof observabilityConfigSchema>;
