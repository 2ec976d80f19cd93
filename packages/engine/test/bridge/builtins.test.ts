/**
 * The engine's built-in functions and trigger types (reference/protocol.md §4).
 */
import type { Engine } from '@flint/engine';
import { EngineFunctions, EngineTriggers, LOG_LEVELS, type WorkerInfo } from '@flint/protocol';
import type { Worker as FlintWorker } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, listFunctions, listTriggers, listWorkers, startTestEngine, startWorker, waitForFunction } from '../support/harness.js';
import { RawClient } from '../support/raw-client.js';
import { deferred, outcome, uid, waitFor } from '../support/util.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

afterEach(cleanup);

async function triggerTypes(engine: Engine, includeInternal?: boolean): Promise<{ id: string; description: string }[]> {
  const payload = includeInternal === undefined ? {} : { include_internal: includeInternal };
  return ((await engine.invoke(EngineFunctions.LIST_TRIGGER_TYPES, payload)) as { trigger_types: { id: string; description: string }[] }).trigger_types;
}

describe('built-in listings', () => {
  let engine: Engine;

  it('engine::functions::list hides engine:: functions unless include_internal is true', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    await raw.serve('app::hello', () => 'hi', { description: 'says hi' });

    const visible = await raw.invoke(EngineFunctions.LIST_FUNCTIONS, {});
    expect(visible.error).toBeUndefined();
    const ids = (visible.result.functions as { function_id: string }[]).map((f) => f.function_id);
    expect(ids).toEqual(['app::hello']);
    expect(visible.result.functions[0]).toEqual({
      function_id: 'app::hello',
      description: 'says hi',
      request_format: null,
      response_format: null,
      metadata: null,
      providers: [{ worker_id: raw.workerId, worker_name: null }],
    });

    const all = await raw.invoke(EngineFunctions.LIST_FUNCTIONS, { include_internal: true });
    const allIds = (all.result.functions as { function_id: string }[]).map((f) => f.function_id);
    expect(allIds).toEqual(
      expect.arrayContaining([
        'app::hello',
        EngineFunctions.LIST_FUNCTIONS,
        EngineFunctions.LIST_WORKERS,
        EngineFunctions.LIST_TRIGGERS,
        EngineFunctions.LIST_TRIGGER_TYPES,
        EngineFunctions.REGISTER_WORKER,
        EngineFunctions.CREATE_CHANNEL,
        'engine::log::info',
      ]),
    );
    // Without a payload at all the default (hide internal) applies.
    const noData = await raw.invoke(EngineFunctions.LIST_FUNCTIONS);
    expect((noData.result.functions as { function_id: string }[]).map((f) => f.function_id)).toEqual(['app::hello']);
  });

  it('answers invalid_payload for bad input to the listings', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    expect((await raw.invoke(EngineFunctions.LIST_FUNCTIONS, { include_internal: 'yes' })).error?.code).toBe('invalid_payload');
    expect((await raw.invoke(EngineFunctions.LIST_TRIGGERS, { include_internal: 1 })).error?.code).toBe('invalid_payload');
    expect((await raw.invoke(EngineFunctions.LIST_TRIGGER_TYPES, { include_internal: 'no' })).error?.code).toBe('invalid_payload');
    expect((await raw.invoke(EngineFunctions.LIST_WORKERS, { worker_id: 42 })).error?.code).toBe('invalid_payload');
    expect((await raw.invoke(EngineFunctions.LIST_FUNCTIONS, [1, 2])).error?.code).toBe('invalid_payload');
    const viaEngine = await outcome(engine.invoke(EngineFunctions.LIST_FUNCTIONS, { include_internal: 'yes' }));
    expect(viaEngine.ok).toBe(false);
    if (!viaEngine.ok) expect(viaEngine.error.code).toBe('invalid_payload');
  });

  it('engine::triggers::list lists triggers and hides those of engine:: functions by default', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    raw.send({
      type: 'registertrigger',
      id: 'user-trg',
      trigger_type: EngineTriggers.WORKERS_AVAILABLE,
      function_id: 'app::on',
      config: {},
      metadata: { m: 1 },
    });
    raw.send({ type: 'registertrigger', id: 'internal-trg', trigger_type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'engine::something', config: {} });
    await raw.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === 'internal-trg');
    await raw.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === 'user-trg');
    const visible = await listTriggers(engine);
    expect(visible).toEqual([
      { id: 'user-trg', trigger_type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'app::on', config: {}, metadata: { m: 1 }, status: 'active' },
    ]);
    const all = await listTriggers(engine, true);
    expect(all.map((t) => t.id).sort()).toEqual(['internal-trg', 'user-trg']);
  });

  it('engine::trigger-types::list lists worker types, and the engine types only with include_internal', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const type = uid('wtype');
    raw.send({ type: 'registertriggertype', id: type, description: 'a worker type' });
    await raw.roundTrip();
    const visible = await triggerTypes(engine);
    expect(visible.map((t) => t.id)).toEqual([type]);
    expect(visible[0]?.description).toBe('a worker type');
    const all = (await triggerTypes(engine, true)).map((t) => t.id);
    expect(all).toEqual(expect.arrayContaining([type, EngineTriggers.FUNCTIONS_AVAILABLE, EngineTriggers.WORKERS_AVAILABLE]));
  });

  it('engine::workers::register annotates the calling connection; the listing filters by worker_id', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const other = await RawClient.connect(engine.bridgeUrl);
    await waitFor(() => raw.workerId && other.workerId, 1000, 'worker ids');
    // Connections that never announced themselves are hidden, except when asked for by id.
    expect(await listWorkers(engine)).toEqual([]);
    expect((await listWorkers(engine, raw.workerId)).map((w) => w.id)).toEqual([raw.workerId]);

    const announce = (data: Record<string, unknown>) =>
      raw.send({ type: 'invokefunction', function_id: EngineFunctions.REGISTER_WORKER, data, action: { type: 'void' } });
    announce({ runtime: 'deno', version: '9.9.9', name: 'raw-one', os: 'plan9', pid: 4242, isolation: null });
    await raw.roundTrip();
    const [row] = await waitFor(async () => {
      const rows = await listWorkers(engine);
      return rows.length === 1 ? rows : undefined;
    });
    expect(row).toMatchObject({
      id: raw.workerId,
      name: 'raw-one',
      runtime: 'deno',
      version: '9.9.9',
      os: 'plan9',
      pid: 4242,
      function_count: 0,
      functions: [],
    });

    announce({ runtime: 'deno', version: '10.0.0', name: 'raw-renamed', os: 'plan9', pid: 4242 });
    await raw.roundTrip();
    await waitFor(async () => (await listWorkers(engine, raw.workerId))[0]?.name === 'raw-renamed', 1000, 'metadata update');
    expect((await listWorkers(engine, raw.workerId))[0]?.version).toBe('10.0.0');
    expect(await listWorkers(engine, 'no-such-worker')).toEqual([]);
  });

  it('engine::log::<level> accepts {message} and answers invalid_payload for a non-string message', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    for (const level of LOG_LEVELS) {
      const ok = await raw.invoke(`engine::log::${level}`, { message: `hello ${level}`, data: { a: 1 } });
      expect(ok.error, level).toBeUndefined();
      const bad = await raw.invoke(`engine::log::${level}`, { message: 42 });
      expect(bad.error?.code, level).toBe('invalid_payload');
      const missing = await raw.invoke(`engine::log::${level}`, {});
      expect(missing.error?.code, level).toBe('invalid_payload');
    }
    const listed = await listFunctions(engine, true);
    const descriptions = LOG_LEVELS.map((level) => listed.find((f) => f.function_id === `engine::log::${level}`)?.description);
    expect(descriptions).toEqual([
      'Write an info line to the engine log',
      'Write a warning to the engine log',
      'Write an error line to the engine log',
      'Write a debug line to the engine log',
      'Write a trace line to the engine log',
    ]);
  });
});

