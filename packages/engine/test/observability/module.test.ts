/**
 * flint-observability (logs) through real workers (@flint/sdk and iii-sdk@0.11.6): engine::log::* calls
 * and the engine's own lines land in the store, engine::logs::list filters them, engine::logs::clear
 * empties it, and `log` triggers fire by level and min_level without setting themselves off again.
 */
import type { Engine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, startTestEngine, startWorker } from '../support/harness.js';
import { sleep, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

interface Listed {
  logs: { body: string; severity_text: string; trace_id: string | null; span_id: string | null; attributes: Record<string, unknown>; service_name: string }[];
  total: number;
}

const startObsEngine = (config: Record<string, unknown> = {}): Promise<Engine> =>
  startTestEngine({ log: { level: 'info' }, modules: [{ name: 'flint-observability', config }] });

const list = async (engine: Engine, query: Record<string, unknown>) => (await engine.invoke('engine::logs::list', query)) as Listed;

describe.each(SDK_KINDS)('flint-observability logs with a %s worker', (kind) => {
  it("keeps a worker's engine::log::* lines with data as attributes and their trace ids; filters by severity, trace and text", async () => {
    const engine = await startObsEngine();
    const marker = uid('marker');
    const worker = await startWorker(kind, engine);
    await worker.trigger({
      function_id: 'engine::log::warn',
      payload: { message: `${marker} disk almost full`, data: { disk: 'sda', used: 0.93 }, trace_id: TRACE, span_id: SPAN, service_name: 'billing' },
    });
    await worker.trigger({ function_id: 'engine::log::info', payload: { message: `${marker} all good` } });
    const mine = await list(engine, { text: marker });
    expect(mine.total).toBe(2);
    expect(mine.logs[0]?.body).toBe(`${marker} all good`); // newest first
    const warn = mine.logs[1];
    expect(warn).toMatchObject({ severity_text: 'WARN', trace_id: TRACE, span_id: SPAN, service_name: 'billing' });
    expect(warn?.attributes).toMatchObject({ disk: 'sda', used: 0.93 });
    expect((await list(engine, { text: marker, severity_min: 'warn' })).logs.map((l) => l.body)).toEqual([`${marker} disk almost full`]);
    expect((await list(engine, { trace_id: TRACE })).total).toBe(1);
    expect((await list(engine, { text: 'sda' })).total).toBe(1); // attribute values are searched too
  });
});

describe('flint-observability', () => {
  it("keeps the engine's own lines (a worker connecting) and clears on engine::logs::clear", async () => {
    const engine = await startObsEngine();
    const name = uid('conn');
    await startWorker('flint', engine, undefined, { name });
    await waitFor(async () => (await list(engine, { text: name })).total > 0, 3000, 'the engine line about the worker');
    const line = (await list(engine, { text: name })).logs[0];
    expect(line?.service_name).toBe('flint');
    expect(await engine.invoke('engine::logs::clear', {})).toEqual({ success: true });
    expect((await list(engine, {})).total).toBeLessThanOrEqual(1);
  });

  it('log triggers fire by exact level and by min_level; a handler that logs does not fire itself again', async () => {
    const engine = await startObsEngine();
    const exact: { level: string; message: string }[] = [];
    const atLeast: { level: string; message: string; trace_id: string | null; date: string }[] = [];
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('obs::exact-warn', (data) => {
        exact.push(data);
        return null;
      });
      w.registerFunction('obs::warn-and-up', async (data) => {
        atLeast.push(data);
        // Logs an error itself: must not fire this trigger (or the other) again.
        await w.trigger({ function_id: 'engine::log::error', payload: { message: `handled ${data.message}` } });
        return null;
      });
      w.registerTrigger({ type: 'log', function_id: 'obs::exact-warn', config: { level: 'warn' } });
      w.registerTrigger({ type: 'log', function_id: 'obs::warn-and-up', config: { min_level: 'warn' } });
    });
    await sleep(100);
    const marker = uid('m');
    for (const level of ['info', 'warn', 'error'])
      await worker.trigger({ function_id: `engine::log::${level}`, payload: { message: `${marker} ${level}`, trace_id: TRACE } });
    await waitFor(
      () => atLeast.filter((d) => d.message.startsWith(marker)).length >= 2 && exact.some((d) => d.message.startsWith(marker)),
      3000,
      'the log triggers',
    );
    await sleep(300);
    expect(exact.filter((d) => d.message.startsWith(marker)).map((d) => d.level)).toEqual(['warn']);
    const mine = atLeast.filter((d) => d.message.startsWith(marker));
    expect(mine.map((d) => d.level).sort()).toEqual(['error', 'warn']);
    expect(mine[0]).toMatchObject({ trace_id: TRACE });
    expect(Number.isNaN(Date.parse(mine[0]?.date ?? ''))).toBe(false);
    expect(atLeast.filter((d) => d.message.startsWith('handled'))).toEqual([]);
  });

  it('refuses a log trigger with an unknown level or key, and a bad engine::logs::list query', async () => {
    const engine = await startObsEngine();
    const worker = await startWorker('flint', engine, (w) => w.registerFunction('obs::h', () => null));
    const native = worker.native as { registerTrigger(input: unknown): { ready: Promise<unknown> } };
    for (const config of [{ level: 'loud' }, { levle: 'warn' }]) {
      const err = await native.registerTrigger({ type: 'log', function_id: 'obs::h', config }).ready.catch((e: Error & { code?: string }) => e);
      expect((err as { code?: string }).code).toBe('trigger_registration_failed');
    }
    await expect(engine.invoke('engine::logs::list', { limit: -1 })).rejects.toMatchObject({ code: 'invalid_payload' });
  });
});
