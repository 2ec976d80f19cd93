import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../../core/logger.js';
import { ExportHealth } from './export-health.js';

// Loaded only when spans are exported (`exporter: otlp | both`): the OTLP exporter is a large import.

export interface OtlpOptions {
  /** The collector's base URL (`http://127.0.0.1:4318`); spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** Spans held for export at most; more are dropped and counted. */
  maxQueue: number;
  batchSize: number;
  flushIntervalMs: number;
  timeoutMs: number;
}

/**
 * Sends sampled spans to an OTLP/HTTP collector as protobuf, in batches (the SDK's BatchSpanProcessor and
 * OTLP exporter, whose retries are bounded). A full queue drops spans instead of growing; what is lost is
 * counted in `health` and logged at most once a minute.
 */
export class OtlpSpanProcessor implements SpanProcessor {
  readonly health: ExportHealth;
  private readonly batch: BatchSpanProcessor;

  constructor(options: OtlpOptions, logger: Logger) {
    const url = `${options.endpoint.replace(/\/+$/, '')}/v1/traces`;
    this.health = new ExportHealth('spans', url, options.maxQueue, logger);
    const exporter = new OTLPTraceExporter({ url, timeoutMillis: options.timeoutMs });
    this.batch = new BatchSpanProcessor(countingExporter(exporter, this.health), {
      // One more than ours, so that the SDK's queue never drops without our count.
      maxQueueSize: options.maxQueue + 1,
      maxExportBatchSize: Math.min(options.batchSize, options.maxQueue),
      scheduledDelayMillis: options.flushIntervalMs,
      exportTimeoutMillis: options.timeoutMs,
    });
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & 1) === 1 && this.health.admit()) this.batch.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.batch.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.batch.shutdown();
  }
}

function countingExporter(inner: SpanExporter, health: ExportHealth): SpanExporter {
  return {
    export: (spans, done) => inner.export(spans, health.settle(spans.length, done)),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}
