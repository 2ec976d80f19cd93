import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { ENGINE_VERSION } from '../../lib/version.js';
import { type ObservabilityConfig, observabilityConfigSchema } from './config.js';
import { InvocationMetrics } from './invocation-metrics.js';
import { registerLogFunctions } from './log-functions.js';
import { engineRecord } from './log-intake.js';
import { type StoredLogRecord, levelRank } from './log-record.js';
import { LogStore } from './log-store.js';
import { LOG_TRIGGER_TYPE, LogTriggers } from './log-triggers.js';
import { ProcessGauges } from './process-gauges.js';
import type { PrometheusMetrics } from './prometheus.js';
import { SdkMetricStore } from './sdk-metrics.js';
import { registerStatusFunctions } from './status-functions.js';
import { TelemetryIntake } from './telemetry-intake.js';
import { registerTraceFunctions } from './trace-functions.js';
import { TracePipeline } from './trace-pipeline.js';

const SWEEP_MS = 60_000;
/** The longest a stopping engine waits for the last exports. */
const STOP_FLUSH_MS = 3000;

/**
 * `flint-observability`: a span for every invocation and trigger firing (OpenTelemetry SDK) kept in
 * memory and/or exported over OTLP, SDKs' spans, logs and metrics, a bounded log store with the `log`
 * trigger type, invocation and process metrics (and a Prometheus endpoint), and the query functions
 * the console uses.
 */
class ObservabilityModule implements EngineModule {
  readonly name = 'flint-observability';
  private sweep: NodeJS.Timeout | undefined;
  private readonly closers: (() => Promise<void> | void)[] = [];
  private logger: ModuleContext['logger'] | undefined;

  constructor(private readonly config: ObservabilityConfig) {}

  async start(ctx: ModuleContext): Promise<void> {
    const c = this.config;
    this.logger = ctx.logger;
    const resource: Record<string, string> = { 'service.name': c.service_name, 'service.version': c.service_version ?? ENGINE_VERSION };
    if (c.service_namespace) resource['service.namespace'] = c.service_namespace;
    const exportOptions = {
      endpoint: c.endpoint,
      maxQueue: c.export_queue_size,
      batchSize: c.export_batch_size,
      flushIntervalMs: c.export_interval_ms,
      timeoutMs: c.export_timeout_ms,
    };

    // ---- logs ----
    const store =
      c.logs_enabled && c.logs_exporter !== 'otlp'
        ? new LogStore({ max_count: c.logs_max_count, max_bytes: c.logs_max_bytes, retention_seconds: c.logs_retention_seconds || undefined })
        : undefined;
    // The exporters are large imports: loaded only when configured.
    const logExport =
      c.logs_enabled && c.logs_exporter !== 'memory' ? new (await import('./log-export.js')).OtlpLogExport(exportOptions, ctx.logger) : undefined;
    if (logExport) this.closers.push(() => logExport.shutdown());
    const triggers = new LogTriggers(ctx);
    const keep = (record: StoredLogRecord) => {
      logExport?.forward(record);
      if (store ? store.add(record) : c.logs_enabled) triggers.dispatch(record);
    };
    registerLogFunctions(ctx, store, resource, keep);
    ctx.registerTriggerType(LOG_TRIGGER_TYPE, triggers);
    if (c.logs_enabled) {
      const least = levelRank(c.level);
      // Workers' lines come through engine::log::* (with their data and trace context), not the tap.
      ctx.tapLogs((record) => {
        if (record.source === 'engine' && levelRank(record.level) >= least) keep(engineRecord(record, c.service_name, resource));
      });
    }

    // ---- traces ----
    const traces = c.enabled ? await TracePipeline.create(c, resource, ENGINE_VERSION, ctx.logger) : undefined;
    if (traces) {
      ctx.traceInvocations(traces.tracer);
      this.closers.push(() => traces.shutdown());
    }
    registerTraceFunctions(ctx, traces?.store, c.enabled ? `exporter: ${c.exporter}` : 'enabled: false');

    // ---- metrics ----
    const gauges = new ProcessGauges();
    this.closers.push(() => gauges.stop());
    const workers = { spawns: 0, deaths: 0 };
    ctx.registry.subscribe((event) => {
      if (event.type === 'worker_connected') workers.spawns++;
      else if (event.type === 'worker_disconnected') workers.deaths++;
    });
    let prometheus: PrometheusMetrics | undefined;
    let prometheusUrl: string | undefined;
    let invocations: InvocationMetrics | undefined;
    if (c.metrics_enabled) {
      if (c.prometheus) {
        const { PrometheusMetrics } = await import('./prometheus.js');
        prometheus = new PrometheusMetrics(resource, {
          inFlight: () => invocations?.inFlight ?? 0,
          activeWorkers: () => ctx.registry.workers().length,
          process: gauges,
          queues: () => queueDepths(ctx),
        });
        const metrics = prometheus;
        this.closers.push(() => metrics.shutdown());
      }
      invocations = new InvocationMetrics(prometheus?.sink);
      ctx.addInvocationHooks(invocations);
    }
    const sdkMetrics = c.metrics_enabled ? new SdkMetricStore(10_000) : undefined;

    // ---- SDK telemetry ----
    const intake = new TelemetryIntake(ctx, { traces, keepLog: c.logs_enabled ? keep : undefined, metrics: sdkMetrics });
    intake.start();

    registerStatusFunctions(ctx, {
      version: ENGINE_VERSION,
      invocations,
      workers,
      process: gauges,
      sdkMetrics,
      spans: traces?.store,
      logs: store,
      spanExport: () => traces?.export?.report(),
      logExport: () => logExport?.health.report(),
      intake: intake.counts,
      intakeRejectedRecently: () => intake.rejectedRecently(),
      logsEnabled: c.logs_enabled,
      tracingEnabled: c.enabled,
      exporter: c.exporter,
      prometheusUrl: () => prometheusUrl,
    });

    if (store?.retention_seconds !== undefined || traces?.store?.retentionSeconds !== undefined) {
      this.sweep = setInterval(() => {
        const now = Date.now();
        store?.sweep(now);
        traces?.store?.sweep(now);
      }, SWEEP_MS);
      this.sweep.unref?.();
    }
    if (prometheus && c.prometheus) {
      prometheusUrl = await prometheus.listen(ctx, c.prometheus.host, c.prometheus.port);
    }
  }

