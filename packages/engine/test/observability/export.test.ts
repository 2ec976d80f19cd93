/**
 * OTLP export against a real receiver (protobuf decoded with the protocol's generated types): the
 * engine's spans and a @flint/sdk worker's spans, and log records, arrive with their service and trace
 * ids; a receiver that is down is counted and logged, never felt by calls; one that holds every request
 * open does not hold calls either, and a full export queue drops (and counts) instead of growing.
 */
import type { Engine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { LEVEL, captureLog } from '../support/log-capture.js';
import { type OtlpReceiver, startOtlpReceiver } from '../support/observability/otlp-receiver.js';
import { freePort, waitFor } from '../support/util.js';

afterEach(cleanup);

interface Health {
  status: string;
  components: Record<string, { status: string; details: Record<string, number | string | null> }>;
}

async function receiver(port = 0): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver(port);
  track(() => r.close());
  return r;
}

const obs = (config: Record<string, unknown>, logger?: ReturnType<typeof captureLog>['logger']): Promise<Engine> =>
  startTestEngine({ modules: [{ name: 'flint-observability', config: { enabled: true, export_interval_ms: 50, ...config } }] }, logger ? { logger } : {});

const health = async (engine: Engine) => (await engine.invoke('engine::health::check', {})) as Health;

