/**
 * The Traces API against a real engine with flint-observability (exporter memory): a chain HTTP → worker
 * → worker, the list with its span counts and services, every filter narrowing it, one trace with its log
 * records, and the answers without the module or without a span store.
 */
import { FlintError, Logger, type Worker } from '@flint/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceDetailResponse, TraceListResponse, TraceSummary } from '../src/api-types.js';
import { type ConsoleEnv, closedPort, startConsoleEnv, uid, waitFor } from './support/console-env.js';

describe('the Traces API with flint-observability', () => {
  let env: ConsoleEnv;
  let httpBase: string;
  const ns = uid('shop').replace('-', '');
  const route = `${ns}/checkout`;
  let front: Worker;
  let chainTrace: TraceSummary;
  let failedTrace: TraceSummary;
  const startedAt = Date.now();

  const list = async (filters: Record<string, unknown> = {}) => {
    const res = await env.api<TraceListResponse>('POST', '/_console/traces', filters);
    expect(res.status).toBe(200);
    return res.body;
  };
  const ids = async (filters: Record<string, unknown>) => (await list({ limit: 1000, ...filters })).traces.map((t) => t.trace_id);

  beforeAll(async () => {
    env = await startConsoleEnv({
      extraModules: [{ name: 'flint-observability', config: { exporter: 'memory', logs_exporter: 'memory', memory_max_spans: 20_000 } }],
    });
    httpBase = env.engine.listeners().find((l) => l.name === 'http')!.url;
    await env.worker(
      (w) => {
        w.registerFunction(`${ns}::price`, async (input: { sku: string }) => {
          if (input.sku === 'broken') throw new FlintError('out_of_stock', `no stock for ${input.sku}`);
          return { sku: input.sku, price: 12 };
        });
      },
      { spans: true, serviceName: `${ns}-back` },
    );
    front = await env.worker(
      (w) => {
        const log = new Logger(w, `${ns}-front`);
        w.registerFunction(`${ns}::checkout`, async (req: { query_params?: Record<string, string> }) => {
          const sku = req.query_params?.sku ?? 'tea';
          log.info('pricing the basket', { sku });
          const price = await w.trigger({ function_id: `${ns}::price`, payload: { sku } });
          return { status_code: 200, body: price };
        });
        w.registerTrigger({ type: 'http', function_id: `${ns}::checkout`, config: { api_path: `/${route}`, http_method: 'GET' } });
      },
      { spans: true, serviceName: `${ns}-front` },
    );
    await waitFor(async () => (await fetch(`${httpBase}/${route}?sku=tea`)).status === 200, 5000, 'the HTTP route');
    expect((await fetch(`${httpBase}/${route}?sku=broken`)).status).toBe(500);
    // Worker spans come in batches: wait until the whole chain is counted.
    chainTrace = await waitFor(
      async () => (await list({ name: `GET /${route}`, status: 'ok', limit: 1000 })).traces.find((t) => t.span_count === 5),
      8000,
      'the chain trace with its 5 spans',
    );
    failedTrace = await waitFor(async () => (await list({ name: route, status: 'error', limit: 1000 })).traces[0], 8000, 'the failed trace');
  });
  afterAll(async () => {
    await env?.close();
  });

  it('lists the chain HTTP → worker → worker with its root, services, duration, status, span count and start', () => {
    expect(front).toBeDefined();
    expect(chainTrace.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(chainTrace.root_name).toBe(`GET /${route}`);
    expect(chainTrace.service_name).toBe('flint');
    expect(chainTrace.services[0]).toBe('flint');
    expect(new Set(chainTrace.services)).toEqual(new Set(['flint', `${ns}-front`, `${ns}-back`]));
    expect(chainTrace.status).toBe('ok');
    expect(chainTrace.span_count).toBe(5);
    expect(chainTrace.error_count).toBe(0);
    expect(chainTrace.duration_ms).toBeGreaterThan(0);
    expect(chainTrace.start_time_ms).toBeGreaterThanOrEqual(startedAt - 1000);
    expect(chainTrace.start_time_ms).toBeLessThanOrEqual(Date.now());
    expect(failedTrace.status).toBe('error');
    expect(failedTrace.error_count).toBeGreaterThanOrEqual(1);
  });

  it('answers newest first by default, with the total before paging', async () => {
    const page = await list({ limit: 1 });
    expect(page.available).toBe(true);
    expect(page.limit).toBe(1);
    expect(page.traces).toHaveLength(1);
    expect(page.total).toBeGreaterThanOrEqual(2);
    const all = await list({ limit: 1000 });
    const starts = all.traces.map((t) => t.start_time_ms);
    expect(starts).toEqual([...starts].sort((a, b) => b - a));
    const oldest = await list({ limit: 1000, sort_order: 'asc' });
    expect(oldest.traces.map((t) => t.trace_id)).toEqual([...all.traces].reverse().map((t) => t.trace_id));
  });

  it('narrows the list with each filter, combined with AND', async () => {
    const id = chainTrace.trace_id;
    const has = async (filters: Record<string, unknown>) => (await ids(filters)).includes(id);
    expect(await has({ trace_id: id })).toBe(true);
    expect(await has({ trace_id: id.toUpperCase() })).toBe(true);
    expect(await ids({ trace_id: failedTrace.trace_id })).toEqual([failedTrace.trace_id]);
    // Service (root span), any case.
    expect(await has({ service_name: 'FLI' })).toBe(true);
    expect(await has({ service_name: `${ns}-front` })).toBe(false);
    // Span name: the root's by default, any span's with search_all_spans.
    expect(await has({ name: 'checkout' })).toBe(true);
    expect(await has({ name: `handle ${ns}::price` })).toBe(false);
    expect(await has({ name: `handle ${ns}::price`, search_all_spans: true })).toBe(true);
    // Status.
    expect(await has({ status: 'ok' })).toBe(true);
    expect(await has({ status: 'error' })).toBe(false);
    expect(await has({ status: 'unset' })).toBe(false);
    expect(await ids({ status: 'error', name: route })).toContain(failedTrace.trace_id);
    // Duration.
    expect(await has({ min_duration_ms: 0, max_duration_ms: 60_000 })).toBe(true);
    expect(await has({ min_duration_ms: 60_000 })).toBe(false);
    expect(await has({ max_duration_ms: chainTrace.duration_ms / 10 })).toBe(false);
    // Time window (epoch ms; the root overlaps it).
    expect(await has({ start_time: chainTrace.start_time_ms - 60_000 })).toBe(true);
    expect(await has({ start_time: Date.now() + 60_000 })).toBe(false);
    expect(await has({ end_time: chainTrace.start_time_ms - 60_000 })).toBe(false);
    // Attributes, all required.
    expect(await has({ attributes: [['http.route', `/${route}`]] })).toBe(true);
    expect(
      await has({
        attributes: [
          ['http.route', `/${route}`],
          ['http.response.status_code', '200'],
        ],
      }),
    ).toBe(true);
    expect(await has({ attributes: [['http.response.status_code', '500']] })).toBe(false);
    expect(await ids({ attributes: [['http.response.status_code', '500']], name: route })).toContain(failedTrace.trace_id);
    // Everything at once.
    expect(
      await has({
        trace_id: id,
        service_name: 'flint',
        name: route,
        status: 'ok',
        min_duration_ms: 0,
        start_time: startedAt - 60_000,
        attributes: [['http.route', `/${route}`]],
      }),
    ).toBe(true);
    expect(await has({ trace_id: id, service_name: 'flint', status: 'error' })).toBe(false);
  });

  it('hides the console’s own listener traces unless include_internal', async () => {
    const listener = (t: TraceSummary) => t.root_name.startsWith('engine::') && t.root_name.includes('-available');
    const withInternal = await list({ include_internal: true, limit: 1000 });
    expect(withInternal.traces.some(listener)).toBe(true);
    const plain = await list({ limit: 1000 });
    expect(plain.traces.some(listener)).toBe(false);
    expect(plain.total).toBe(plain.traces.length);
    expect(withInternal.total).toBeGreaterThan(plain.total);
    // Paging counts the user's traces only.
    const first = await list({ limit: 1 });
    expect(first.total).toBe(plain.total);
    expect(first.traces.map((t) => t.trace_id)).toEqual([plain.traces[0]!.trace_id]);
  });

  it('refuses filters of the wrong type with 400', async () => {
    for (const body of [
      { status: 'pending' },
      { min_duration_ms: -1 },
      { min_duration_ms: 'x' },
      { min_duration_ms: 10, max_duration_ms: 5 },
      { start_time: 10, end_time: 5 },
      { attributes: [['k']] },
      { attributes: 'k=v' },
      { limit: 5000 },
      { sort_by: 'size' },
      { search_all_spans: 'yes' },
      { name: 3 },
    ]) {
      const res = await env.api('POST', '/_console/traces', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
  });

  it('answers one trace as flat spans, parents first, with its log records', async () => {
    const res = await env.api<TraceDetailResponse>('GET', `/_console/traces/${chainTrace.trace_id}`);
    expect(res.status).toBe(200);
    const d = res.body;
    expect(d.available).toBe(true);
    expect(d.trace_id).toBe(chainTrace.trace_id);
    expect(d.spans).toHaveLength(5);
    expect(d.spans.map((s) => s.name)).toEqual([`GET /${route}`, `call ${ns}::checkout`, `handle ${ns}::checkout`, `call ${ns}::price`, `handle ${ns}::price`]);
    const seen = new Set<string>();
    for (const s of d.spans) {
      expect(s).not.toHaveProperty('children');
      if (s.parent_span_id !== null && d.spans.some((p) => p.span_id === s.parent_span_id)) expect(seen.has(s.parent_span_id)).toBe(true);
      seen.add(s.span_id);
    }
    expect(d.logs_available).toBe(true);
    const line = await waitFor(
      async () => (await env.api<TraceDetailResponse>('GET', `/_console/traces/${chainTrace.trace_id}`)).body.logs.find((l) => l.body === 'pricing the basket'),
      5000,
      'the handler’s log record',
    );
    expect(line.attributes).toMatchObject({ sku: 'tea' });
    // The record carries the handler's own span (the worker records one with spans: true).
    expect(line.span_id).toBe(d.spans[2]!.span_id);
  });

  it('shows a failed call’s error on its spans', async () => {
    const { body } = await env.api<TraceDetailResponse>('GET', `/_console/traces/${failedTrace.trace_id}`);
    const call = body.spans.find((s) => s.name === `call ${ns}::price`)!;
    expect(call.status).toBe('error');
    expect(call.status_description).toContain('out_of_stock');
    expect(call.events.find((e) => e.name === 'exception')?.attributes).toMatchObject({ 'exception.type': 'out_of_stock' });
  });

  it('answers 404 trace_not_found for a trace not kept and 400 for an id that is not hex', async () => {
    const missing = await env.api('GET', `/_console/traces/${'0'.repeat(31)}1`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('trace_not_found');
    const bad = await env.api('GET', '/_console/traces/not-a-trace');
    expect(bad.status).toBe(400);
  });

  it('counts a 10,000-span trace once and reuses the count while polling', async () => {
    await env.worker(
      (w) => {
        w.registerFunction(`${ns}::leaf`, () => 1);
        w.registerFunction(`${ns}::fan`, async (input: { n: number }) => {
          for (let i = 0; i < input.n; i += 500) {
            await Promise.all(Array.from({ length: Math.min(500, input.n - i) }, () => w.trigger({ function_id: `${ns}::leaf`, payload: {} })));
          }
          return input.n;
        });
      },
      { spans: false },
    );
    await front.trigger({ function_id: `${ns}::fan`, payload: { n: 9_999 }, timeoutMs: 60_000 });
    const big = await waitFor(
      async () => (await list({ name: `call ${ns}::fan`, limit: 5 })).traces.find((t) => t.span_count === 10_000),
      10_000,
      'the big trace',
    );
    const started = performance.now();
    await list({ name: `call ${ns}::fan`, limit: 5 });
    const again = performance.now() - started;
    expect(big.span_count).toBe(10_000);
    expect(again).toBeLessThan(2000);
    const detail = await env.api<TraceDetailResponse>('GET', `/_console/traces/${big.trace_id}`);
    expect(detail.body.spans).toHaveLength(10_000);
  });
});

describe('the Traces API without a span store', () => {
  it('says flint-observability is not loaded', async () => {
    const env = await startConsoleEnv();
    try {
      const res = await env.api<TraceListResponse>('POST', '/_console/traces', {});
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ available: false, reason: 'module_not_loaded', traces: [], total: 0 });
      expect(res.body.detail).toMatch(/exporter memory or both/);
      const one = await env.api<TraceDetailResponse>('GET', `/_console/traces/${'a'.repeat(32)}`);
      expect(one.body).toMatchObject({ available: false, reason: 'module_not_loaded', spans: [] });
    } finally {
      await env.close();
    }
  });

  it('says the exporter keeps no spans in memory with exporter otlp', async () => {
    const env = await startConsoleEnv({
      extraModules: [{ name: 'flint-observability', config: { exporter: 'otlp', endpoint: `http://127.0.0.1:${await closedPort()}` } }],
    });
    try {
      const res = await env.api<TraceListResponse>('POST', '/_console/traces', {});
      expect(res.body).toMatchObject({ available: false, reason: 'memory_exporter_not_enabled', traces: [] });
      expect(res.body.detail).toMatch(/exporter memory or both/);
      expect(res.body.detail).toMatch(/otlp/);
    } finally {
      await env.close();
    }
  });
});
