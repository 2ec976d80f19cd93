/**
 * flint-cron through real workers (@flint/sdk and iii-sdk@0.11.6) on one engine with the default memory
 * lock and store: the payload, one firing per slot for replicas of a trigger, conditions, overlap,
 * Trigger Now (flint::cron::trigger), engine::cron::list, and registration errors.
 */
import type { Engine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, startTestEngine, startWorker } from '../support/harness.js';
import { LEVEL, type LogRecord, captureLog } from '../support/log-capture.js';
import { sleep, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

const startCronEngine = (config: Record<string, unknown> = {}): Promise<Engine> => startTestEngine({ modules: [{ name: 'flint-cron', config }] });

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;

describe.each(SDK_KINDS)('flint-cron with a %s worker', (kind) => {
  it('fires every second with the payload: trigger, job_id, scheduled and actual time in the trigger time zone, manual false', async () => {
    const engine = await startCronEngine();
    const fn = uid('cron::tick');
    const seen: Record<string, unknown>[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction(fn, (data) => {
        seen.push(data);
        return null;
      });
      w.registerTrigger({ type: 'cron', function_id: fn, config: { expression: '* * * * * *', timezone: 'Asia/Kolkata' } });
    });
    await waitFor(() => seen.length >= 2, 5000, 'two firings');
    const first = seen[0] as { trigger: Record<string, unknown>; job_id: string; scheduled_time: string; actual_time: string; manual: boolean };
    expect(first.trigger).toMatchObject({ type: 'cron', expression: '* * * * * *', timezone: 'Asia/Kolkata' });
    expect(typeof first.trigger.id).toBe('string');
    expect(first.job_id).toMatch(new RegExp(`^${fn.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}#[0-9a-f]{12}$`));
    expect(first.manual).toBe(false);
    expect(first.scheduled_time).toMatch(ISO_WITH_OFFSET);
    expect(first.scheduled_time.endsWith('+05:30')).toBe(true);
    expect(first.scheduled_time).toMatch(/:\d{2}\.000\+05:30$/);
    const skew = Date.parse(first.actual_time) - Date.parse(first.scheduled_time);
    expect(skew).toBeGreaterThanOrEqual(0);
    expect(skew).toBeLessThan(1000);
    const second = seen[1] as { scheduled_time: string };
    expect(Date.parse(second.scheduled_time) - Date.parse(first.scheduled_time)).toBe(1000);
  });

  it('replicas of a trigger (same function and config) fire each slot once; a condition returning false skips', async () => {
    const engine = await startCronEngine();
    const fn = uid('cron::replica');
    const slots: string[] = [];
    const handler = (data: { scheduled_time: string }) => {
      slots.push(data.scheduled_time);
      return null;
    };
    const skipped = uid('cron::skipped');
    const skippedCalls: unknown[] = [];
    const cond = uid('cron::never');
    const condInputs: unknown[] = [];
    for (let i = 0; i < 2; i++)
      await startWorker(kind, engine, (w) => {
        w.registerFunction(fn, handler);
        w.registerTrigger({ type: 'cron', function_id: fn, config: { expression: '* * * * * *' } });
      });
    await startWorker(kind, engine, (w) => {
      w.registerFunction(cond, (data) => {
        condInputs.push(data);
        return false;
      });
      w.registerFunction(skipped, (data) => {
        skippedCalls.push(data);
        return null;
      });
      w.registerTrigger({ type: 'cron', function_id: skipped, config: { expression: '* * * * * *', condition_function_id: cond } });
    });
    await waitFor(() => slots.length >= 3 && condInputs.length >= 2, 6000, 'three slots');
    expect(new Set(slots).size).toBe(slots.length);
    expect(skippedCalls).toEqual([]);
    expect(condInputs[0]).toMatchObject({ trigger: { type: 'cron' }, manual: false });
  });

  it('300 jobs due in the same slots (two time zones): each fires every slot once', async () => {
    const engine = await startCronEngine();
    const prefix = uid('cron::many');
    const seen = new Map<string, string[]>();
    const zones = ['UTC', 'Asia/Kolkata'];
    await startWorker(kind, engine, (w) => {
      for (let i = 0; i < 300; i++) {
        const fn = `${prefix}::${i}`;
        seen.set(fn, []);
        w.registerFunction(fn, (data) => {
          const { scheduled_time, actual_time } = data as { scheduled_time: string; actual_time: string };
          expect(Date.parse(actual_time)).toBeGreaterThanOrEqual(Date.parse(scheduled_time));
          seen.get(fn)?.push(new Date(Date.parse(scheduled_time)).toISOString());
          return null;
        });
        w.registerTrigger({ type: 'cron', function_id: fn, config: { expression: '* * * * * *', timezone: zones[i % 2] } });
      }
    });
    await waitFor(() => [...seen.values()].every((slots) => slots.length >= 3), 8000, 'three slots for every job');
    const [firstFn, firstSlots] = [...seen][0] as [string, string[]];
    // A slot every job fired in: the second one the first job saw (every job was registered before it came).
    const common = firstSlots[1] as string;
    for (const [fn, slots] of seen) {
      expect(new Set(slots).size, `${fn} fired a slot twice`).toBe(slots.length);
      expect(slots, `${fn} (beside ${firstFn})`).toContain(common);
    }
  });

  it('overlap: skip leaves out slots while a run is going; overlap: allow runs them side by side', async () => {
    const engine = await startCronEngine();
    const skipFn = uid('cron::slow-skip');
    const allowFn = uid('cron::slow-allow');
    let skipActive = 0;
    let skipMax = 0;
    let skipRuns = 0;
    let allowActive = 0;
    let allowMax = 0;
    await startWorker(kind, engine, (w) => {
      w.registerFunction(skipFn, async () => {
        skipRuns++;
        skipMax = Math.max(skipMax, ++skipActive);
        await sleep(2500);
        skipActive--;
        return null;
      });
      w.registerFunction(allowFn, async () => {
        allowMax = Math.max(allowMax, ++allowActive);
        await sleep(2500);
        allowActive--;
        return null;
      });
      w.registerTrigger({ type: 'cron', function_id: skipFn, config: { expression: '* * * * * *' } });
      w.registerTrigger({ type: 'cron', function_id: allowFn, config: { expression: '* * * * * *', overlap: 'allow' } });
    });
    await sleep(4200);
    expect(skipMax).toBe(1);
    expect(skipRuns).toBeLessThanOrEqual(2);
    expect(skipRuns).toBeGreaterThanOrEqual(1);
    expect(allowMax).toBeGreaterThanOrEqual(2);
  });

  it('flint::cron::trigger runs a trigger now with manual: true and returns its result; engine::cron::list shows next runs and the last run', async () => {
    const engine = await startCronEngine();
    const fn = uid('cron::yearly');
    const calls: { manual: boolean }[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction(fn, (data) => {
        calls.push(data);
        return { done: calls.length };
      });
      w.registerTrigger({ type: 'cron', function_id: fn, config: { expression: '0 9 * * MON-FRI', timezone: 'America/New_York' } });
    });
    let listing: { trigger_id: string; function_id: string; next_runs: string[]; last_run: unknown }[] = [];
    await waitFor(
      async () => {
        listing = ((await engine.invoke('engine::cron::list', {})) as { triggers: typeof listing }).triggers.filter((t) => t.function_id === fn);
        return listing.length === 1;
      },
      3000,
      'the trigger listed',
    );
    const entry = listing[0] as (typeof listing)[number];
    expect(entry.next_runs).toHaveLength(3);
    for (const at of entry.next_runs) expect(at).toMatch(/T09:00:00\.000-0[45]:00$/);
    expect(entry.last_run).toBeNull();
    const result = await engine.invoke('flint::cron::trigger', { trigger_id: entry.trigger_id });
    expect(result).toMatchObject({ trigger_id: entry.trigger_id, function_id: fn, status: 'invoked', result: { done: 1 } });
    expect(calls[0]?.manual).toBe(true);
    const after = ((await engine.invoke('engine::cron::list', {})) as { triggers: typeof listing }).triggers.find((t) => t.function_id === fn);
    expect(after?.last_run).toMatchObject({ manual: true, outcome: 'ok' });
  });
});

