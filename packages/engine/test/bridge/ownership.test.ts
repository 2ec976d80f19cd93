/**
 * Nobody who reaches the bridge takes over what others own: function ids and trigger types of the
 * engine and its modules are refused to workers (`function_id_reserved`, `trigger_type_reserved`); a
 * trigger, and a worker's trigger type, belong to the connection that registered it (`trigger_id_taken`,
 * `trigger_not_owned`, `trigger_type_taken`), except to the same worker's next connection (its reattach
 * token, or the old connection turning out dead). Replicas of a worker function stay a feature, and the
 * listing names every provider.
 */
import { EngineFunctions, EngineTriggers, type FunctionInfo } from '@flint/protocol';
import type { FlintError, Worker as FlintWorker } from '@flint/sdk';
import type { ISdk } from 'iii-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contextModule, startWithModules } from '../module-api/fake-module.js';
import { cleanup, track } from '../support/cleanup.js';
import {
  SDK_KINDS,
  type SdkKind,
  type TriggerConfigSeen,
  connectWorker,
  findTrigger,
  listFunctions,
  listTriggers,
  listWorkers,
  startTestEngine,
  startWorker,
  whenAnnounced,
} from '../support/harness.js';
import { fetchWithin, serveRoute, startHttpEngine, waitStatus } from '../support/http/helpers.js';
import { LEVEL, captureLog } from '../support/log-capture.js';
import { CuttingProxy } from '../support/proxy/cutting-proxy.js';
import { type Frame, RawClient } from '../support/raw-client.js';
import { sleep, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

const isError = (code: string) => (f: Frame) => f.type === 'error' && f.error?.code === code;
const resultFor = (id: string) => (f: Frame) => f.type === 'triggerregistrationresult' && f.id === id;

describe('reserved function ids', () => {
  it('a worker cannot register state::, engine::, flint:: or stream:: ids: refused with function_id_reserved, logged, no effect', async () => {
    const capture = captureLog('warn');
    const engine = await startTestEngine({ modules: [{ name: 'flint-state' }] }, { logger: capture.logger });
    const attacker = await RawClient.connect(engine.bridgeUrl);
    const forged = () => ({ functions: [{ function_id: 'forged' }] });
    for (const id of ['state::set', EngineFunctions.LIST_FUNCTIONS, 'flint::anything', 'stream::set']) attacker.registerFunction(id, forged);
    await attacker.roundTrip();
    expect(attacker.ofType('error').map((f) => f.error)).toEqual([
      { code: 'function_id_reserved', message: 'Function id state::set is reserved: provided by module flint-state' },
      { code: 'function_id_reserved', message: 'Function id engine::functions::list is reserved: provided by module flint-engine' },
      { code: 'function_id_reserved', message: 'Function id flint::anything is reserved: the prefix flint:: belongs to the engine and its modules' },
      { code: 'function_id_reserved', message: 'Function id stream::set is reserved: the prefix stream:: belongs to the engine and its modules' },
    ]);
    const warned = capture.records.filter((r) => r.level === LEVEL.warn && r.code === 'function_id_reserved');
    expect(warned.map((r) => r.function_id)).toEqual(['state::set', EngineFunctions.LIST_FUNCTIONS, 'flint::anything', 'stream::set']);

    // Every write reaches the store and every listing is the engine's.
    const caller = await startWorker('flint', engine);
    for (let i = 0; i < 6; i++) await caller.trigger({ function_id: 'state::set', payload: { scope: 's', key: `k${i}`, value: i } });
    for (let i = 0; i < 6; i++) expect(await caller.trigger({ function_id: 'state::get', payload: { scope: 's', key: `k${i}` } })).toBe(i);
    for (let i = 0; i < 4; i++) {
      const listing = (await caller.trigger({ function_id: EngineFunctions.LIST_FUNCTIONS, payload: {} })) as { functions: FunctionInfo[] };
      expect(listing.functions.map((f) => f.function_id)).toContain('state::get');
    }
    expect(engine.listFunctions(true).filter((f) => f.function_id === 'flint::anything' || f.function_id === 'stream::set')).toEqual([]);
  });

  it("iii-sdk's createStream still registers a custom stream's functions (stream::get(<name>) …): workers provide them by design", async () => {
    const engine = await startTestEngine();
    const w = connectWorker('iii', engine.bridgeUrl);
    const items = new Map<string, unknown>([['g/a', { n: 1 }]]);
    (w.native as ISdk).createStream('orders', {
      get: async ({ group_id, item_id }) => items.get(`${group_id}/${item_id}`) ?? null,
      set: async () => null,
      delete: async () => ({ old_value: undefined }),
      list: async () => [...items.values()],
      listGroups: async () => ['g'],
      update: async () => null,
    });
    await whenAnnounced(engine, w);
    const ids = ['get', 'set', 'delete', 'list', 'list_groups'].map((op) => `stream::${op}(orders)`);
    expect(
      engine
        .listFunctions()
        .map((f) => f.function_id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(await w.trigger({ function_id: 'stream::get(orders)', payload: { stream_name: 'orders', group_id: 'g', item_id: 'a' } })).toEqual({ n: 1 });
  });

  it("a module's function id is reserved whatever its name", async () => {
    const mod = contextModule();
    const engine = await startWithModules([mod.def], [{ name: 'test-fake' }]);
    mod.ctx().registerFunction({ id: 'fake::hello' }, () => 'from the module');
    const attacker = await RawClient.connect(engine.bridgeUrl);
    attacker.registerFunction('fake::hello', () => 'forged');
    const refused = await attacker.waitFrame(isError('function_id_reserved'));
    expect(refused.error.message).toBe('Function id fake::hello is reserved: provided by module test-fake');
    for (let i = 0; i < 4; i++) expect((await attacker.invoke('fake::hello', {})).result).toBe('from the module');
  });

  it('a module registering an id a worker got to first takes it over, and the worker is told', async () => {
    const mod = contextModule();
    const engine = await startWithModules([mod.def], [{ name: 'test-fake' }]);
    const worker = await startWorker('flint', engine, (w) => w.registerFunction('late::fn', () => 'worker'));
    const told: FlintError[] = [];
    (worker.native as FlintWorker).on('engineError', (e) => told.push(e));
    mod.ctx().registerFunction({ id: 'late::fn' }, () => 'module');
    await waitFor(() => told.length === 1, 2000, 'the worker to be told');
    expect(told[0]).toMatchObject({ code: 'function_id_reserved', message: 'Function id late::fn is reserved: provided by module test-fake' });
    for (let i = 0; i < 4; i++) expect(await worker.trigger({ function_id: 'late::fn', payload: {} })).toBe('module');
    expect(engine.listFunctions().find((f) => f.function_id === 'late::fn')?.providers).toEqual([{ module: 'test-fake' }]);
  });
});

describe('reserved trigger types', () => {
  it.each(SDK_KINDS)('a raw client cannot provide http; after it leaves, routes of a %s worker are served and removed normally', async (kind: SdkKind) => {
    const { engine, base } = await startHttpEngine();
    const attacker = await RawClient.connect(engine.bridgeUrl);
    attacker.send({ type: 'registertriggertype', id: 'http', description: 'mine now' });
    const refused = await attacker.waitFrame(isError('trigger_type_reserved'));
    expect(refused.error.message).toBe('Trigger type http is reserved: provided by module flint-http');
    await attacker.close();
    await waitFor(() => engine.stats().workers === 0, 2000, 'the attacker to be gone');

    const worker = await startWorker(kind, engine);
    const route = serveRoute(worker, 'after::hello', { method: 'GET', path: '/after' }, () => ({ status_code: 200, body: 'served' }));
    await waitStatus(base, 'GET', '/after', 200);
    expect(await (await fetchWithin(`${base}/after`)).json()).toBe('served');
    route.unregister();
    await waitStatus(base, 'GET', '/after', 404);
  });

  it("names Flint's modules use and engine:: types are refused even when no module provides them", async () => {
    const engine = await startTestEngine();
    const attacker = await RawClient.connect(engine.bridgeUrl);
    const names = ['http', 'state', 'cron', 'log', 'durable:subscriber', 'stream', 'stream:join', 'stream:leave', 'engine::mine'];
    for (const id of names) attacker.send({ type: 'registertriggertype', id, description: 'x' });
    await attacker.roundTrip();
    expect(attacker.ofType('error').map((f) => f.error.message)).toEqual([
      ...names.slice(0, -1).map((id) => `Trigger type ${id} is reserved: the name is reserved for Flint's modules`),
      'Trigger type engine::mine is reserved: the prefix engine:: belongs to the engine',
    ]);
    const types = (await engine.invoke(EngineFunctions.LIST_TRIGGER_TYPES, { include_internal: true })) as { trigger_types: { id: string }[] };
    expect(types.trigger_types.map((t) => t.id).sort()).toEqual(
      [EngineTriggers.FUNCTIONS_AVAILABLE, EngineTriggers.TRIGGERS_AVAILABLE, EngineTriggers.WORKERS_AVAILABLE].sort(),
    );
  });

  it.each(SDK_KINDS)('a type a live %s worker provides is refused to another connection (trigger_type_taken); its triggers stay with it', async (kind) => {
    const engine = await startTestEngine();
    const type = uid('owned');
    const seen: TriggerConfigSeen[] = [];
    const provider = await startWorker(kind, engine, (w) =>
      w.registerTriggerType({ id: type, description: 'mine' }, { registerTrigger: (t) => void seen.push(t), unregisterTrigger: () => {} }),
    );
    const row = await whenAnnounced(engine, provider);
    const attacker = await RawClient.connect(engine.bridgeUrl);
    attacker.send({ type: 'registertriggertype', id: type, description: 'stolen' });
    const refused = await attacker.waitFrame(isError('trigger_type_taken'));
    expect(refused.error.message).toBe(`Trigger type ${type} is provided by worker ${provider.name} (id ${row.id})`);

    attacker.send({ type: 'registertrigger', id: 'after-attempt', trigger_type: type, function_id: 'x::fn', config: { n: 1 } });
    await waitFor(() => seen.some((t) => t.id === 'after-attempt'), 2000, 'the provider to get the new trigger');
    expect(attacker.ofType('registertrigger')).toEqual([]);
  });

  it('a module taking over a type a worker provides: the worker is told to drop the triggers it applied (no ghosts) and why', async () => {
    const mod = contextModule();
    const engine = await startWithModules([mod.def], [{ name: 'test-fake' }]);
    const type = uid('contested');
    const worker: string[] = [];
    const provider = await startWorker('flint', engine, (w) =>
      w.registerTriggerType(
        { id: type, description: 'worker first' },
        { registerTrigger: (t) => void worker.push(`register ${t.id}`), unregisterTrigger: (t) => void worker.push(`unregister ${t.id}`) },
      ),
    );
    const told: FlintError[] = [];
    (provider.native as FlintWorker).on('engineError', (e) => told.push(e));
    const registrant = await RawClient.connect(engine.bridgeUrl);
    registrant.send({ type: 'registertrigger', id: 'trg-contested', trigger_type: type, function_id: 'x::fn', config: {} });
    await waitFor(() => worker.length === 1, 2000, 'the worker to apply the trigger');

    const module: string[] = [];
    mod
      .ctx()
      .registerTriggerType(
        { id: type, description: 'the module now', configSchema: z.unknown() },
        { registerTrigger: (t) => void module.push(`register ${t.id}`), unregisterTrigger: (t) => void module.push(`unregister ${t.id}`) },
      );
    await waitFor(() => worker.length === 2 && module.length === 1 && told.length === 1, 2000, 'the hand-over');
    expect(worker).toEqual(['register trg-contested', 'unregister trg-contested']);
    expect(module).toEqual(['register trg-contested']);
    expect(told[0]).toMatchObject({ code: 'trigger_type_reserved', message: `Trigger type ${type} is reserved: provided by module test-fake` });
    expect((await findTrigger(engine, (t) => t.id === 'trg-contested'))?.status).toBe('active');
  });
});

describe.each(SDK_KINDS)('trigger ownership (%s owner)', (kind: SdkKind) => {
  it('another connection can neither replace nor remove the trigger: trigger_id_taken, trigger_not_owned', async () => {
    const capture = captureLog('warn');
    const engine = await startTestEngine({}, { logger: capture.logger });
    const owner = await startWorker(kind, engine, (w) => {
      w.registerFunction('own::on', () => null);
      w.registerTrigger({ type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'own::on', config: {} });
    });
    const row = await whenAnnounced(engine, owner);
    const trigger = await waitFor(() => findTrigger(engine, (t) => t.function_id === 'own::on'), 2000, 'the trigger');

    const attacker = await RawClient.connect(engine.bridgeUrl);
    attacker.send({ type: 'registertrigger', id: trigger.id, trigger_type: 'anything', function_id: 'evil::fn', config: { evil: true } });
    const result = await attacker.waitFrame(resultFor(trigger.id));
    expect(result.error).toEqual({ code: 'trigger_id_taken', message: `Trigger id ${trigger.id} belongs to worker ${owner.name} (id ${row.id})` });
    attacker.send({ type: 'unregistertrigger', id: trigger.id });
    const notOwned = await attacker.waitFrame(isError('trigger_not_owned'));
    expect(notOwned.error.message).toBe(
      `Trigger ${trigger.id} belongs to worker ${owner.name} (id ${row.id}): only the connection that registered it can remove it`,
    );
    await attacker.roundTrip();
    expect(await listTriggers(engine)).toEqual([trigger]);
    const warned = capture.records.filter((r) => r.level === LEVEL.warn && r.trigger_id === trigger.id).map((r) => r.msg);
    expect(warned).toEqual([`refused registertrigger: ${result.error.message}`, `refused a registration: ${notOwned.error.message}`]);
  });
});

describe('trigger ownership across reconnects', () => {
  it("a module's trigger id cannot be taken or removed by a worker", async () => {
    const mod = contextModule();
    const engine = await startWithModules([mod.def], [{ name: 'test-fake' }]);
    mod.ctx().registerFunction({ id: 'fake::on' }, () => null);
    await mod.ctx().registerTrigger({ id: 'mod-trigger', type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'fake::on', config: {} }).ready;
    const attacker = await RawClient.connect(engine.bridgeUrl);
    attacker.send({ type: 'registertrigger', id: 'mod-trigger', trigger_type: 'x', function_id: 'evil::fn', config: {} });
    expect((await attacker.waitFrame(resultFor('mod-trigger'))).error).toEqual({
      code: 'trigger_id_taken',
      message: 'Trigger id mod-trigger belongs to module test-fake',
    });
    attacker.send({ type: 'unregistertrigger', id: 'mod-trigger' });
    await attacker.waitFrame(isError('trigger_not_owned'));
    expect((await listTriggers(engine)).map((t) => [t.id, t.function_id])).toEqual([['mod-trigger', 'fake::on']]);
  });

  it('@flint/sdk presents its reattach token on reconnect: the engine closes the old connection at once and the new one keeps the triggers', async () => {
    const engine = await startTestEngine();
    const proxy = await CuttingProxy.forUrl(engine.bridgeUrl);
    track(() => proxy.close());
    const w = connectWorker('flint', proxy.url, { reconnect: { initialDelayMs: 20, maxDelayMs: 40 } });
    w.registerFunction('re::fn', () => 'ok');
    const ref = (w.native as FlintWorker).registerTrigger({ type: 'nobody-provides', function_id: 're::fn', config: {} });
    const before = await whenAnnounced(engine, w);
    // The engine learns of the cut only 10 s later; the worker reconnects at once.
    proxy.cutAll({ upstreamDelayMs: 10_000 });
    const after = await waitFor(async () => (await listWorkers(engine)).find((x) => x.name === w.name && x.id !== before.id), 3000, 'the new connection');
    await waitFor(() => engine.stats().workers === 1, 2000, 'the engine to close the old connection');
    expect((await listTriggers(engine)).map((t) => t.id)).toEqual([ref.id]);
    expect(after.functions).toEqual(['re::fn']);
    expect(await w.trigger({ function_id: 're::fn', payload: {} })).toBe('ok');
  });

  it('an iii-sdk worker (no token) that reconnects before the engine noticed gets its trigger back once the old connection fails a ping', async () => {
    const engine = await startTestEngine({ bridge: { ping_interval_ms: 300 } });
    const proxy = await CuttingProxy.forUrl(engine.bridgeUrl);
    track(() => proxy.close());
    const w = connectWorker('iii', proxy.url, { reconnect: { initialDelayMs: 20, maxDelayMs: 40 } });
    w.registerFunction('re::fn', () => 'ok');
    w.registerTrigger({ type: 'nobody-provides', function_id: 're::fn', config: {} });
    const before = await whenAnnounced(engine, w);
    const [trigger] = await listTriggers(engine);
    proxy.cutAll({ upstreamDelayMs: 10_000 });
    await waitFor(async () => (await listWorkers(engine)).some((x) => x.name === w.name && x.id !== before.id), 3000, 'the new connection');
    await waitFor(() => engine.stats().workers === 1, 3000, 'the old connection to be dropped');
    await waitFor(async () => (await listTriggers(engine)).length === 1, 2000, 'the trigger to be re-registered');
    expect(await listTriggers(engine)).toEqual([trigger]);
  });
});

describe('providers in engine::functions::list', () => {
  it('replicas stay balanced, and the listing names every provider', async () => {
    const engine = await startTestEngine();
    const a = await startWorker('flint', engine, (w) => w.registerFunction('shared::fn', () => 'a'));
    const b = await startWorker('iii', engine, (w) => w.registerFunction('shared::fn', () => 'b'));
    const anonymous = await RawClient.connect(engine.bridgeUrl);
    await anonymous.serve('shared::fn', () => 'c');
    const rows = await listWorkers(engine);
    const idOf = (name: string) => rows.find((r) => r.name === name)?.id;
    const shared = (await listFunctions(engine)).find((f) => f.function_id === 'shared::fn');
    expect(shared?.providers).toEqual([
      { worker_id: idOf(a.name), worker_name: a.name },
      { worker_id: idOf(b.name), worker_name: b.name },
      { worker_id: anonymous.workerId, worker_name: null },
    ]);
    const answers = new Set<string>();
    for (let i = 0; i < 12; i++) answers.add(await a.trigger({ function_id: 'shared::fn', payload: {} }));
    expect([...answers].sort()).toEqual(['a', 'b', 'c']);
    const internal = (await listFunctions(engine, true)).find((f) => f.function_id === EngineFunctions.LIST_FUNCTIONS);
    expect(internal?.providers).toEqual([{ module: 'flint-engine' }]);
  });
});

describe('a worker-provided trigger type whose provider leaves', () => {
  it('parks the triggers it had applied; the next provider gets the ones still registered, and nothing of the removed ones', async () => {
    const engine = await startTestEngine();
    const type = uid('leaving');
    const first: string[] = [];
    const provider = await startWorker('flint', engine, (w) =>
      w.registerTriggerType({ id: type, description: 'first' }, { registerTrigger: (t) => void first.push(t.id), unregisterTrigger: () => {} }),
    );
    const registrant = await RawClient.connect(engine.bridgeUrl);
    for (const id of ['keep', 'drop']) registrant.send({ type: 'registertrigger', id, trigger_type: type, function_id: 'x::fn', config: {} });
    await waitFor(() => first.length === 2, 2000, 'both triggers applied');
    await provider.shutdown();
    await waitFor(async () => (await listTriggers(engine)).every((t) => t.status === 'parked'), 2000, 'both parked');
    registrant.send({ type: 'unregistertrigger', id: 'drop' });
    await registrant.roundTrip();

    const second: string[] = [];
    await startWorker('flint', engine, (w) =>
      w.registerTriggerType(
        { id: type, description: 'second' },
        { registerTrigger: (t) => void second.push(`register ${t.id}`), unregisterTrigger: (t) => void second.push(`unregister ${t.id}`) },
      ),
    );
    await waitFor(() => second.length === 1, 2000, 'the remaining trigger to be applied');
    await sleep(50);
    expect(second).toEqual(['register keep']);
    expect((await listTriggers(engine)).map((t) => [t.id, t.status])).toEqual([['keep', 'active']]);
  });
});
