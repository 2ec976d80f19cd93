import { FlintError } from '@flint/protocol';
import type { AdapterCatalog, AdapterFactory, AdapterFamilies, AdapterFamily, AdapterInstance, AdapterProblem } from '../../core/api/adapters.js';
import type { Logger } from '../../core/logger.js';
import { type AdapterLog, loggerFor, processWarnings } from './log.js';

/** How `openAdapterFrom` reports what happens to the instance. */
export interface OpenAdapterOptions {
  /** Folder that relative paths in the adapter config resolve against. */
  configDir: string;
  /** Where the instance reports (a damaged record skipped, a connection lost and restored). */
  logger?: Logger;
  /** The same as a plain `{warn, info}` pair, used when `logger` is not given. Neither: `process.emitWarning`. */
  log?: AdapterLog;
}

type Lookup = { ok: true; factory: AdapterFactory; config: unknown } | { ok: false; problems: AdapterProblem[] };

const list = (names: Iterable<string>): string => [...new Set(names)].join(', ');

/** Finds the factory a reference names and validates its config (defaults filled in). */
function lookup(table: readonly AdapterFactory[], family: string, ref: unknown): Lookup {
  const factories = table.filter((factory) => factory.family === family);
  if (factories.length === 0) {
    return { ok: false, problems: [{ path: [], message: `unknown adapter family ${JSON.stringify(family)} (known: ${list(table.map((f) => f.family))})` }] };
  }
  const known = list(factories.map((f) => f.name));
  if (typeof ref !== 'object' || ref === null || Array.isArray(ref)) {
    return { ok: false, problems: [{ path: [], message: `expected {name, config} naming a ${family} adapter (known: ${known})` }] };
  }
  const { name, config, ...rest } = ref as Record<string, unknown>;
  const problems: AdapterProblem[] = Object.keys(rest).map((key) => ({ path: [key], message: `unknown key ${JSON.stringify(key)}` }));
  const factory = factories.find((f) => f.name === name);
  if (!factory) {
    const what = typeof name === 'string' ? `unknown ${family} adapter ${JSON.stringify(name)}` : `expected the name of a ${family} adapter`;
    return { ok: false, problems: [{ path: ['name'], message: `${what} (known: ${known})` }, ...problems] };
  }
  const parsed = factory.configSchema.safeParse(config);
  if (!parsed.success) problems.push(...parsed.error.issues.map((issue) => ({ path: ['config', ...issue.path], message: issue.message })));
  return problems.length > 0 || !parsed.success ? { ok: false, problems } : { ok: true, factory, config: parsed.data };
}

/** The adapter table as config validation sees it: a reference checked against its factory's schema. */
export function adapterCatalog(table: readonly AdapterFactory[]): AdapterCatalog {
  return {
    resolve(family, ref) {
      const found = lookup(table, family, ref);
      return found.ok ? { ok: true, ref: { name: found.factory.name, config: found.config } } : found;
    },
  };
}

let processWarningsLogger: Logger | undefined;

/**
 * Opens the adapter `ref` names from `table`: looks up `(family, ref.name)`, validates `ref.config`
 * with the factory's schema and opens it. An unknown family or name, or a config its schema rejects,
 * fails with a FlintError `internal_error` that lists the known names and the problems (never the
 * config's values: they may hold a password); a backend that cannot be reached with `store_unavailable`.
 */
export async function openAdapterFrom<F extends AdapterFamily>(
  table: readonly AdapterFactory[],
  family: F,
  ref: unknown,
  options: OpenAdapterOptions,
): Promise<AdapterFamilies[F] & AdapterInstance> {
  const found = lookup(table, family, ref);
  if (!found.ok) {
    const problems = found.problems.map((p) => (p.path.length > 0 ? `${p.path.map(String).join('.')}: ${p.message}` : p.message));
    throw new FlintError('internal_error', `invalid ${family} adapter: ${problems.join('; ')}`, { details: { family, problems } });
  }
  let logger = options.logger;
  if (!logger && options.log) logger = loggerFor(options.log);
  logger ??= processWarningsLogger ??= loggerFor(processWarnings);
  // The factory was found under `family`, so its instance is that family's.
  return (await found.factory.open(found.config, { configDir: options.configDir, logger })) as AdapterFamilies[F] & AdapterInstance;
}
