/**
 * Module API: `ctx.adapter` with an adapter factory of the `kv` family added through
 * `EngineOptions.adapters`: the module config's reference is validated at load (name, config,
 * defaults) and the instance is opened for the module and closed once, after the module's stop.
 */
import { type AdapterEnv, type AdapterFactory, ConfigError, type KvStore, type ModuleDefinition, createEngine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cleanup } from '../support/cleanup.js';
import { fakeModule, startWithModules } from './fake-module.js';

afterEach(cleanup);

const memoConfigSchema = z.strictObject({
  prefix: z.string().min(1).default('memo:'),
  size: z.number().int().positive().default(10),
});

type MemoConfig = z.output<typeof memoConfigSchema>;

interface Recorder {
  events: string[];
  opened: { config: MemoConfig; env: AdapterEnv }[];
}

/** A `kv` adapter named `test-memo`: an in-memory store whose keys carry the configured prefix. */
function memoAdapter(rec: Recorder): AdapterFactory<'kv', MemoConfig> {
  return {
    family: 'kv',
    name: 'test-memo',
    description: 'in-memory test store',
    configSchema: memoConfigSchema,
    open: async (config, env) => {
      rec.opened.push({ config, env });
      rec.events.push('open');
      const data = new Map<string, unknown>();
      const k = (scope: string, key: string) => `${config.prefix}${scope}/${key}`;
      const store: KvStore = {
        kind: 'test-memo',
        get: async (scope, key) => ({ exists: data.has(k(scope, key)), value: data.get(k(scope, key)) ?? null }),
        set: async (scope, key, value) => {
          const old = data.get(k(scope, key));
          data.set(k(scope, key), value);
          return { existed: old !== undefined, old_value: old ?? null };
        },
        delete: async () => ({ existed: false, old_value: null }),
        update: async () => {
          throw new Error('not used');
        },
        list: async () => [...data.keys()],
        entries: async () => [],
        size: async () => 0,
        listGroups: async () => [],
        close: async () => void rec.events.push('close'),
      };
      return store;
    },
  };
}

/** The fake module with `adapter: 'kv'` declared: it opens its store at start and serves `fake::keys`. */
function storeModule(rec: Recorder): ModuleDefinition {
  return fakeModule(
    'test-fake',
    {
      start: async (ctx, config) => {
        if (!config.adapter) throw new Error('no adapter in config');
        const store = await ctx.adapter('kv', config.adapter);
        rec.events.push(`opened ${store.kind}`);
        await store.set('s', 'k', 1);
        ctx.registerFunction({ id: 'fake::keys' }, () => store.list('s'));
      },
      stop: () => void rec.events.push('module stop'),
    },
    { adapter: 'kv' },
  );
}

const newRecorder = (): Recorder => ({ events: [], opened: [] });

function loadError(rec: Recorder, adapter: unknown): ConfigError {
  try {
    createEngine({
      modules: [storeModule(rec)],
      adapters: [memoAdapter(rec) as AdapterFactory],
      config: { bridge: { port: 0 }, log: { level: 'silent' }, modules: [{ name: 'test-fake', config: { adapter } }] },
    });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected createEngine to throw a ConfigError');
}

describe('ctx.adapter', () => {
  it('opens the referenced adapter with its validated config (defaults filled in) and closes it once, after the module stop', async () => {
    const rec = newRecorder();
    const engine = await startWithModules(
      [storeModule(rec)],
      [{ name: 'test-fake', config: { adapter: { name: 'test-memo', config: { size: 3 } } } }],
      {},
      {
        adapters: [memoAdapter(rec) as AdapterFactory],
      },
    );
    expect(engine.config.modules).toEqual([
      { name: 'test-fake', config: { label: 'fake', adapter: { name: 'test-memo', config: { prefix: 'memo:', size: 3 } } } },
    ]);
    expect(rec.opened).toHaveLength(1);
    expect(rec.opened[0]?.config).toEqual({ prefix: 'memo:', size: 3 });
    expect(rec.opened[0]?.env.configDir).toBe(engine.config.configDir);
    expect(typeof rec.opened[0]?.env.logger.info).toBe('function');
    expect(await engine.invoke('fake::keys', {})).toEqual(['memo:s/k']);
    expect(rec.events).toEqual(['open', 'opened test-memo']);

    expect(await engine.stop()).toEqual({ holdups: [] });
    expect(rec.events).toEqual(['open', 'opened test-memo', 'module stop', 'close']);
    // A second stop closes nothing again.
    await engine.stop();
    expect(rec.events.filter((e) => e === 'close')).toHaveLength(1);
  });

  it('fills in the adapter config defaults when the reference has no config', async () => {
    const rec = newRecorder();
    const engine = await startWithModules(
      [storeModule(rec)],
      [{ name: 'test-fake', config: { adapter: { name: 'test-memo' } } }],
      {},
      {
        adapters: [memoAdapter(rec) as AdapterFactory],
      },
    );
    expect(rec.opened.map((o) => o.config)).toEqual([{ prefix: 'memo:', size: 10 }]);
    expect(await engine.invoke('fake::keys', {})).toEqual(['memo:s/k']);
  });

  it('reports an unknown adapter name at load, with its path and the known kv adapters', () => {
    const rec = newRecorder();
    const error = loadError(rec, { name: 'nope' });
    expect(error.problems).toEqual([{ path: 'modules[0].config.adapter.name', message: 'unknown kv adapter "nope" (known: kv, redis, bridge, test-memo)' }]);
    expect(error.message).toBe('modules[0].config.adapter.name: unknown kv adapter "nope" (known: kv, redis, bridge, test-memo)');
    expect(rec.events).toEqual([]);
  });

  it('reports a bad value and an unknown key of the adapter config at load, each with its path', () => {
    const rec = newRecorder();
    const error = loadError(rec, { name: 'test-memo', config: { size: -1, colour: 'red' } });
    const byPath = Object.fromEntries(error.problems.map((p) => [p.path, p.message]));
    expect(Object.keys(byPath).sort()).toEqual(['modules[0].config.adapter.config.colour', 'modules[0].config.adapter.config.size']);
    expect(byPath['modules[0].config.adapter.config.colour']).toBe('unknown key');
    expect(byPath['modules[0].config.adapter.config.size']).toMatch(/>0|positive|greater/i);
    expect(rec.events).toEqual([]);
  });

  it('reports an unknown key beside name and config in the reference', () => {
    const error = loadError(newRecorder(), { name: 'test-memo', url: 'x' });
    expect(error.problems).toEqual([{ path: 'modules[0].config.adapter.url', message: 'unknown key' }]);
  });
});
