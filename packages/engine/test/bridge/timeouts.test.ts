/**
 * A burst of time-outs: many calls to a worker that never answers all get `invocation_timeout`, on
 * time (generously bounded: the engine's time-outs are not held up behind one another), and the log
 * stays readable: one warn line for the first, then one summary per second with the count per
 * function, not one line per call.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine } from '../support/harness.js';
import { LEVEL, captureLog } from '../support/log-capture.js';
import { RawClient } from '../support/raw-client.js';
import { sleep, waitFor } from '../support/util.js';

afterEach(cleanup);

const CALLS = 30_000;
const TIMEOUT_MS = 500;

describe('a burst of time-outs', () => {
  it(`answers ${CALLS.toLocaleString('en-US')} calls to a silent worker with invocation_timeout on time, with a bounded number of log lines`, async () => {
    const { logger, records: logs } = captureLog('info');
    const engine = await startTestEngine({ max_invocations_per_worker: CALLS }, { logger });
    // A raw worker that takes every call and never answers.
    const silent = await RawClient.connect(engine.bridgeUrl);
    silent.keepFrames = false;
    await silent.serve('silent::a', () => new Promise(() => {}));
    await silent.serve('silent::b', () => new Promise(() => {}));
    const caller = await RawClient.connect(engine.bridgeUrl);
    await caller.registered();
    caller.keepFrames = false;
    const sentAt = new Map<string, number>();
    const lateness: number[] = [];
    const codes = new Map<string, number>();
    let firstAnswerAt = 0;
    const answered = new Promise<void>((resolve) => {
      caller.onFrame = (frame) => {
        if (frame.type !== 'invocationresult') return;
        if (lateness.length === 0) firstAnswerAt = performance.now();
        lateness.push(performance.now() - (sentAt.get(frame.invocation_id) as number) - TIMEOUT_MS);
        codes.set(frame.error?.code, (codes.get(frame.error?.code) ?? 0) + 1);
        if (lateness.length === CALLS) resolve();
      };
    });
    const started = performance.now();
    for (let n = 0; n < CALLS; n++) {
      const id = randomUUID();
      sentAt.set(id, performance.now());
      caller.send({ type: 'invokefunction', invocation_id: id, function_id: n % 10 === 0 ? 'silent::b' : 'silent::a', data: { n }, timeout_ms: TIMEOUT_MS });
    }
    await answered;
    const sendingMs = performance.now() - started;
    const answeringMs = performance.now() - firstAnswerAt;
    expect(Object.fromEntries(codes)).toEqual({ invocation_timeout: CALLS });
    // Not early, and not late beyond the time the engine needs to take in the burst at all (measured
    // from the send, so the engine's reading of the frames counts too): a generous bound.
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(-5);
    expect(Math.max(...lateness), `worst lateness (the burst took ${sendingMs.toFixed(0)} ms)`).toBeLessThan(3000);

    // The first time-out of each second in full, the rest of that second in one summary line: on a
    // slow machine the burst's time-outs span more than one second, which adds a full line per second.
    const timeoutLines = () => logs.filter((l) => /timed out/.test(String(l.msg)));
    await waitFor(
      () => timeoutLines().reduce((n, l) => n + (l.count ?? 1), 0) === CALLS,
      3000,
      () => `the time-outs to be logged: ${JSON.stringify(timeoutLines())}`,
    );
    const lines = timeoutLines();
    const full = lines.filter((l) => l.count === undefined);
    const summaries = lines.filter((l) => l.count !== undefined);
    expect(lines[0]).toBe(full[0]);
    for (const line of full) {
      expect(line).toMatchObject({ level: LEVEL.warn, function_id: expect.stringMatching(/^silent::[ab]$/), invocation_id: expect.any(String) });
      expect(line.msg).toMatch(/^invocation of silent::[ab] timed out after 500 ms$/);
    }
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    // At most one summary per second of time-outs (and one full line before each), however long they lasted.
    const seconds = Math.ceil(answeringMs / 1000) + 2;
    expect(summaries.length).toBeLessThanOrEqual(seconds);
    expect(full.length).toBeLessThanOrEqual(summaries.length + 1);
    const perFunction: Record<string, number> = {};
    for (const line of full) perFunction[line.function_id] = (perFunction[line.function_id] ?? 0) + 1;
    for (const line of summaries) {
      expect(line.level).toBe(LEVEL.warn);
      expect(line.msg).toMatch(/^[\d,]+ more invocations? timed out in the last second \(silent::[ab]: [\d,]+(, silent::[ab]: [\d,]+)?\)$/);
      for (const [fn, n] of Object.entries(line.functions as Record<string, number>)) perFunction[fn] = (perFunction[fn] ?? 0) + n;
    }
    expect(perFunction).toEqual({ 'silent::a': CALLS * 0.9, 'silent::b': CALLS * 0.1 });
    await sleep(1200);
    expect(timeoutLines()).toHaveLength(lines.length);
    expect(engine.stats().pendingInvocations).toBe(0);
  });
});
