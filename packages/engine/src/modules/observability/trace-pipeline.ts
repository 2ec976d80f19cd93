import { ROOT_CONTEXT } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../../core/logger.js';
import type { ObservabilityConfig } from './config.js';
import type { EngineSpan, SpanOrigin } from './engine-spans.js';
import { EngineTracer } from './engine-tracer.js';
import type { ExportHealth } from './export-health.js';
import { PooledIdGenerator } from './id-generator.js';
import { forEachSdkSpan, readableOfSdk, sdkSpanSize } from './sdk-spans.js';
import type { OtlpSpanProcessor } from './span-export.js';
import { SpanStore } from './span-store.js';

/** The engine's trace pipeline: its tracer, and where its spans (and SDKs' spans) go. */
export class TracePipeline {
  readonly tracer: EngineTracer;
  /** The in-memory span store (`exporter: memory | both`). */
  readonly store: SpanStore | undefined;
  /** The OTLP export's counters (`exporter: otlp | both`). */
  readonly export: ExportHealth | undefined;
  private readonly otlp: OtlpSpanProcessor | undefined;

  /** A pipeline for `config`; the OTLP exporter is loaded only when spans are exported. */
  static async create(config: ObservabilityConfig, resource: Record<string, string>, scopeVersion: string, logger: Logger): Promise<TracePipeline> {
    if (config.exporter === 'memory') return new TracePipeline(config, resource, scopeVersion, undefined);
    const { OtlpSpanProcessor } = await import('./span-export.js');
    const otlp = new OtlpSpanProcessor(
      {
        endpoint: config.endpoint,
        maxQueue: config.export_queue_size,
        batchSize: config.export_batch_size,
        flushIntervalMs: config.export_interval_ms,
        timeoutMs: config.export_timeout_ms,
      },
      logger,
    );
    return new TracePipeline(config, resource, scopeVersion, otlp);
  }

  private constructor(config: ObservabilityConfig, resource: Record<string, string>, scopeVersion: string, otlp: OtlpSpanProcessor | undefined) {
    if (config.exporter !== 'otlp') {
      this.store = new SpanStore({
        max_spans: config.memory_max_spans,
        max_bytes: config.memory_max_bytes,
        retention_seconds: config.traces_retention_seconds || undefined,
        recycle: (span) => this.tracer.recycle(span),
      });
    }
    if (otlp) {
      this.otlp = otlp;
      this.export = otlp.health;
    }
    const origin: SpanOrigin = {
      resource: resourceFromAttributes(resource),
      serviceName: resource['service.name'] ?? 'unknown',
      scope: { name: 'flint', version: scopeVersion },
    };
    const store = this.store;
    const ended = (span: EngineSpan): void => {
      store?.addLazy(span, span.size());
      otlp?.onEnd(span.readable());
    };
    this.tracer = new EngineTracer({ ids: new PooledIdGenerator(), sample: samplerOf(config), ended, origin });
  }

  /**
   * The spans of an SDK's `OTLP` frame (already ended, whatever their sampling): into the store as they
   * came, and to the OTLP export as ReadableSpans. Returns how many were kept and rejected.
   */
  ingest(request: unknown): { spans: number; rejected: number } {
    let spans = 0;
    const rejected = forEachSdkSpan(request, (span) => {
      spans++;
      this.store?.addLazy(span, sdkSpanSize(span));
      this.otlp?.onEnd(readableOfSdk(span));
    });
    return { spans, rejected };
  }

  /** Sends what is queued for export (at shutdown). */
  shutdown(): Promise<void> {
    return this.otlp?.shutdown() ?? Promise.resolve();
  }
}

/**
 * The sampling decision of a new span. With `parent_based`, a span under a parent follows the parent's
 * sampled flag (as the SDK's ParentBasedSampler does with its default delegates); a new trace, or any
 * span without `parent_based`, is decided by the root sampler: every trace, none, or the SDK's
 * TraceIdRatioBasedSampler for a ratio in between (the first two answer without asking it).
 */
function samplerOf(config: ObservabilityConfig): (traceId: string, parent: { flags: number } | undefined) => boolean {
  const ratio = config.sampling_ratio;
  const parentBased = config.parent_based;
  const ratioSampler = ratio > 0 && ratio < 1 ? new TraceIdRatioBasedSampler(ratio) : undefined;
  const root = (traceId: string): boolean =>
    ratioSampler ? ratioSampler.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED : ratio >= 1;
  return (traceId, parent) => (parent && parentBased ? (parent.flags & 1) === 1 : root(traceId));
}
