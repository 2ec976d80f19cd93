import { z } from 'zod';
import { host, port, positiveInt } from '../../lib/config-fields.js';

const env = (name: string): string | undefined => {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
};
const envNumber = (name: string, fallback: number): number => {
  const value = Number(env(name));
  return env(name) !== undefined && Number.isFinite(value) ? value : fallback;
};
const exporterKind = z.enum(['memory', 'otlp', 'both']);

/**
 * `flint-observability` config (strict). Each `OTEL_*`-style environment fallback applies only when the
 * key is absent, and is read when the config is loaded.
 */
export const observabilityConfigSchema = z.strictObject({
  /** Trace invocations and trigger firings (`OTEL_ENABLED`). Off: no spans, trace functions answer `memory_exporter_not_enabled`. */
  enabled: z.boolean().default(() => !/^(false|0)$/i.test(env('OTEL_ENABLED') ?? 'true')),
  /** `service.name` of the engine's spans and records (`OTEL_SERVICE_NAME`). */
  service_name: z
    .string()
    .min(1)
    .default(() => env('OTEL_SERVICE_NAME') ?? 'flint'),
  /** `service.version` (`SERVICE_VERSION`); the engine's version when absent. */
  service_version: z
    .string()
    .min(1)
    .optional()
    .transform((v) => v ?? env('SERVICE_VERSION')),
  /** `service.namespace` (`SERVICE_NAMESPACE`). */
  service_namespace: z
    .string()
    .min(1)
    .optional()
    .transform((v) => v ?? env('SERVICE_NAMESPACE')),
  /** Where spans go: the in-memory store (`engine::traces::*`, the console), an OTLP collector, or both (`OTEL_EXPORTER_TYPE`). */
  exporter: exporterKind.default(() => exporterKind.catch('memory').parse(env('OTEL_EXPORTER_TYPE'))),
  /** The OTLP/HTTP collector's base URL; `/v1/traces` and `/v1/logs` are added (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  endpoint: z.url().default(() => env('OTEL_EXPORTER_OTLP_ENDPOINT') ?? 'http://127.0.0.1:4318'),
  /** Share of new traces recorded, 0…1 (`OTEL_TRACES_SAMPLER_ARG`). */
  sampling_ratio: z
    .number()
    .min(0)
    .max(1)
    .default(() => Math.min(1, Math.max(0, envNumber('OTEL_TRACES_SAMPLER_ARG', 1)))),
  /** A call that carries a trace context follows its caller's sampling decision (W3C `sampled` flag). */
  parent_based: z.boolean().default(true),
  /** Spans kept in memory at most (the oldest go first). */
  memory_max_spans: positiveInt(10_000),
  /** Estimated bytes of spans kept in memory at most. */
  memory_max_bytes: positiveInt(64 * 1024 * 1024),
  /** Spans older than this are dropped by a sweep every minute; 0 keeps them until a cap pushes them out. */
  traces_retention_seconds: z.number().int().min(0).default(3600),
  /** OTLP export: items held for export at most (more are dropped and counted), per batch, and the longest wait before a batch goes. */
  export_queue_size: positiveInt(2048),
  export_batch_size: positiveInt(512),
  export_interval_ms: positiveInt(5000),
  /** One export request's time-out (the exporter retries a failed request within it). */
  export_timeout_ms: positiveInt(10_000),
  /** Keep logs (the engine's own, `engine::log::*` calls, SDK log frames) for `engine::logs::list` and `log` triggers. */
  logs_enabled: z.boolean().default(true),
  /** Where log records go (`OTEL_LOGS_EXPORTER`). */
  logs_exporter: exporterKind.default(() => exporterKind.catch('memory').parse(env('OTEL_LOGS_EXPORTER'))),
  /** Records kept at most (the oldest go first). */
  logs_max_count: positiveInt(10_000),
  /** Estimated bytes kept at most (the oldest go first). */
  logs_max_bytes: positiveInt(32 * 1024 * 1024),
  /** Records older than this are dropped by a sweep every minute; 0 keeps them until a cap pushes them out. */
  logs_retention_seconds: z.number().int().min(0).default(3600),
  /** The least level of the engine's own records that are kept (workers' records are all kept). */
  level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
  /** Invocation, worker and process metrics for `engine::metrics::list` (`OTEL_METRICS_ENABLED`). */
  metrics_enabled: z.boolean().default(() => !/^(false|0)$/i.test(env('OTEL_METRICS_ENABLED') ?? 'true')),
  /** A Prometheus text endpoint (`GET /metrics`); off unless set. */
  prometheus: z
    .strictObject({
      host: host(),
      port: port(9464),
    })
    .optional(),
});

export type ObservabilityConfig = z.output<typeof observabilityConfigSchema>;