describe('flint-cron failures', () => {
  it('a failing condition or function is logged with the job and slot, recorded as failed, and the job goes on firing', async () => {
    const log = captureLog('warn');
    const engine = await startTestEngine({ modules: [{ name: 'flint-cron' }] }, { logger: log.logger });
    const failing = uid('cron::failing');
    const guarded = uid('cron::guarded');
    const cond = uid('cron::broken-condition');
    let failingRuns = 0;
    let guardedRuns = 0;
    await startWorker('flint', engine, (w) => {
      w.registerFunction(failing, () => {
        failingRuns++;
        throw new Error('boom');
      });
      w.registerFunction(guarded, () => {
        guardedRuns++;
        return null;
      });
      w.registerFunction(cond, () => {
        throw new Error('condition broke');
      });
      w.registerTrigger({ type: 'cron', function_id: failing, config: { expression: '* * * * * *' } });
      w.registerTrigger({ type: 'cron', function_id: guarded, config: { expression: '* * * * * *', condition_function_id: cond } });
    });
    const lines = (fn: string) => log.records.filter((r) => r.function_id === fn && r.level === LEVEL.warn);
    await waitFor(() => failingRuns >= 2 && lines(failing).length >= 2 && lines(guarded).length >= 2, 6000, 'two failed slots of each job');
    const fnLine = lines(failing)[0] as LogRecord;
    expect(fnLine.msg).toMatch(/^cron trigger failed: .*boom/);
    expect(fnLine).toMatchObject({ trigger_type: 'cron', job_id: expect.stringContaining(failing), manual: false });
    expect(fnLine.scheduled_time).toMatch(ISO_WITH_OFFSET);
    const condLine = lines(guarded)[0] as LogRecord;
    expect(condLine.msg).toMatch(new RegExp(`^condition ${cond.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} failed: .*condition broke`));
    expect(condLine).toMatchObject({ trigger_type: 'cron', condition_function_id: cond, job_id: expect.stringContaining(guarded), manual: false });
    expect(guardedRuns).toBe(0);
    const listing = ((await engine.invoke('engine::cron::list', {})) as { triggers: { function_id: string; last_run: unknown }[] }).triggers;
    for (const fn of [failing, guarded]) expect(listing.find((t) => t.function_id === fn)?.last_run).toMatchObject({ manual: false, outcome: 'failed' });
  });
});

