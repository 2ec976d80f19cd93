import type { ZodType } from 'zod';
import type { Logger } from '../logger.js';

/**
 * The adapter families, by name, mapped to the interface their adapters implement. Empty here: each
 * family adds itself from its own `adapters/<family>/types.ts` by declaration merging, e.g.
 *
 * ```ts
 * declare module '../../core/api/adapters.js' {
 *   interface AdapterFamilies { kv: KvStore }
 * }
 * ```
 *
 * so that `ctx.adapter('kv', ref)` is typed `Promise<KvStore>` and adding a family touches nothing in core.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging (see above)
export interface AdapterFamilies {}

export type AdapterFamily = keyof AdapterFamilies & string;

/** What every adapter instance offers besides its family's interface. */
export interface AdapterInstance {
  /** Flushes and releases what the instance holds (connections, locks, files). Called once, at the owner's stop. */
  close(): Promise<void>;
}

/** A module config's reference to an adapter: `{name: redis, config: {redis_url: …}}`. */
export interface AdapterRef {
  name: string;
  /** The adapter's own config, validated by its factory's schema (defaults filled in). */
  config?: unknown;
}

/** What a factory gets when it opens an instance. */
export interface AdapterEnv {
  /** Folder of the config file: relative paths in adapter configs resolve against it. */
  configDir: string;
  /** Where the instance reports what happens to it (a connection lost and restored, a damaged record skipped). */
  logger: Logger;
}

/**
 * One adapter: a `(family, name)` pair, the zod schema of its config (strict, defaults inside) and
 * `open`, which connects and returns the instance or rejects with a FlintError (`store_unavailable`
 * when the backend cannot be reached). The composition root hands the engine one table of these.
 */
export interface AdapterFactory<F extends AdapterFamily = AdapterFamily, C = unknown> {
  family: F;
  name: string;
  /** One line for error messages and docs. */
  description: string;
  configSchema: ZodType<C>;
  open(config: C, env: AdapterEnv): Promise<AdapterFamilies[F] & AdapterInstance>;
}

/** A problem with an adapter reference, found while the config is validated. */
export interface AdapterProblem {
  /** Path inside the reference (`['name']`, `['config', 'redis_url']`). */
  path: PropertyKey[];
  message: string;
}

/** The adapter table as config validation sees it. */
export interface AdapterCatalog {
  /** Validates a reference: its name among the family's adapters, its config against that adapter's schema. */
  resolve(family: string, ref: unknown): { ok: true; ref: AdapterRef } | { ok: false; problems: AdapterProblem[] };
}
