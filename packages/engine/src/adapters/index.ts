// TEMPORARY (replaced by the adapters branch): the kv adapters as factories over openKvStore.
import { z } from 'zod';
import type { AdapterFactory } from '../core/api/adapters.js';
import { openKvStore } from './kv/index.js';
import { type KvStore, kvAdapterSchema } from './kv/types.js';

declare module '../core/api/adapters.js' {
  interface AdapterFamilies {
    kv: KvStore;
  }
}

const configOf = (name: 'kv' | 'redis') =>
  (kvAdapterSchema.options.find((o) => o.shape.name.value === name) as unknown as { shape: { config: z.ZodType } }).shape.config;

export const ADAPTERS: AdapterFactory[] = (['kv', 'redis'] as const).map(
  (name) =>
    ({
      family: 'kv',
      name,
      description: name,
      configSchema: configOf(name),
      open: (config: unknown, env) =>
        openKvStore({ name, config } as never, { configDir: env.configDir, log: { warn: (m) => env.logger.warn(m), info: (m) => env.logger.info(m) } }),
    }) as AdapterFactory,
);
void z;
