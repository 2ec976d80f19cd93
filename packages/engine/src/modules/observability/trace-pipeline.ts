import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  ParentBasedSampler,
  type Sampler,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../../core/logger.js';
import type { ObservabilityConfig } from './config.js';
import { EngineTracer } from './engine-tracer.js';
import type { ExportHealth } from './export-health.js';
import { PooledIdGenerator } from './id-generator.js';
import { forEachSdkSpan, readableOfSdk, sdkSpanSize } from './sdk-spans.js';
import type { OtlpSpanProcessor } from './span-export.js';
import { MemorySpanProcessor } from './span-processors.js';
import { SpanStore } from './span-store.js';

/** The engine's trace pipeline: the OpenTelemetry tracer provider and where its spans (and SDKs' spans) go. */
export class TracePipeline {
  readonly tracer: EngineTracer;
  /** The in-memory span store (`exporter: memory | both`). */
  readonly store: SpanStore | undefined;
  /** The OTLP export's counters (`exporter: otlp | both`). */
  readonly export: ExportHealth | undefined;
  private readonly otlp: OtlpSpanProcessor | undefined;
  private readonly provider: BasicTracerProvider;

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
    const processors: SpanProcessor[] = [];
    if (config.exporter !== 'otlp') {
      this.store = new SpanStore({
        max_spans: config.memory_max_spans,
        max_bytes: config.memory_max_bytes,
        retention_seconds: config.traces_retention_seconds || undefined,
      });
      processors.push(new MemorySpanProcessor(this.store));
    }
    if (otlp) {
      this.otlp = otlp;
      this.export = otlp.health;
      processors.push(otlp);
    }
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes(resource),
      sampler: samplerOf(config),
      spanProcessors: processors,
      idGenerator: new PooledIdGenerator(),
    });
    this.tracer = new EngineTracer(this.provider.getTracer('flint', scopeVersion));
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
    return this.provider.shutdown();
  }
}

function samplerOf(config: ObservabilityConfig): Sampler {
  const ratio = config.sampling_ratio;
  const root = ratio >= 1 ? new AlwaysOnSampler() : ratio <= 0 ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(ratio);
  return config.parent_based ? new ParentBasedSampler({ root }) : root;
}
