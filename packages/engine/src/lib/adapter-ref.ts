import { z } from 'zod';

/**
 * The zod schema of a module config key that names an adapter (`adapter: {name: redis, config: {…}}`),
 * with a default. The loader then checks the name against the family's adapters and the config
 * against that adapter's schema (the module lists the key in its definition's `adapters`).
 */
export function adapterRef(defaultRef: { name: string; config?: Record<string, unknown> }) {
  return z.looseObject({ name: z.string().min(1), config: z.record(z.string(), z.unknown()).optional() }).default({ ...defaultRef });
}