describe('flint-observability OTLP export', () => {
  it("sends the engine's spans, a worker's spans and log records to the collector; both keeps them in memory too", async () => {
    const collector = await receiver();
    const engine = await obs({ exporter: 'both', logs_exporter: 'both', endpoint: collector.url });
    const worker = await startWorker(
      'flint',
      engine,
      (w) => {
        w.registerFunction('x::work', async () => {
          await w.trigger({ function_id: 'engine::log::warn', payload: { message: 'disk almost full', data: { disk: 'sda' } } });
          return 'done';
        });
      },
      { spans: true },
    );
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    expect(await engine.invoke('x::work', {}, { traceparent: `00-${traceId}-b7ad6b7169203331-01` })).toBe('done');

    await waitFor(
      () => collector.spans.some((s) => s.name === 'handle x::work') && collector.logs.some((l) => l.body === 'disk almost full'),
      5000,
      'the export',
    );
    const call = collector.spans.find((s) => s.name === 'call x::work');
    expect(call).toMatchObject({ service: 'flint', traceId, parentSpanId: 'b7ad6b7169203331' });
    expect(call?.attributes).toMatchObject({ 'faas.invoked_name': 'x::work', function_id: 'x::work' });
    const handled = collector.spans.find((s) => s.name === 'handle x::work');
    expect(handled).toMatchObject({ service: worker.name, traceId, parentSpanId: call?.spanId });
    const log = collector.logs.find((l) => l.body === 'disk almost full');
    expect(log).toMatchObject({ severityText: 'WARN', traceId });
    expect(log?.attributes).toMatchObject({ disk: 'sda' });

    // `both`: the memory store has them as well.
    const tree = (await engine.invoke('engine::traces::tree', { trace_id: traceId })) as { roots: { name: string }[] };
    expect(tree.roots.map((r) => r.name)).toEqual(['call x::work']);
    const h = await waitFor(async () => {
      const now = await health(engine);
      return Number(now.components.span_export?.details.exported) >= 2 ? now : undefined;
    });
    expect(h.components.span_export).toMatchObject({ status: 'healthy', details: { state: 'ok', failed: 0 } });
  });

  it('a collector that is down: calls go on, the failure is counted and logged once, and the export recovers when it is back', async () => {
    const port = await freePort();
    const log = captureLog('info');
    const engine = await obs({ exporter: 'otlp', endpoint: `http://127.0.0.1:${port}`, export_timeout_ms: 1000 }, log.logger);
    await startWorker('flint', engine, (w) => w.registerFunction('x::echo', (d: unknown) => d));
    for (let i = 0; i < 50; i++) expect(await engine.invoke('x::echo', { i })).toEqual({ i });

    const failing = await waitFor(
      async () => {
        const h = await health(engine);
        return h.components.span_export?.details.state === 'failing' ? h : undefined;
      },
      8000,
      'the export to fail',
    );
    expect(failing.status).toBe('unhealthy');
    expect(Number(failing.components.span_export?.details.failed)).toBeGreaterThan(0);
    const warnings = log.records.filter((r) => r.level === LEVEL.warn && String(r.msg).includes('OTLP export of spans'));
    expect(warnings.length).toBe(1);
    expect(warnings[0]?.msg).toContain(`127.0.0.1:${port}/v1/traces`);
    // With exporter: otlp nothing is kept in memory, and the trace functions say so.
    await expect(engine.invoke('engine::traces::list', {})).rejects.toMatchObject({ code: 'memory_exporter_not_enabled' });

    // The collector comes up: the next batches go through, and the log says so once.
    const collector = await receiver(port);
    await engine.invoke('x::echo', { after: true });
    await waitFor(async () => (await health(engine)).components.span_export?.details.state === 'ok', 8000, 'the export to recover');
    expect(collector.spans.some((s) => s.name === 'call x::echo')).toBe(true);
    expect(log.records.filter((r) => r.level === LEVEL.info && String(r.msg).includes('works again')).length).toBe(1);
  });

  it('a collector that holds every request open: calls are not held, the queue stays bounded and drops are counted', async () => {
    const collector = await receiver();
    collector.mode = 'hold';
    const engine = await obs({ exporter: 'otlp', endpoint: collector.url, export_queue_size: 100, export_batch_size: 50, export_timeout_ms: 30_000 });
    const worker = await startWorker('flint', engine, (w) => w.registerFunction('x::echo', (d: unknown) => d), {});
    const calls = await Promise.all(Array.from({ length: 1000 }, (_, i) => worker.trigger({ function_id: 'x::echo', payload: i })));
    expect(calls.length).toBe(1000);
    // Every call answered while the collector has not answered a single export.
    expect(collector.answered).toBe(0);
    const details = (await health(engine)).components.span_export?.details ?? {};
    expect(Number(details.queued)).toBeLessThanOrEqual(100);
    expect(Number(details.dropped)).toBeGreaterThan(0);
    expect((await health(engine)).components.span_export?.status).toBe('degraded');
  });

  it("exports the engine's spans whole: kind, times, parent, status and a failed call's exception event", async () => {
    const collector = await receiver();
    const engine = await obs({ exporter: 'otlp', endpoint: collector.url });
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('x::refuse', () => {
        throw Object.assign(new Error('no stock left'), { code: 'out_of_stock' });
      });
      w.registerFunction('x::outer', async () => {
        await w.trigger({ function_id: 'x::refuse', payload: {} }).catch(() => undefined);
        return 'ok';
      });
    });
    const before = Date.now() * 1e6;
    expect(await worker.trigger({ function_id: 'x::outer', payload: {} })).toBe('ok');
    const after = Date.now() * 1e6;
    await waitFor(
      () => collector.spans.some((s) => s.name === 'call x::refuse') && collector.spans.some((s) => s.name === 'call x::outer'),
      5000,
      'the export',
    );
    const outer = collector.spans.find((s) => s.name === 'call x::outer');
    const refused = collector.spans.find((s) => s.name === 'call x::refuse');
    expect(outer).toMatchObject({ service: 'flint', kind: 3, status: { code: 1 }, events: [] });
    expect(refused).toMatchObject({
      traceId: outer?.traceId,
      parentSpanId: outer?.spanId,
      kind: 3,
      status: { code: 2, message: 'out_of_stock: no stock left' },
      attributes: { 'error.type': 'out_of_stock', function_id: 'x::refuse' },
      events: [{ name: 'exception', attributes: { 'exception.type': 'out_of_stock', 'exception.message': 'no stock left' } }],
    });
    // Wall-clock times; the nested call within its caller. Span times follow the monotonic clock anchored to
    // the wall clock and re-anchored past 20 ms of drift, so they may stand up to 20 ms (plus 1 ms for the
    // millisecond clock read here) off `Date.now()`: a loaded CI run saw 3 ms.
    const slack = 21e6;
    for (const s of [outer, refused]) {
      expect(s?.startTimeUnixNano).toBeGreaterThanOrEqual(before - slack);
      expect(s?.endTimeUnixNano).toBeLessThanOrEqual(after + slack);
      expect(s?.endTimeUnixNano).toBeGreaterThanOrEqual(s?.startTimeUnixNano ?? Number.NaN);
    }
    expect(refused?.startTimeUnixNano).toBeGreaterThanOrEqual(outer?.startTimeUnixNano ?? Number.NaN);
    expect(refused?.endTimeUnixNano).toBeLessThanOrEqual(outer?.endTimeUnixNano ?? Number.NaN);
  });

  it('refuses an endpoint that is not a URL at start-up', async () => {
    await expect(obs({ exporter: 'otlp', endpoint: 'not a url' })).rejects.toThrow(/endpoint/);
  });
});
