import type { AdapterFactory, AdapterFamilies, AdapterFamily, AdapterInstance } from '../core/api/adapters.js';
import { kvAdapters } from './kv/index.js';
import { type OpenAdapterOptions, openAdapterFrom } from './shared/open.js';

/** Builds the AdapterCatalog (config validation's view) of a table, e.g. `adapterCatalog(ADAPTERS)`. */
export { adapterCatalog } from './shared/open.js';

/** Every adapter, by `(family, name)`: the table the composition root hands the engine. */
export const ADAPTERS: readonly AdapterFactory[] = [...kvAdapters];

/**
 * Opens the adapter of `family` that `ref` (`{name, config}`) names, from `ADAPTERS`; see `openAdapterFrom`.
 * Without a logger, warnings go to `process.emitWarning`.
 */
export function openAdapter<F extends AdapterFamily>(
  family: F,
  ref: unknown,
  options: Omit<OpenAdapterOptions, 'log'>,
): Promise<AdapterFamilies[F] & AdapterInstance> {
  return openAdapterFrom(ADAPTERS, family, ref, options);
}
