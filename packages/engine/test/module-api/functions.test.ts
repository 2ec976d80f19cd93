/**
 * Module API: function ownership. A function id is provided by one module: a second module
 * registering it fails start-up naming both; the engine's `engine::log::*` are replaceable defaults
 * that a module can take over.
 */
import { type InvocationContext, createEngine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { SDK_KINDS, listFunctions, listWorkers, startWorker } from '../support/harness.js';
import { captureLog } from '../support/log-capture.js';
import { outcome } from '../support/util.js';
import { fakeModule, startWithModules } from './fake-module.js';

afterEach(cleanup);

describe('function ownership', () => {
  it('a second module registering an id another module provides makes start-up fail, naming both modules', async () => {
    const order: string[] = [];
    const owner = (name: string) =>
      fakeModule(name, {
        start: (ctx) => {
          order.push(`${name} start`);
          ctx.registerFunction({ id: 'fake::shared' }, () => name);
        },
        stop: () => void order.push(`${name} stop`),
      });
    const engine = createEngine({
      modules: [owner('test-a'), owner('test-b')],
      config: { bridge: { port: 0 }, log: { level: 'silent' }, modules: [{ name: 'test-a' }, { name: 'test-b' }] },
    });
    track(() => engine.stop());
    const result = await outcome(engine.start());
    expect(result).toEqual({
      ok: false,
      error: { code: 'internal_error', message: 'function fake::shared is already provided by module test-a (registered by test-b)' },
    });
    // The engine shut down the modules it had started, in reverse order.
    expect(order).toEqual(['test-a start', 'test-b start', 'test-b stop', 'test-a stop']);
    expect(engine.listFunctions(true).map((f) => f.function_id)).not.toContain('fake::shared');
  });

  it('the same module may register several functions, and they are withdrawn at its stop', async () => {
    const def = fakeModule('test-fake', {
      start: (ctx) => {
        ctx.registerFunction({ id: 'fake::one', description: 'one' }, () => 1);
        ctx.registerFunction({ id: 'fake::two' }, (data) => ({ echo: data }));
      },
    });
    const engine = await startWithModules([def], [{ name: 'test-fake' }]);
    expect((await listFunctions(engine)).map((f) => [f.function_id, f.description])).toEqual([
      ['fake::one', 'one'],
      ['fake::two', null],
    ]);
    expect(await engine.invoke('fake::two', { a: 1 })).toEqual({ echo: { a: 1 } });
    await engine.stop();
    expect(engine.stats().functions).toBe(0);
  });
});

describe.each(SDK_KINDS)('a module taking over engine::log::info (%s worker)', (kind) => {
  it("gets the worker's engine::log::info calls instead of the engine log; other levels stay with the engine", async () => {
    const calls: { data: unknown; call: InvocationContext }[] = [];
    const def = fakeModule('test-logs', {
      start: (ctx) => {
        ctx.registerFunction({ id: 'engine::log::info', description: 'kept by test-logs' }, (data, call) => {
          calls.push({ data, call });
          return { kept: calls.length };
        });
      },
    });
    const capture = captureLog('info');
    const engine = await startWithModules([def], [{ name: 'test-logs' }], {}, { logger: capture.logger });
    const worker = await startWorker(kind, engine);
    const workerId = (await listWorkers(engine)).find((w) => w.name === worker.name)?.id;

    for (let i = 1; i <= 3; i++) {
      expect(await worker.trigger({ function_id: 'engine::log::info', payload: { message: `mine ${i}` } })).toEqual({ kept: i });
    }
    expect(calls.map((c) => [c.data, c.call.functionId, c.call.callerWorkerId])).toEqual([
      [{ message: 'mine 1' }, 'engine::log::info', workerId],
      [{ message: 'mine 2' }, 'engine::log::info', workerId],
      [{ message: 'mine 3' }, 'engine::log::info', workerId],
    ]);

    await worker.trigger({ function_id: 'engine::log::warn', payload: { message: 'still the engine' } });
    expect(capture.records.find((r) => r.msg === 'still the engine')).toMatchObject({ source: 'worker', worker_id: workerId, level: 40 });
    expect(capture.records.filter((r) => String(r.msg).startsWith('mine'))).toEqual([]);

    const infos = engine.listFunctions(true).filter((f) => f.function_id === 'engine::log::info');
    expect(infos).toHaveLength(1);
    expect(infos[0]?.description).toBe('kept by test-logs');
  });
});
