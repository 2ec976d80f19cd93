/**
 * Module API: the log tap (`ctx.tapLogs`: engine records with their bindings, workers' `engine::log::*`
 * as `source: 'worker'`) and the registry view (`ctx.registry`: listings that agree with the engine's
 * `engine::*::list` functions, and change events as a real worker comes and goes).
 */
import type { LogRecord, ModuleContext, RegistryEvent } from '@flint/engine';
import { FlintError } from '@flint/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cleanup } from '../support/cleanup.js';
import { listFunctions, listTriggers, listWorkers, startWorker } from '../support/harness.js';
import { captureLog } from '../support/log-capture.js';
import { uid, waitFor } from '../support/util.js';
import { contextModule, fakeModule, startWithModules } from './fake-module.js';

afterEach(cleanup);

describe('ctx.tapLogs', () => {
  it("delivers the engine's records with their fields and a worker's engine::log::info as source worker, until unsubscribed", async () => {
    const tapped: LogRecord[] = [];
    let unsubscribe: () => void = () => {};
    let ctx: ModuleContext | undefined;
    const def = fakeModule('test-fake', {
      start: (c) => {
        ctx = c;
        unsubscribe = c.tapLogs((record) => void tapped.push(record));
        c.registerTriggerType(
          { id: 'picky', description: 'refuses everything', configSchema: z.unknown() },
          {
            registerTrigger: () => {
              throw new FlintError('trigger_registration_failed', 'picky says no');
            },
            unregisterTrigger: () => {},
          },
        );
      },
    });
    const capture = captureLog('info');
    const engine = await startWithModules([def], [{ name: 'test-fake' }], {}, { logger: capture.logger });
    const fake = ctx as ModuleContext;

    fake.logger.info({ x: 1 }, 'fake says hello');
    expect(tapped.find((r) => r.msg === 'fake says hello')).toEqual({
      time: expect.any(Number),
      level: 'info',
      msg: 'fake says hello',
      source: 'engine',
      fields: { module: 'test-fake', x: 1 },
    });

    // A record of an engine component (the trigger registry refusing a trigger).
    fake.registerFunction({ id: 'fake::f' }, () => 1);
    await fake.registerTrigger({ id: 'picky-1', type: 'picky', function_id: 'fake::f', config: {} }).ready.catch(() => {});
    expect(tapped.find((r) => r.msg === 'trigger rejected: picky says no')).toMatchObject({
      level: 'warn',
      source: 'engine',
      fields: { component: 'triggers', trigger_id: 'picky-1', trigger_type: 'picky', function_id: 'fake::f' },
    });

    const worker = await startWorker('flint', engine);
    const workerId = (await listWorkers(engine)).find((w) => w.name === worker.name)?.id;
    expect(tapped.find((r) => r.fields.worker_id === workerId && r.msg.startsWith(`worker ${worker.name} `))).toMatchObject({
      level: 'info',
      source: 'engine',
      fields: { module: 'flint-engine' },
    });

    await worker.trigger({ function_id: 'engine::log::info', payload: { message: 'from the worker', data: { a: 1 } } });
    await worker.trigger({ function_id: 'engine::log::warn', payload: { message: 'worker warns' } });
    const fromWorker = tapped.filter((r) => r.source === 'worker');
    expect(fromWorker.map((r) => [r.level, r.msg, r.fields.worker_id])).toEqual([
      ['info', 'from the worker', workerId],
      ['warn', 'worker warns', workerId],
    ]);
    expect(fromWorker[0]?.fields.data).toEqual({ a: 1 });
    // The tap sees what the log itself got.
    expect(capture.records.find((r) => r.msg === 'from the worker')).toMatchObject({ source: 'worker', worker_id: workerId, level: 30 });

    unsubscribe();
    const count = tapped.length;
    await worker.trigger({ function_id: 'engine::log::info', payload: { message: 'after unsubscribe' } });
    fake.logger.warn('the module warns after unsubscribe');
    await waitFor(() => capture.records.some((r) => r.msg === 'after unsubscribe'), 1000, 'the line in the log');
    expect(tapped).toHaveLength(count);
  });
});

