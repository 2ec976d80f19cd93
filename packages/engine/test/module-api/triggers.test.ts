/**
 * Module API: `ctx.registerTrigger` for a module's own functions (ready / parked / refused) and the
 * release of a module's triggers at its stop.
 */
import type { Engine, ModuleContext, ModuleTrigger, TriggerRecord } from '@flint/engine';
import { FlintError } from '@flint/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type TriggerConfigSeen, listTriggers, startWorker } from '../support/harness.js';
import { LEVEL, type LogRecord, captureLog } from '../support/log-capture.js';
import { sleep, uid, waitFor } from '../support/util.js';
import { HTTP, fakeModule, listenerUrl, startWithModules } from './fake-module.js';

afterEach(cleanup);

/** A module that registers `fake::hello` and one trigger for it (`input` without function_id). */
function routeModule(input: Omit<Parameters<ModuleContext['registerTrigger']>[0], 'function_id'>, events: string[] = []) {
  const state: { trigger?: ModuleTrigger } = {};
  const def = fakeModule('test-fake', {
    start: (ctx, config) => {
      ctx.registerFunction({ id: 'fake::hello', description: 'says hello' }, (data) => ({
        status_code: 201,
        headers: { 'x-fake': config.label },
        body: { hello: config.label, query: (data as { query_params?: unknown }).query_params },
      }));
      state.trigger = ctx.registerTrigger({ ...input, function_id: 'fake::hello' });
    },
    stop: () => void events.push('test-fake stop'),
  });
  return { def, state };
}

/** A module providing trigger type `type`, recording what its provider is told. */
function providerModule(type: string, events: string[]) {
  return fakeModule('test-provider', {
    start: (ctx) => {
      ctx.registerTriggerType(
        { id: type, description: 'a module-provided type', configSchema: z.unknown() },
        {
          registerTrigger: (t: TriggerRecord) => void events.push(`register ${t.id} ${t.function_id} owner=${t.owner}`),
          unregisterTrigger: (t: TriggerRecord) => void events.push(`unregister ${t.id}`),
        },
      );
    },
    stop: () => void events.push('test-provider stop'),
  });
}

describe('ctx.registerTrigger', () => {
  it('registers an http route for a module function that answers over real HTTP and is listed while running', async () => {
    const { def, state } = routeModule({ id: 'fake-route', type: 'http', config: { api_path: '/fake/hello', http_method: 'GET' }, metadata: { m: 1 } });
    const engine = await startWithModules([def], [HTTP, { name: 'test-fake', config: { label: 'bonjour' } }]);
    expect(await state.trigger?.ready).toEqual({ parked: false });
    expect(state.trigger?.id).toBe('fake-route');

    const res = await fetch(`${listenerUrl(engine, 'http')}/fake/hello?x=1`);
    expect(res.status).toBe(201);
    expect(res.headers.get('x-fake')).toBe('bonjour');
    expect(await res.json()).toEqual({ hello: 'bonjour', query: { x: '1' } });

    expect(await listTriggers(engine)).toEqual([
      {
        id: 'fake-route',
        trigger_type: 'http',
        function_id: 'fake::hello',
        config: { api_path: '/fake/hello', http_method: 'GET' },
        metadata: { m: 1 },
        status: 'active',
      },
    ]);
  });

  it('generates an id when none is given', async () => {
    const { def, state } = routeModule({ type: 'http', config: { api_path: '/gen', http_method: 'POST' } });
    const engine = await startWithModules([def], [HTTP, { name: 'test-fake' }]);
    await state.trigger?.ready;
    expect(state.trigger?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await listTriggers(engine)).map((t) => t.id)).toEqual([state.trigger?.id]);
  });

  it('rejects ready with trigger_registration_failed when the provider refuses the trigger, and does not keep it', async () => {
    const { def, state } = routeModule({ id: 'bad-route', type: 'http', config: { api_path: '/bad', http_method: 'FETCH' } });
    const engine = await startWithModules([def], [HTTP, { name: 'test-fake' }]);
    const error = await state.trigger?.ready.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(FlintError);
    expect((error as FlintError).code).toBe('trigger_registration_failed');
    expect((error as FlintError).message).toContain('http_method must be one of GET, POST, PUT, DELETE, PATCH (got "FETCH")');
    expect(await listTriggers(engine)).toEqual([]);
    expect(engine.stats().triggers).toBe(0);
  });

  it('a trigger registered before its type is provided by an earlier-listed module is parked, then applied when that module starts', async () => {
    const events: string[] = [];
    const type = uid('mod-type');
    const { def, state } = routeModule({ id: 'early', type, config: { any: true } }, events);
    // test-fake is listed (and so started) before test-provider.
    const engine = await startWithModules([def, providerModule(type, events)], [{ name: 'test-fake' }, { name: 'test-provider' }]);
    expect(await state.trigger?.ready).toEqual({ parked: true });
    await waitFor(() => events.includes('register early fake::hello owner=test-fake'), 1000, 'the parked trigger to be applied');
    expect((await listTriggers(engine)).map((t) => [t.id, t.status])).toEqual([['early', 'active']]);
  });
});

