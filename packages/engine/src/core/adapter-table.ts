import { FlintError } from '@flint/protocol';
import type {
  AdapterCatalog,
  AdapterEnv,
  AdapterFactory,
  AdapterFamilies,
  AdapterFamily,
  AdapterInstance,
  AdapterProblem,
  AdapterRef,
} from './api/adapters.js';

/**
 * The adapters the engine knows, by `(family, name)`. The composition root builds it from the
 * adapter folders; config validation resolves module references with it and modules open them
 * through `ctx.adapter`.
 */
export class AdapterTable implements AdapterCatalog {
  private readonly byFamily = new Map<string, AdapterFactory[]>();

  constructor(factories: readonly AdapterFactory[]) {
    for (const factory of factories) {
      const list = this.byFamily.get(factory.family) ?? [];
      if (list.some((f) => f.name === factory.name)) throw new Error(`adapter ${factory.family}/${factory.name} is defined twice`);
      list.push(factory);
      this.byFamily.set(factory.family, list);
    }
  }

  /** The names of a family's adapters. */
  names(family: string): string[] {
    return (this.byFamily.get(family) ?? []).map((f) => f.name);
  }

  resolve(family: string, ref: unknown): { ok: true; ref: AdapterRef } | { ok: false; problems: AdapterProblem[] } {
    const factories = this.byFamily.get(family);
    if (!factories) {
      const families = [...this.byFamily.keys()].join(', ');
      return { ok: false, problems: [{ path: [], message: `unknown adapter family ${JSON.stringify(family)} (known: ${families})` }] };
    }
    const known = this.names(family).join(', ');
    if (typeof ref !== 'object' || ref === null || Array.isArray(ref)) {
      return { ok: false, problems: [{ path: [], message: `expected {name, config} naming a ${family} adapter (known: ${known})` }] };
    }
    const { name, config, ...rest } = ref as Record<string, unknown>;
    const problems: AdapterProblem[] = Object.keys(rest).map((key) => ({ path: [key], message: 'unknown key' }));
    const factory = factories.find((f) => f.name === name);
    if (!factory) {
      const what = typeof name === 'string' ? `unknown ${family} adapter ${JSON.stringify(name)}` : `expected the name of a ${family} adapter`;
      return { ok: false, problems: [{ path: ['name'], message: `${what} (known: ${known})` }, ...problems] };
    }
    const parsed = factory.configSchema.safeParse(config ?? {});
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        if (issue.code === 'unrecognized_keys') for (const key of issue.keys) problems.push({ path: ['config', ...issue.path, key], message: 'unknown key' });
        else problems.push({ path: ['config', ...issue.path], message: issue.message });
      }
    }
    if (problems.length > 0 || !parsed.success) return { ok: false, problems };
    return { ok: true, ref: { name: factory.name, config: parsed.data } };
  }

  /** Opens the adapter a validated reference names. */
  open<F extends AdapterFamily>(family: F, ref: AdapterRef, env: AdapterEnv): Promise<AdapterFamilies[F] & AdapterInstance> {
    const factory = this.byFamily.get(family)?.find((f) => f.name === ref.name) as AdapterFactory<F> | undefined;
    if (!factory) {
      const known = this.names(family).join(', ') || 'none';
      return Promise.reject(new FlintError('internal_error', `unknown ${family} adapter ${JSON.stringify(ref.name)} (known: ${known})`));
    }
    // A reference from the loaded config is already parsed; one built by hand gets its defaults here.
    const config = factory.configSchema.parse(ref.config ?? {});
    return factory.open(config, env);
  }
}