describe('ctx.registry', () => {
  it('sees a worker come and go (function, trigger type, trigger, worker events), and unsubscribes', async () => {
    const events: RegistryEvent[] = [];
    let unsubscribe: () => void = () => {};
    const def = fakeModule('test-fake', {
      start: (ctx) => {
        unsubscribe = ctx.registry.subscribe((event) => void events.push(event));
      },
    });
    const engine = await startWithModules([def], [{ name: 'test-fake' }]);
    const type = uid('w-type');
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('w::one', () => 1);
      w.registerTriggerType({ id: type, description: 'a worker type' }, { registerTrigger: () => {}, unregisterTrigger: () => {} });
      w.registerTrigger({ type, function_id: 'w::one', config: { c: 1 } });
    });
    const id = (await listWorkers(engine)).find((w) => w.name === worker.name)?.id as string;
    const triggerId = (await listTriggers(engine))[0]?.id as string;
    expect(triggerId).toBeTypeOf('string');

    // The trigger is applied once the worker's provider took it: that answer may come after the metadata.
    await waitFor(
      () => events.some((e) => e.type === 'worker_metadata_updated') && events.some((e) => e.type === 'trigger_updated'),
      2000,
      'the metadata update and the trigger applied',
    );
    expect(events[0]).toEqual({ type: 'worker_connected', worker_id: id });
    expect([...events].sort((a, b) => a.type.localeCompare(b.type))).toEqual([
      { type: 'function_added', function_id: 'w::one' },
      { type: 'trigger_added', trigger_id: triggerId, trigger_type: type, function_id: 'w::one' },
      { type: 'trigger_type_added', trigger_type: type },
      // Applied once its type's provider took it.
      { type: 'trigger_updated', trigger_id: triggerId, trigger_type: type, function_id: 'w::one' },
      { type: 'worker_connected', worker_id: id },
      { type: 'worker_metadata_updated', worker_id: id },
    ]);

    events.length = 0;
    await worker.shutdown();
    await waitFor(() => events.some((e) => e.type === 'worker_disconnected'), 2000, 'the disconnect');
    await waitFor(() => events.length >= 5, 1000, 'every removal');
    expect([...events].sort((a, b) => a.type.localeCompare(b.type))).toEqual([
      { type: 'function_removed', function_id: 'w::one' },
      { type: 'trigger_removed', trigger_id: triggerId, trigger_type: type, function_id: 'w::one' },
      { type: 'trigger_type_removed', trigger_type: type },
      // Parked when its type went, just before it went itself.
      { type: 'trigger_updated', trigger_id: triggerId, trigger_type: type, function_id: 'w::one' },
      { type: 'worker_disconnected', worker_id: id },
    ]);

    unsubscribe();
    events.length = 0;
    await startWorker('flint', engine, (w) => w.registerFunction('w::two', () => 2));
    expect(events).toEqual([]);
  });

  it('lists what engine::functions/triggers/workers::list list, and describeWorker updates a worker', async () => {
    const fake = contextModule();
    const engine = await startWithModules([fake.def], [{ name: 'test-fake' }]);
    const type = uid('w-type');
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('w::one', () => 1, { description: 'one' });
      w.registerTriggerType({ id: type, description: 'a worker type' }, { registerTrigger: () => {}, unregisterTrigger: () => {} });
      w.registerTrigger({ type, function_id: 'w::one', config: {} });
    });
    const { registry } = fake.ctx();

    expect(registry.functions().map((f) => f.function_id)).toEqual(['w::one']);
    expect(registry.functions()).toEqual(await listFunctions(engine));
    expect(registry.functions(true)).toEqual(await listFunctions(engine, true));
    expect(registry.triggers()).toHaveLength(1);
    expect(registry.triggers()).toEqual(await listTriggers(engine));
    expect(registry.triggers(true)).toEqual(await listTriggers(engine, true));
    expect(registry.triggerTypes().map((t) => t.id)).toEqual([type]);
    expect(registry.triggerTypes(true).map((t) => t.id)).toEqual(expect.arrayContaining([type, 'engine::functions-available']));
    expect(registry.hasFunction('w::one')).toBe(true);
    expect(registry.hasFunction('engine::functions::list')).toBe(true);
    expect(registry.hasFunction('w::none')).toBe(false);

    const workers = await listWorkers(engine);
    expect(workers.map((w) => w.name)).toEqual([worker.name]);
    const row = workers[0];
    expect(registry.workers()).toEqual(workers.map((w) => ({ ...w })));
    const id = row?.id as string;
    expect(registry.worker(id)).toEqual(row);
    expect(registry.worker('no-such-worker')).toBeUndefined();

    expect(registry.describeWorker(id, { name: 'renamed', runtime: 'node', version: '1.2.3' })).toBe(true);
    expect(await listWorkers(engine, id)).toEqual([expect.objectContaining({ id, name: 'renamed', runtime: 'node', version: '1.2.3' })]);
    expect(registry.describeWorker('no-such-worker', { name: 'x' })).toBe(false);

    await worker.shutdown();
    await waitFor(() => registry.workers().length === 0, 2000, 'the worker to leave the registry');
    expect(registry.functions()).toEqual([]);
    expect(registry.triggers()).toEqual([]);
    expect(registry.hasFunction('w::one')).toBe(false);
  });
});
