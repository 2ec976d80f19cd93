/**
 * GET /_console/metrics (the console's sampler of engine::metrics::list: a history with rates) and
 * GET /_console/metrics/errors (the newest failed traces), against a real engine with and without
 * flint-observability.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, type Json, startConsoleEnv, uid, waitFor } from './support/console-env.js';

describe('GET /_console/metrics with flint-observability', () => {
  let env: ConsoleEnv;
  const ns = uid('metrics');
  const ok = `${ns}::ok`;
  const broken = `${ns}::broken`;

  beforeAll(async () => {
    env = await startConsoleEnv({ extraModules: [{ name: 'flint-observability', config: {} }] });
    await env.worker((w) => {
      w.registerFunction(ok, (input: Json) => ({ n: input?.n ?? 0 }));
      w.registerFunction(broken, () => {
        throw new Error('the ledger is closed');
      });
    });
  });
  afterAll(() => env?.close());

  it('answers a history at once, every reading with the counts, the workers and the durations', async () => {
    const res = await env.api('GET', '/_console/metrics');
    expect(res.status).toBe(200);
    const body = res.body;
    expect(body).toMatchObject({ available: true, bridge: 'connected', interval_ms: 2000, window_ms: 600_000 });
    expect(body.reason).toBeUndefined();
    expect(body.samples.length).toBeGreaterThanOrEqual(1);
    const last = body.samples.at(-1);
    expect(last).toMatchObject({ total: expect.any(Number), success: expect.any(Number), error: expect.any(Number), in_flight: expect.any(Number) });
    expect(last.workers_active).toBeGreaterThanOrEqual(1);
    expect(body.latest.invocations.by_function).toBeTypeOf('object');
    expect(body.latest.process.rss_bytes).toBeGreaterThan(0);
    expect(body.latest.performance).toMatchObject({ sample_size: expect.any(Number) });
  });

  it('counts a burst of calls: the totals move and a reading shows the rate, the error ratio and the percentiles', async () => {
    const before = (await env.api('GET', '/_console/metrics')).body.samples.at(-1);
    for (let i = 0; i < 50; i++) await env.api('POST', '/_console/invoke', { function_id: ok, input: { n: i } });
    for (let i = 0; i < 5; i++) await env.api('POST', '/_console/invoke', { function_id: broken, input: {} });
    // The sampler reads every 2 s: wait for a reading that saw the burst.
    const body = await waitFor(
      async () => {
        const b = (await env.api('GET', '/_console/metrics')).body;
        return b.samples.at(-1).total >= before.total + 55 ? b : undefined;
      },
      8000,
      'a reading after the burst',
    );
    const last = body.samples.at(-1);
    expect(last.error).toBeGreaterThanOrEqual(before.error + 5);
    expect(last.p50_ms).toBeTypeOf('number');
    expect(last.p99_ms).toBeGreaterThanOrEqual(last.p50_ms);
    const withRate = body.samples.filter((s: Json) => typeof s.rate === 'number' && s.rate > 0);
    expect(withRate.length).toBeGreaterThanOrEqual(1);
    expect(withRate.some((s: Json) => s.error_ratio > 0 && s.error_rate > 0)).toBe(true);
    expect(body.latest.invocations.by_function[ok]).toMatchObject({ total: 50, success: 50, error: 0 });
    expect(body.latest.invocations.by_function[broken]).toMatchObject({ total: 5, error: 5 });
    // The per-function counts can be left out.
    const lean = (await env.api('GET', '/_console/metrics?by_function=false')).body;
    expect(lean.latest.invocations.by_function).toEqual({});
    expect(lean.latest.invocations.total).toBeGreaterThanOrEqual(55);
    // Readings are in time order, at most one per interval.
    const times = body.samples.map((s: Json) => s.t);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('lists the newest failed traces first, with their code, message and trace id', async () => {
    await env.api('POST', '/_console/invoke', { function_id: broken, input: { last: true } });
    const res = await waitFor(async () => {
      const r = await env.api('GET', '/_console/metrics/errors?limit=3');
      return r.body.errors?.some((e: Json) => e.function_id === broken) ? r : undefined;
    });
    expect(res.status).toBe(200);
    expect(res.body.available).toBe(true);
    expect(res.body.errors.length).toBeLessThanOrEqual(3);
    const first = res.body.errors[0];
    expect(first).toMatchObject({ name: `call ${broken}`, function_id: broken, trace_id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(first.message).toContain('the ledger is closed');
    expect(first.code).toBeTypeOf('string');
    const starts = res.body.errors.map((e: Json) => e.start_ms);
    expect([...starts].sort((a, b) => b - a)).toEqual(starts);
  });

  it('refuses a bad limit', async () => {
    const res = await env.api('GET', '/_console/metrics/errors?limit=abc');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
  });
});

describe('GET /_console/metrics without metrics', () => {
  it('says flint-observability is not loaded, and the errors list says so too', async () => {
    const env = await startConsoleEnv();
    try {
      const res = await env.api('GET', '/_console/metrics');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ available: false, reason: 'module_not_loaded', samples: [], latest: null, bridge: 'connected' });
      expect(res.body.detail).toContain('flint-observability');
      const errors = await env.api('GET', '/_console/metrics/errors');
      expect(errors.body).toMatchObject({ available: false, reason: 'module_not_loaded', errors: [] });
    } finally {
      await env.close();
    }
  });

  it('says metrics_enabled is off, still showing the workers, and traces kept elsewhere are reported', async () => {
    const env = await startConsoleEnv({ extraModules: [{ name: 'flint-observability', config: { metrics_enabled: false, enabled: false } }] });
    try {
      await env.worker();
      const res = await env.api('GET', '/_console/metrics');
      expect(res.body).toMatchObject({ available: false, reason: 'metrics_disabled', samples: [] });
      expect(res.body.detail).toContain('metrics_enabled');
      expect(res.body.latest.workers.active).toBeGreaterThanOrEqual(1);
      const errors = await env.api('GET', '/_console/metrics/errors');
      expect(errors.body).toMatchObject({ available: false, reason: 'traces_not_stored', errors: [] });
    } finally {
      await env.close();
    }
  });
});