describe('flint-cron registration errors', () => {
  it.each([
    [{ expression: '61 * * * *' }, /Invalid cron expression '61 \* \* \* \*': .*minute/],
    [{ expression: '* * * *' }, /Invalid cron expression '\* \* \* \*'/],
    [{ expression: '* * * * * * *' }, /Invalid cron expression/],
    [{ expression: '' }, /Cron expression is required/],
    [{}, /Cron expression is required/],
    [{ expression: '* * * * *', timezone: 'Mars/Olympus' }, /Unknown time zone 'Mars\/Olympus'/],
    [{ expression: '* * * * *', timzone: 'UTC' }, /unknown key "timzone"/],
    [{ expression: '* * * * *', overlap: 'sometimes' }, /overlap/],
  ])('refuses %j', async (config, message) => {
    const engine = await startCronEngine();
    const worker = await startWorker('flint', engine, (w) => w.registerFunction('cron::bad', () => null));
    const native = worker.native as { registerTrigger(input: unknown): { ready: Promise<unknown> } };
    const error = await native.registerTrigger({ type: 'cron', function_id: 'cron::bad', config }).ready.catch((err: Error & { code?: string }) => err);
    expect(error).toBeInstanceOf(Error);
    expect((error as { code?: string }).code).toBe('trigger_registration_failed');
    expect((error as Error).message).toMatch(message);
    // The engine keeps running and takes a good trigger after.
    await native.registerTrigger({ type: 'cron', function_id: 'cron::bad', config: { expression: '@hourly' } }).ready;
  });

  it('flint::cron::trigger with an unknown trigger id fails with trigger_not_found; without one with invalid_payload', async () => {
    const engine = await startCronEngine();
    await expect(engine.invoke('flint::cron::trigger', { trigger_id: 'nope' })).rejects.toMatchObject({ code: 'trigger_not_found' });
    await expect(engine.invoke('flint::cron::trigger', {})).rejects.toMatchObject({ code: 'invalid_payload' });
  });
});
