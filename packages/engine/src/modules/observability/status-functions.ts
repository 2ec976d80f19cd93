import { FlintError } from '@flint/protocol';
import type { ModuleContext } from '../../core/module-api.js';
import type { ExportReport } from './export-health.js';
import type { InvocationMetrics } from './invocation-metrics.js';
import type { LogStore } from './log-store.js';
import type { ProcessGauges } from './process-gauges.js';
import type { SdkMetricStore } from './sdk-metrics.js';
import type { SpanStore } from './span-store.js';
import type { IntakeCounts } from './telemetry-intake.js';

/** What the status functions read. */
export interface StatusSources {
  version: string;
  invocations: InvocationMetrics | undefined;
  workers: { spawns: number; deaths: number };
  process: ProcessGauges;
  sdkMetrics: SdkMetricStore | undefined;
  spans: SpanStore | undefined;
  logs: LogStore | undefined;
  spanExport: () => ExportReport | undefined;
  logExport: () => ExportReport | undefined;
  intake: IntakeCounts;
  /** A frame was rejected in the last minute. */
  intakeRejectedRecently: () => boolean;
  logsEnabled: boolean;
  tracingEnabled: boolean;
  exporter: string;
  prometheusUrl: () => string | undefined;
}

/** `engine::metrics::list` and `engine::health::check`. */
export function registerStatusFunctions(ctx: ModuleContext, s: StatusSources): void {
  ctx.registerFunction(
    {
      id: 'engine::metrics::list',
      description:
        'Invocation counts (total, by function, by trigger type), workers, in-flight calls, durations, the engine process, and SDK metric points (metric_name, start_time, end_time)',
      request_format: { type: 'object' },
    },
    (input) => {
      const q = queryOf(input);
      const m = s.invocations;
      const byFunction: Record<string, unknown> = {};
      if (m) for (const [id, c] of m.byFunction) byFunction[id] = { ...c };
      const byTrigger: Record<string, unknown> = {};
      if (m) for (const [type, c] of m.firings) byTrigger[type] = { ...c };
      const answer: Record<string, unknown> = {
        engine_metrics: {
          invocations: {
            ...(m?.all ?? { total: 0, success: 0, error: 0 }),
            deferred: 0,
            in_flight: m?.inFlight ?? 0,
            by_function: byFunction,
            by_trigger_type: byTrigger,
          },
          workers: { ...s.workers, active: ctx.registry.workers().length },
          performance: m?.performance(),
          process: s.process.read(),
        },
        sdk_metrics: s.sdkMetrics?.query(q.metric_name, q.start_time, q.end_time) ?? [],
        timestamp: Date.now(),
      };
      if (q.metric_name !== undefined || q.start_time !== undefined || q.end_time !== undefined) answer.query = q;
      return answer;
    },
  );

  ctx.registerFunction(
    {
      id: 'engine::health::check',
      description: 'flint-observability component by component: tracing, span store, log store, OTLP exports, SDK telemetry intake, metrics',
      request_format: { type: 'object' },
    },
    () => {
      const spanExport = s.spanExport();
      const logExport = s.logExport();
      const components: Record<string, { status: string; details: Record<string, unknown> }> = {
        traces: s.tracingEnabled
          ? { status: 'healthy', details: { exporter: s.exporter, store: s.spans?.stats() ?? null } }
          : { status: 'disabled', details: { reason: 'enabled: false' } },
        logs: s.logs
          ? { status: 'healthy', details: s.logs.stats() as unknown as Record<string, unknown> }
          : s.logsEnabled
            ? { status: 'healthy', details: { store: null, reason: 'logs_exporter: otlp (records are exported, not kept)' } }
            : { status: 'disabled', details: { reason: 'logs_enabled: false' } },
        metrics: s.invocations
          ? { status: 'healthy', details: { prometheus: s.prometheusUrl() ?? null, sdk_points: s.sdkMetrics?.size ?? 0 } }
          : { status: 'disabled', details: { reason: 'metrics_enabled: false' } },
        telemetry_intake: { status: s.intakeRejectedRecently() ? 'degraded' : 'healthy', details: { ...s.intake } },
      };
      if (spanExport) components.span_export = { status: exportStatus(spanExport), details: { ...spanExport } };
      if (logExport) components.log_export = { status: exportStatus(logExport), details: { ...logExport } };
      const statuses = Object.values(components).map((c) => c.status);
      const status = statuses.includes('unhealthy') ? 'unhealthy' : statuses.includes('degraded') ? 'degraded' : 'healthy';
      return { status, components, timestamp: Date.now(), version: s.version };
    },
  );
}

/** A failing export is unhealthy; one that works but dropped items (a full queue) in the last minute is degraded. */
function exportStatus(r: ExportReport): string {
  if (r.state === 'failing') return 'unhealthy';
  return r.dropped_last_minute > 0 ? 'degraded' : 'healthy';
}

function queryOf(input: unknown): { metric_name?: string; start_time?: number; end_time?: number } {
  if (input === null || input === undefined) return {};
  if (typeof input !== 'object' || Array.isArray(input)) throw new FlintError('invalid_payload', 'engine::metrics::list takes an object');
  const o = input as Record<string, unknown>;
  const q: { metric_name?: string; start_time?: number; end_time?: number } = {};
  if (o.metric_name !== undefined) {
    if (typeof o.metric_name !== 'string') throw new FlintError('invalid_payload', 'metric_name must be a string');
    q.metric_name = o.metric_name;
  }
  for (const key of ['start_time', 'end_time'] as const) {
    const v = o[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new FlintError('invalid_payload', `${key} must be a time in epoch milliseconds`);
    q[key] = v;
  }
  return q;
}
