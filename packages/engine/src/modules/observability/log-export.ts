import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, type LogRecordExporter, type ReadableLogRecord, type SdkLogRecord } from '@opentelemetry/sdk-logs';
import type { Logger } from '../../core/logger.js';
import { ExportHealth } from './export-health.js';
import type { StoredLogRecord } from './log-record.js';
import { hrTime } from './otlp-json.js';
import type { OtlpOptions } from './span-export.js';

// Loaded only when logs are exported (`logs_exporter: otlp | both`).

/**
 * Sends stored log records to an OTLP/HTTP collector (`logs_exporter: otlp | both`) as protobuf, through
 * the SDK's batch processor and OTLP log exporter. Each record keeps its own resource (the engine's, or
 * the SDK's that sent it). A full queue drops records and counts them in `health`.
 */
export class OtlpLogExport {
  readonly health: ExportHealth;
  private readonly batch: BatchLogRecordProcessor;
  /** Resources by the JSON of their attributes: records of one source share one. */
  private readonly resources = new Map<string, Resource>();

  constructor(options: OtlpOptions, logger: Logger) {
    const url = `${options.endpoint.replace(/\/+$/, '')}/v1/logs`;
    this.health = new ExportHealth('logs', url, options.maxQueue, logger);
    const exporter = new OTLPLogExporter({ url, timeoutMillis: options.timeoutMs });
    this.batch = new BatchLogRecordProcessor({
      exporter: counting(exporter, this.health),
      maxQueueSize: options.maxQueue + 1,
      maxExportBatchSize: Math.min(options.batchSize, options.maxQueue),
      scheduledDelayMillis: options.flushIntervalMs,
      exportTimeoutMillis: options.timeoutMs,
    });
  }

  forward(record: StoredLogRecord): void {
    if (!this.health.admit()) return;
    const at = record.timestamp_unix_nano || record.observed_timestamp_unix_nano;
    const readable: ReadableLogRecord = {
      hrTime: hrTime(at),
      hrTimeObserved: hrTime(record.observed_timestamp_unix_nano),
      spanContext: record.trace_id && record.span_id ? { traceId: record.trace_id, spanId: record.span_id, traceFlags: 1 } : undefined,
      severityNumber: record.severity_number,
      severityText: record.severity_text,
      body: record.body,
      // A worker's record has the engine's resource and its own service: the service goes with it.
      resource: this.resourceOf(
        record.resource['service.name'] === record.service_name ? record.resource : { ...record.resource, 'service.name': record.service_name },
      ),
      instrumentationScope: { name: record.instrumentation_scope_name ?? 'flint', version: record.instrumentation_scope_version },
      attributes: record.attributes as ReadableLogRecord['attributes'],
      droppedAttributesCount: 0,
    };
    // The batch processor only reads a record's readable fields.
    this.batch.onEmit(readable as SdkLogRecord);
  }

  shutdown(): Promise<void> {
    return this.batch.shutdown();
  }

  private resourceOf(attributes: Record<string, unknown>): Resource {
    const key = JSON.stringify(attributes);
    let resource = this.resources.get(key);
    if (!resource) {
      if (this.resources.size > 1000) this.resources.clear();
      resource = resourceFromAttributes(attributes as Parameters<typeof resourceFromAttributes>[0]);
      this.resources.set(key, resource);
    }
    return resource;
  }
}

function counting(inner: LogRecordExporter, health: ExportHealth): LogRecordExporter {
  return {
    export: (records, done) => inner.export(records, health.settle(records.length, done)),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}