describe('a module trigger type with a config schema', () => {
  /** A module providing type `every` (config `{ms, label?}`, strict) and recording what its provider gets. */
  function scheduleModule(seen: TriggerRecord<{ ms: number; label: string }>[]) {
    return fakeModule('test-schedule', {
      start: (ctx) => {
        ctx.registerTriggerType(
          {
            id: 'every',
            description: 'fires every ms',
            configSchema: z.strictObject({ ms: z.number().int().positive(), label: z.string().default('tick') }),
          },
          { registerTrigger: (t) => void seen.push(t), unregisterTrigger: () => {} },
        );
      },
    });
  }

  it('gives the provider the config as the schema parsed it (defaults applied); the listing keeps it as registered', async () => {
    const seen: TriggerRecord<{ ms: number; label: string }>[] = [];
    const { def, state } = routeModule({ id: 'five', type: 'every', config: { ms: 5 } });
    const engine = await startWithModules([scheduleModule(seen), def], [{ name: 'test-schedule' }, { name: 'test-fake' }]);
    expect(await state.trigger?.ready).toEqual({ parked: false });
    expect(seen.map((t) => t.config)).toEqual([{ ms: 5, label: 'tick' }]);
    expect((await listTriggers(engine)).map((t) => t.config)).toEqual([{ ms: 5 }]);
    // The schema is the engine's business: trigger-type listings show the type as before.
    const types = (await engine.invoke('engine::trigger-types::list', {})) as { trigger_types: Record<string, unknown>[] };
    expect(types.trigger_types.find((t) => t.id === 'every')).toEqual({ id: 'every', description: 'fires every ms' });
  });

  it('refuses a config with an unknown key or a wrong type before the provider sees it: ready rejects naming the key', async () => {
    const seen: TriggerRecord<{ ms: number; label: string }>[] = [];
    const cases: [config: unknown, message: string][] = [
      [{ ms: 5, lable: 'x' }, 'unknown key "lable" in every trigger config (known: ms, label)'],
      [{ ms: '5' }, 'every trigger config: ms must be a number'],
      [{ label: 'x' }, 'every trigger config: ms is required'],
      [{ ms: -1 }, 'every trigger config: ms: Too small: expected number to be >0'],
    ];
    for (const [i, [config, message]] of cases.entries()) {
      const { def, state } = routeModule({ id: `bad-${i}`, type: 'every', config });
      const engine = await startWithModules([scheduleModule(seen), def], [{ name: 'test-schedule' }, { name: 'test-fake' }]);
      const error = await state.trigger?.ready.then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error, message).toBeInstanceOf(FlintError);
      expect(error, message).toMatchObject({ code: 'trigger_registration_failed', message });
      expect(await listTriggers(engine)).toEqual([]);
    }
    expect(seen).toEqual([]);
  });
});

describe('module triggers parked at start-up', () => {
  const parkedWarnings = (records: LogRecord[]) => records.filter((r) => r.level === LEVEL.warn && /is parked/.test(r.msg ?? ''));

  it('are not warned about when a later module provides their type; one still unprovided after start-up is, once', async () => {
    const events: string[] = [];
    const type = uid('mod-type');
    const early = routeModule({ id: 'early', type, config: {} }, events);
    const orphan = fakeModule('test-orphan', {
      start: (ctx) => {
        ctx.registerFunction({ id: 'orphan::fn', description: 'x' }, () => null);
        ctx.registerTrigger({ id: 'orphan', type: 'htpp', function_id: 'orphan::fn', config: {} });
      },
    });
    const log = captureLog('warn');
    const engine = await startWithModules(
      [early.def, orphan, providerModule(type, events)],
      [{ name: 'test-fake' }, { name: 'test-orphan' }, { name: 'test-provider' }],
      {},
      { logger: log.logger },
    );
    await waitFor(() => events.includes('register early fake::hello owner=test-fake'), 1000, 'the early trigger to be applied');
    expect(parkedWarnings(log.records).map((r) => r.msg)).toEqual([
      `trigger orphan (type "htpp") is parked: no module or worker provides "htpp" (known: engine::functions-available, engine::triggers-available, engine::workers-available, ${type})`,
    ]);
    expect((await listTriggers(engine)).map((t) => [t.id, t.status])).toEqual([
      ['early', 'active'],
      ['orphan', 'parked'],
    ]);
  });
});

