/**
 * Module lifecycle at shutdown: modules drain at once and stop in reverse start order, all under
 * `shutdown_timeout_ms`; a module stuck in drain (or stop) is named in the ShutdownReport and the log,
 * and does not keep `engine.stop()` from finishing.
 */
import { performance } from 'node:perf_hooks';
import type { ModuleContext, ModuleDefinition } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startWorker } from '../support/harness.js';
import { LEVEL, captureLog } from '../support/log-capture.js';
import { within } from '../support/util.js';
import { fakeModule, startWithModules } from './fake-module.js';

afterEach(cleanup);

const never = () => new Promise<void>(() => {});

/** Modules `test-a`, `test-b`, `test-c` recording their phases; `stuck` names the one whose drain/stop never ends. */
function recordingModules(order: string[], stuck: { module: string; phase: 'drain' | 'stop' }): ModuleDefinition[] {
  return ['test-a', 'test-b', 'test-c'].map((name) =>
    fakeModule(name, {
      start: () => void order.push(`${name} start`),
      drain: () => {
        order.push(`${name} drain`);
        return stuck.module === name && stuck.phase === 'drain' ? never() : undefined;
      },
      stop: () => {
        order.push(`${name} stop`);
        return stuck.module === name && stuck.phase === 'stop' ? never() : undefined;
      },
    }),
  );
}

const entries = [{ name: 'test-a' }, { name: 'test-b' }, { name: 'test-c' }];

describe('engine.stop() with a stuck module', () => {
  it('does not wait past shutdown_timeout_ms for a drain that never ends, names it, and still stops every module in reverse order', async () => {
    const order: string[] = [];
    const capture = captureLog('info');
    const engine = await startWithModules(
      recordingModules(order, { module: 'test-b', phase: 'drain' }),
      entries,
      { shutdown_timeout_ms: 300 },
      {
        logger: capture.logger,
      },
    );
    expect(order).toEqual(['test-a start', 'test-b start', 'test-c start']);
    order.length = 0;

    const started = performance.now();
    const stopping = engine.stop();
    // A stop called while one is under way waits for the same shutdown.
    expect(engine.stop()).toBe(stopping);
    const report = await within(stopping, 3000, 'engine.stop()');
    const elapsed = performance.now() - started;
    expect(report).toEqual({ holdups: [{ module: 'test-b', phase: 'drain' }] });
    expect(elapsed).toBeGreaterThanOrEqual(250); // it did wait for the deadline
    expect(elapsed).toBeLessThan(1500);

    // Drains run at once (in start order), stops in reverse start order.
    expect(order).toEqual(['test-a drain', 'test-b drain', 'test-c drain', 'test-c stop', 'test-b stop', 'test-a stop']);
    const held = capture.records.filter((r) => r.level === LEVEL.warn && r.module === 'test-b');
    expect(held.map((r) => r.msg)).toEqual(['module test-b held shutdown up: still in drain at the shutdown deadline; going on without it']);
    // Stopping a stopped engine runs nothing again.
    await engine.stop();
    expect(order).toHaveLength(6);
  });

  it('names a module whose stop never ends (phase stop) and goes on to stop the modules started before it', async () => {
    const order: string[] = [];
    const capture = captureLog('info');
    const engine = await startWithModules(
      recordingModules(order, { module: 'test-c', phase: 'stop' }),
      entries,
      { shutdown_timeout_ms: 300 },
      {
        logger: capture.logger,
      },
    );
    order.length = 0;
    const started = performance.now();
    const report = await within(engine.stop(), 4000, 'engine.stop()');
    // A module's stop gets at least a second (stores flush there) even when the deadline is nearer.
    expect(performance.now() - started).toBeLessThan(2500);
    expect(report).toEqual({ holdups: [{ module: 'test-c', phase: 'stop' }] });
    expect(order).toEqual(['test-a drain', 'test-b drain', 'test-c drain', 'test-c stop', 'test-b stop', 'test-a stop']);
    expect(capture.records.filter((r) => r.level === LEVEL.warn && r.module === 'test-c').map((r) => r.msg)).toEqual([
      'module test-c held shutdown up: still in stop at the shutdown deadline; going on without it',
    ]);
  });

  it('reports no holdups when every module finishes, and drains before workers are disconnected', async () => {
    const order: string[] = [];
    let workersAtDrain = -1;
    let probeCtx: ModuleContext | undefined;
    const probe = fakeModule('test-probe', {
      start: (ctx) => {
        probeCtx = ctx;
      },
      drain: () => {
        workersAtDrain = probeCtx?.registry.workers().length ?? -1;
        order.push('test-probe drain');
      },
      stop: () => void order.push('test-probe stop'),
    });
    const engine = await startWithModules([...recordingModules(order, { module: 'none', phase: 'drain' }), probe], [...entries, { name: 'test-probe' }], {
      shutdown_timeout_ms: 300,
    });
    await startWorker('flint', engine);
    order.length = 0;
    expect(await within(engine.stop(), 3000, 'engine.stop()')).toEqual({ holdups: [] });
    expect(workersAtDrain).toBe(1);
    expect(order.filter((e) => e.endsWith('stop'))).toEqual(['test-probe stop', 'test-c stop', 'test-b stop', 'test-a stop']);
  });
});
