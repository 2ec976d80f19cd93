import { FlintError } from '@flint/protocol';
import { ADAPTERS } from './adapters/index.js';
import { AdapterTable } from './core/adapter-table.js';
import { type Logger, createLogger } from './core/logger.js';
import type { AdapterFamilies, AdapterFamily, AdapterInstance } from './core/module-api.js';

let table: AdapterTable | undefined;
let stderrLogger: Logger | undefined;

/**
 * Opens an adapter outside an engine (tools, tests, embedding), as a module's `ctx.adapter` does:
 * `ref` (`{name, config}`) is checked against the family's adapters and the named adapter's config
 * schema; an unknown family or name, or a bad config, fails with a FlintError listing the problems
 * (never the config's values: they may hold a password). Without a logger, warnings go to stderr.
 */
export function openAdapter<F extends AdapterFamily>(
  family: F,
  ref: unknown,
  options: { configDir: string; logger?: Logger },
): Promise<AdapterFamilies[F] & AdapterInstance> {
  table ??= new AdapterTable(ADAPTERS);
  const resolved = table.resolve(family, ref);
  if (!resolved.ok) {
    const problems = resolved.problems.map((p) => (p.path.length > 0 ? `${p.path.map(String).join('.')}: ${p.message}` : p.message));
    return Promise.reject(new FlintError('internal_error', `invalid ${family} adapter: ${problems.join('; ')}`, { details: { family, problems } }));
  }
  stderrLogger ??= createLogger({ level: 'warn', destination: process.stderr });
  return table.open(family, resolved.ref, { configDir: options.configDir, logger: options.logger ?? stderrLogger });
}