  async stop(): Promise<void> {
    if (this.sweep) clearInterval(this.sweep);
    // Export what is still queued, waiting at most STOP_FLUSH_MS for a slow collector.
    const closing = Promise.allSettled(this.closers.splice(0).map(async (close) => close()));
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      closing.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), Math.min(this.config.export_timeout_ms, STOP_FLUSH_MS));
      }),
    ]);
    clearTimeout(timer);
    if (late) this.logger?.warn('the OTLP collector did not take the last spans and logs in time: what was still queued is dropped');
  }
}

/** Depth and dead letters of each topic and named queue, asked of flint-queue's functions (none without it). */
async function queueDepths(ctx: ModuleContext): Promise<{ name: string; depth: number; in_flight: number; dead: number }[]> {
  if (!ctx.registry.hasFunction('engine::queue::list_topics')) return [];
  const topics = (await ctx.invoke('engine::queue::list_topics', {})) as { name: string }[];
  const stats = await Promise.all(
    topics.map((t) => ctx.invoke('engine::queue::topic_stats', { topic: t.name }).catch(() => undefined) as Promise<Record<string, unknown> | undefined>),
  );
  return topics.flatMap((t, i) => {
    const s = stats[i];
    if (!s) return [];
    const n = (key: string) => (typeof s[key] === 'number' ? (s[key] as number) : 0);
    return [{ name: t.name, depth: n('depth'), in_flight: n('in_flight'), dead: n('dead') }];
  });
}

export const observabilityModule: ModuleDefinition<ObservabilityConfig> = {
  name: 'flint-observability',
  aliases: ['modules::observability::OtelModule', 'iii-observability'],
  configSchema: observabilityConfigSchema,
  create: (config) => new ObservabilityModule(config),
};