describe.each(SDK_KINDS)('a module trigger of a worker-provided type (%s worker)', (kind) => {
  it('is parked until the worker provides the type, then applied to the worker', async () => {
    const type = uid('w-type');
    const { def, state } = routeModule({ id: 'for-worker', type, config: { every: 'tick' } });
    const engine = await startWithModules([def], [{ name: 'test-fake' }]);
    expect(await state.trigger?.ready).toEqual({ parked: true });
    expect((await listTriggers(engine)).map((t) => [t.id, t.status])).toEqual([['for-worker', 'parked']]);

    const registered: TriggerConfigSeen[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerTriggerType({ id: type, description: 'worker type' }, { registerTrigger: (t) => void registered.push(t), unregisterTrigger: () => {} });
    });
    await waitFor(() => registered.length === 1, 3000, 'the worker to get the module trigger');
    expect(registered[0]).toMatchObject({ id: 'for-worker', function_id: 'fake::hello', config: { every: 'tick' } });
    await waitFor(async () => (await listTriggers(engine))[0]?.status === 'active', 2000, 'the trigger to be active');
  });
});

describe('ModuleTrigger.unregister()', () => {
  // (flint worker only: iii-sdk 0.11.6 ignores `unregistertrigger` frames and never calls its handler's unregisterTrigger.)
  it('takes the trigger back from the worker providing its type and out of the registry', async () => {
    const type = uid('w-type');
    const { def, state } = routeModule({ id: 'for-worker', type, config: {} });
    const engine = await startWithModules([def], [{ name: 'test-fake' }]);
    const seen: string[] = [];
    await startWorker('flint', engine, (w) => {
      w.registerTriggerType(
        { id: type, description: 'worker type' },
        { registerTrigger: (t) => void seen.push(`register ${t.id}`), unregisterTrigger: (t) => void seen.push(`unregister ${t.id}`) },
      );
    });
    await waitFor(() => seen.length === 1, 3000, 'the worker to get the module trigger');
    await state.trigger?.unregister();
    await waitFor(() => seen.length === 2, 2000, 'the worker to be told to unregister');
    expect(seen).toEqual(['register for-worker', 'unregister for-worker']);
    expect(await listTriggers(engine)).toEqual([]);
    // Unregistering twice is harmless and tells nobody again.
    await state.trigger?.unregister();
    await sleep(50);
    expect(engine.stats().triggers).toBe(0);
    expect(seen).toHaveLength(2);
  });
});

describe('module triggers at engine stop', () => {
  async function stopAndRecord(engine: Engine): Promise<void> {
    expect(engine.stats().triggers).toBe(1);
    await engine.stop();
    expect(engine.stats().triggers).toBe(0);
  }

  it('are unregistered from their provider when the owning module stops (before the provider stops)', async () => {
    const events: string[] = [];
    const type = uid('mod-type');
    const { def, state } = routeModule({ id: 'owned', type, config: {} }, events);
    const engine = await startWithModules([def, providerModule(type, events)], [{ name: 'test-provider' }, { name: 'test-fake' }]);
    expect(await state.trigger?.ready).toEqual({ parked: false });
    await stopAndRecord(engine);
    expect(events).toEqual(['register owned fake::hello owner=test-fake', 'test-fake stop', 'unregister owned', 'test-provider stop']);
  });

  it('take an http route away: the module trigger is gone from the registry after stop', async () => {
    const { def, state } = routeModule({ id: 'route-at-stop', type: 'http', config: { api_path: '/bye', http_method: 'GET' } });
    const engine = await startWithModules([def], [HTTP, { name: 'test-fake' }]);
    await state.trigger?.ready;
    expect((await fetch(`${listenerUrl(engine, 'http')}/bye`)).status).toBe(201);
    await stopAndRecord(engine);
  });
});
