/**
 * flint-observability metrics and health: engine::metrics::list counts invocations by function and
 * trigger type from real calls, keeps SDK metric points, and reads the process; the Prometheus
 * endpoint serves the same counts as text through the OpenTelemetry exporter; engine::health::check
 * reports each component from what it holds.
 */
import type { Engine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { sendTelemetry } from '../support/observability/telemetry.js';
import { freePort, outcome, waitFor } from '../support/util.js';

afterEach(cleanup);

interface Metrics {
  engine_metrics: {
    invocations: {
      total: number;
      success: number;
      error: number;
      in_flight: number;
      by_function: Record<string, { total: number; success: number; error: number }>;
      by_trigger_type: Record<string, { total: number; skipped: number }>;
    };
    workers: { spawns: number; deaths: number; active: number };
    performance: { p50_duration_ms: number; p99_duration_ms: number; sample_size: number };
    process: { heap_used_bytes: number; rss_bytes: number; event_loop_lag_p99_ms: number };
  };
  sdk_metrics: { name: string; value?: number; service_name: string }[];
}

const metrics = async (engine: Engine, query: Record<string, unknown> = {}) => (await engine.invoke('engine::metrics::list', query)) as Metrics;

async function engineWith(config: Record<string, unknown> = {}): Promise<Engine> {
  return startTestEngine({
    modules: [{ name: 'flint-state' }, { name: 'flint-observability', config: { enabled: true, ...config } }],
  });
}

describe('flint-observability metrics', () => {
  it('counts invocations by function and outcome, trigger firings by type, workers, and reads the process', async () => {
    const engine = await engineWith();
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('m::ok', () => 1);
      w.registerFunction('m::fail', () => {
        throw new Error('no');
      });
      w.registerFunction('m::on-change', () => null);
      w.registerTrigger({ type: 'state', function_id: 'm::on-change', config: { scope: 'm' } });
    });
    for (let i = 0; i < 5; i++) await worker.trigger({ function_id: 'm::ok', payload: {} });
    for (let i = 0; i < 2; i++) await outcome(worker.trigger({ function_id: 'm::fail', payload: {} }));
    await worker.trigger({ function_id: 'state::set', payload: { scope: 'm', key: 'k', value: 1 } });
    const m = await waitFor(async () => {
      const now = await metrics(engine);
      return now.engine_metrics.invocations.by_trigger_type.state?.total === 1 ? now : undefined;
    });
    const inv = m.engine_metrics.invocations;
    expect(inv.by_function['m::ok']).toEqual({ total: 5, success: 5, error: 0 });
    expect(inv.by_function['m::fail']).toEqual({ total: 2, success: 0, error: 2 });
    expect(inv.by_function['m::on-change']).toMatchObject({ total: 1, success: 1 });
    expect(inv.total).toBe(inv.success + inv.error);
    expect(inv.in_flight).toBe(0); // engine::metrics::list itself is not counted
    expect(m.engine_metrics.workers).toMatchObject({ spawns: 1, deaths: 0, active: 1 });
    expect(m.engine_metrics.performance.sample_size).toBeGreaterThanOrEqual(8);
    expect(m.engine_metrics.performance.p99_duration_ms).toBeGreaterThanOrEqual(m.engine_metrics.performance.p50_duration_ms);
    expect(m.engine_metrics.process.rss_bytes).toBeGreaterThan(m.engine_metrics.process.heap_used_bytes / 2);

    await worker.shutdown();
    await waitFor(async () => (await metrics(engine)).engine_metrics.workers.deaths === 1, 3000, 'the worker to be counted gone');
  });

  it('refuses a query of the wrong shape', async () => {
    const engine = await engineWith();
    await expect(metrics(engine, { start_time: 'yesterday' })).rejects.toMatchObject({ code: 'invalid_payload' });
    await expect(engine.invoke('engine::metrics::list', [1])).rejects.toMatchObject({ code: 'invalid_payload' });
  });

  it('keeps the metric points an SDK sends in MTRC frames on /otel, filtered by name and time', async () => {
    const engine = await engineWith();
    const now = Date.now();
    const point = (name: string, value: number) => ({
      name,
      unit: '1',
      sum: { dataPoints: [{ asInt: String(value), timeUnixNano: String(now * 1e6), attributes: [{ key: 'route', value: { stringValue: '/x' } }] }] },
    });
    await sendTelemetry(engine, 'MTRC', {
      resourceMetrics: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'billing' } }] },
          scopeMetrics: [{ metrics: [point('orders', 7), point('refunds', 1)] }],
        },
      ],
    });
    const points = await waitFor(async () => {
      const m = await metrics(engine);
      return m.sdk_metrics.length === 2 ? m.sdk_metrics : undefined;
    });
    expect(points[0]).toMatchObject({ name: 'orders', value: 7, service_name: 'billing', type: 'sum', attributes: { route: '/x' } });
    expect((await metrics(engine, { metric_name: 'refunds' })).sdk_metrics.map((p) => p.value)).toEqual([1]);
    expect((await metrics(engine, { metric_name: 'orders', start_time: now + 60_000 })).sdk_metrics).toEqual([]);
  });

  it('serves Prometheus text on GET /metrics when configured, with counts per function and status', async () => {
    const port = await freePort();
    const engine = await engineWith({ prometheus: { port } });
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('m::ok', () => 1);
      w.registerFunction('m::fail', () => {
        throw new Error('no');
      });
    });
    for (let i = 0; i < 3; i++) await worker.trigger({ function_id: 'm::ok', payload: {} });
    await outcome(worker.trigger({ function_id: 'm::fail', payload: {} }));
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/flint_invocations_total\{[^}]*function_id="m::ok"[^}]*status="ok"[^}]*\} 3/);
    expect(text).toMatch(/flint_invocations_total\{[^}]*function_id="m::fail"[^}]*status="error"[^}]*\} 1/);
    expect(text).toMatch(/flint_invocation_duration_seconds_bucket\{[^}]*function_id="m::ok"/);
    expect(text).toMatch(/flint_workers_active(\{[^}]*\})? 1/);
    expect(text).toMatch(/flint_memory_rss_bytes(\{[^}]*\})? \d+/);
    const missing = await fetch(`http://127.0.0.1:${port}/other`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'route_not_found' });
    const h = (await engine.invoke('engine::health::check', {})) as { components: { metrics: { details: { prometheus: string } } } };
    expect(h.components.metrics.details.prometheus).toBe(`http://127.0.0.1:${port}/metrics`);
  });

  it('health says what each component holds, and disabled for what is off', async () => {
    const engine = await engineWith({ enabled: false, metrics_enabled: false });
    await engine.invoke('engine::log::info', { message: 'hello' });
    const h = (await engine.invoke('engine::health::check', {})) as {
      status: string;
      version: string;
      components: Record<string, { status: string; details: Record<string, unknown> }>;
    };
    expect(h.status).toBe('healthy');
    expect(h.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(h.components.traces?.status).toBe('disabled');
    expect(h.components.metrics?.status).toBe('disabled');
    expect(h.components.logs?.status).toBe('healthy');
    expect(Number(h.components.logs?.details.logs)).toBeGreaterThanOrEqual(1);
    expect(h.components.span_export).toBeUndefined();
  });
});
