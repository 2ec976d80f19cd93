import { createServer } from 'node:http';
import type { Attributes } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { ModuleContext } from '../../core/module-api.js';
import type { InvocationSink } from './invocation-metrics.js';
import type { ProcessGauges } from './process-gauges.js';

/** What the gauges read at each scrape. */
export interface GaugeSources {
  inFlight(): number;
  activeWorkers(): number;
  process: ProcessGauges;
  /** Depth, in flight and dead letters of each topic and named queue (empty without flint-queue). */
  queues(): Promise<{ name: string; depth: number; in_flight: number; dead: number }[]>;
}

/**
 * The Prometheus text endpoint (`GET /metrics`): the OpenTelemetry SDK's meter provider with its
 * Prometheus exporter as the reader, served by a listener of the module's own (so it is bound, capped and
 * closed like every other). Invocation counts and durations are recorded as they end; gauges are read
 * at scrape time.
 */
export class PrometheusMetrics {
  readonly sink: InvocationSink;
  private readonly provider: MeterProvider;
  private readonly exporter: PrometheusExporter;

  constructor(resource: Record<string, string>, sources: GaugeSources) {
    this.exporter = new PrometheusExporter({ preventServerStart: true });
    this.provider = new MeterProvider({ resource: resourceFromAttributes(resource), readers: [this.exporter] });
    const meter = this.provider.getMeter('flint');
    const calls = meter.createCounter('flint.invocations', { description: 'Invocations that ended, by function, trigger type and status' });
    const durations = meter.createHistogram('flint.invocation.duration.seconds', {
      description: 'Invocation duration, by function and trigger type',
      unit: 's',
      advice: { explicitBucketBoundaries: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] },
    });
    // One attribute object per (function, trigger type, outcome), reused for every call.
    const attributes = new Map<string, { ok: Attributes; error: Attributes; any: Attributes }>();
    this.sink = (functionId, triggerType, durationMs, error) => {
      const key = `${functionId}\u0000${triggerType}`;
      let a = attributes.get(key);
      if (!a) {
        const base = { function_id: functionId, trigger_type: triggerType };
        a = { ok: { ...base, status: 'ok' }, error: { ...base, status: 'error' }, any: base };
        attributes.set(key, a);
      }
      calls.add(1, error ? a.error : a.ok);
      durations.record(durationMs / 1000, a.any);
    };
    meter.createObservableGauge('flint.invocations.in_flight', { description: 'Invocations under way' }).addCallback((r) => r.observe(sources.inFlight()));
    meter.createObservableGauge('flint.workers.active', { description: 'Workers connected' }).addCallback((r) => r.observe(sources.activeWorkers()));
    const lag = meter.createObservableGauge('flint.event_loop.lag.seconds', { description: 'Event-loop delay p99 since the last scrape', unit: 's' });
    const heap = meter.createObservableGauge('flint.memory.heap_used.bytes', { description: 'V8 heap in use', unit: 'By' });
    const rss = meter.createObservableGauge('flint.memory.rss.bytes', { description: 'Resident set size', unit: 'By' });
    meter.addBatchObservableCallback(
      (r) => {
        const p = sources.process.read();
        r.observe(lag, p.event_loop_lag_p99_ms / 1000);
        r.observe(heap, p.heap_used_bytes);
        r.observe(rss, p.rss_bytes);
      },
      [lag, heap, rss],
    );
    const depth = meter.createObservableGauge('flint.queue.depth', { description: 'Messages waiting or in flight, by queue' });
    const dead = meter.createObservableGauge('flint.queue.dead_letters', { description: 'Dead letters, by queue' });
    meter.addBatchObservableCallback(
      async (r) => {
        for (const q of await sources.queues()) {
          r.observe(depth, q.depth, { queue: q.name });
          r.observe(dead, q.dead, { queue: q.name });
        }
      },
      [depth, dead],
    );
  }

  /** Serves `GET /metrics` on `host:port` through the module's context; resolves with the endpoint's URL. */
  async listen(ctx: ModuleContext, host: string, port: number): Promise<string> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && path === '/metrics') return this.exporter.getMetricsRequestHandler(req, res);
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'not found: the metrics are at GET /metrics', code: 'route_not_found' }));
    });
    const bound = await ctx.listen({ name: 'prometheus', server, host, port, portKey: 'prometheus.port' });
    return `${bound.url}/metrics`;
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}