describe.each(SDK_KINDS)('built-ins with a %s worker', (kind: SdkKind) => {
  let engine: Engine;

  it('engine::workers::list describes the worker (WorkerInfo) and counts its active invocations', async () => {
    engine = await startTestEngine();
    const started = deferred();
    const gate = deferred();
    const w = await startWorker(kind, engine, (x) => {
      x.registerFunction('wl::fast', () => 1);
      x.registerFunction('wl::slow', () => {
        started.resolve();
        return gate.promise.then(() => 2);
      });
    });
    const rows = await listWorkers(engine);
    expect(rows).toHaveLength(1);
    const row = rows[0] as WorkerInfo;
    expect(row.id).toMatch(UUID_RE);
    if (kind === 'flint') expect(row.id).toBe((w.native as FlintWorker).workerId);
    expect(row).toMatchObject({
      name: w.name,
      runtime: 'node',
      version: kind === 'iii' ? '0.11.6' : expect.any(String),
      os: expect.stringContaining(process.platform),
      pid: process.pid,
      function_count: 2,
      active_invocations: 0,
    });
    expect([...row.functions].sort()).toEqual(['wl::fast', 'wl::slow']);

    const raw = await RawClient.connect(engine.bridgeUrl);
    const pending = raw.invoke('wl::slow', {});
    await started.promise;
    const busy = await listWorkers(engine, row.id);
    expect(busy[0]?.active_invocations).toBe(1);
    expect(busy[0]?.status).toBe('busy');
    gate.resolve();
    expect((await pending).result).toBe(2);
    const idle = await waitFor(async () => (await listWorkers(engine, row.id)).find((x) => x.active_invocations === 0), 1000, 'active_invocations back to 0');
    expect(idle.status).toBe('available');
  });

  it('engine::functions-available fires on change (not by polling) with the new function list', async () => {
    engine = await startTestEngine();
    const events: { at: number; data: { event: string; functions: { function_id: string }[] } }[] = [];
    await startWorker(kind, engine, (x) => {
      x.registerFunction('fa::on', (data: { event: string; functions: { function_id: string }[] }) => {
        events.push({ at: Date.now(), data });
        return null;
      });
      x.registerTrigger({ type: EngineTriggers.FUNCTIONS_AVAILABLE, function_id: 'fa::on', config: {} });
    });
    await waitFor(async () => (await listTriggers(engine)).some((t) => t.function_id === 'fa::on' && t.status === 'active'), 2000, 'subscription');

    const provider = await RawClient.connect(engine.bridgeUrl);
    const before = events.length;
    const registeredAt = Date.now();
    await provider.serve('fa::new', () => 'x');
    const event = await waitFor(() => events.slice(before).find((e) => e.data.functions.some((f) => f.function_id === 'fa::new')), 1000, 'functions_changed');
    expect(event.at - registeredAt).toBeLessThan(500);
    expect(event.data.event).toBe('functions_changed');
    expect(event.data.functions.map((f) => f.function_id)).toEqual(expect.arrayContaining(['fa::on', 'fa::new']));
    expect(event.data.functions.some((f) => f.function_id.startsWith('engine::'))).toBe(false);

    // Nothing changes (a second provider of an id already listed): nothing fires. An absence can only be waited out.
    const count = events.length;
    const second = await RawClient.connect(engine.bridgeUrl);
    await second.serve('fa::new', () => 'y');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(events.length).toBe(count);

    // A removal fires too.
    await provider.close();
    await second.close();
    await waitFor(() => events.slice(count).some((e) => !e.data.functions.some((f) => f.function_id === 'fa::new')), 1000, 'removal event');
  });

  it('engine::workers-available fires worker_connected, worker_metadata_updated and worker_disconnected', async () => {
    engine = await startTestEngine();
    const events: { event: string; worker_id: string }[] = [];
    await startWorker(kind, engine, (x) => {
      x.registerFunction('wa::on', (data: { event: string; worker_id: string }) => {
        events.push(data);
        return null;
      });
      x.registerTrigger({ type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'wa::on', config: {} });
    });
    await waitFor(async () => (await listTriggers(engine)).some((t) => t.function_id === 'wa::on' && t.status === 'active'), 2000, 'subscription');

    const raw = await RawClient.connect(engine.bridgeUrl);
    const id = await waitFor(() => raw.workerId, 1000, 'worker id');
    await waitFor(() => events.some((e) => e.event === 'worker_connected' && e.worker_id === id), 1000, 'worker_connected');
    raw.send({ type: 'invokefunction', function_id: EngineFunctions.REGISTER_WORKER, data: { name: 'watched', runtime: 'node' }, action: { type: 'void' } });
    await waitFor(() => events.some((e) => e.event === 'worker_metadata_updated' && e.worker_id === id), 1000, 'worker_metadata_updated');
    await raw.close();
    await waitFor(() => events.some((e) => e.event === 'worker_disconnected' && e.worker_id === id), 1000, 'worker_disconnected');
    const mine = events.filter((e) => e.worker_id === id).map((e) => e.event);
    expect(mine).toEqual(['worker_connected', 'worker_metadata_updated', 'worker_disconnected']);
  });

  it('lists a worker function with its discovery metadata verbatim', async () => {
    engine = await startTestEngine();
    const request_format = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const response_format = { type: 'string' };
    const worker = await startWorker(kind, engine, (x) =>
      x.registerFunction('meta::greet', () => 'hi', { description: 'greets', request_format, response_format, metadata: { team: 'a' } }),
    );
    await waitForFunction(engine, 'meta::greet');
    const info = (await listFunctions(engine)).find((f) => f.function_id === 'meta::greet');
    const row = (await listWorkers(engine)).find((w) => w.name === worker.name);
    expect(info).toEqual({
      function_id: 'meta::greet',
      description: 'greets',
      request_format,
      response_format,
      metadata: { team: 'a' },
      providers: [{ worker_id: row?.id, worker_name: worker.name }],
    });
  });
});
