import type { ModuleContext, TelemetryFrame } from '../../core/module-api.js';
import { errorMessage } from '../../lib/errors.js';
import { LogThrottle } from '../../lib/log-throttle.js';
import type { StoredLogRecord } from './log-record.js';
import { MinuteCounter } from './minute-counter.js';
import { readSdkLogs } from './sdk-logs.js';
import { type SdkMetricStore, readSdkMetrics } from './sdk-metrics.js';
import type { TracePipeline } from './trace-pipeline.js';

/** What came in from SDKs since start (`engine::health::check`). */
export interface IntakeCounts {
  frames: number;
  spans: number;
  logs: number;
  metric_points: number;
  /** Frames that were not JSON, and items in them without the fields they need. */
  rejected_frames: number;
  rejected_items: number;
}

/**
 * Reads the telemetry SDKs send (`OTLP`, `LOGS` and `MTRC` frames of OTLP/JSON, on `/otel` or in-band):
 * spans join the engine's own (store and export), log records the log store (and the log triggers),
 * metric points the SDK metric store. A frame that cannot be read is counted and logged (at most once a
 * minute), never thrown.
 */
export class TelemetryIntake {
  readonly counts: IntakeCounts = { frames: 0, spans: 0, logs: 0, metric_points: 0, rejected_frames: 0, rejected_items: 0 };
  private readonly badFrameLog = new LogThrottle(60_000);
  private readonly recentRejects = new MinuteCounter();

  constructor(
    private readonly ctx: ModuleContext,
    private readonly sinks: { traces?: TracePipeline; keepLog?: (record: StoredLogRecord) => void; metrics?: SdkMetricStore },
  ) {}

  /** A frame, or an item of one, was rejected in the last minute. */
  rejectedRecently(): boolean {
    return this.recentRejects.count() > 0;
  }

  start(): void {
    // Each frame is read as it comes (nothing here holds on to it): the engine need not keep frames for us.
    this.ctx.telemetry.subscribe((frame) => this.take(frame), { keepFrames: false });
  }

  private reject(items: number): void {
    if (items === 0) return;
    this.counts.rejected_items += items;
    this.recentRejects.add(items);
  }

  private take(frame: TelemetryFrame): void {
    this.counts.frames++;
    let request: unknown;
    try {
      request = JSON.parse(frame.payload.toString('utf8'));
    } catch (err) {
      this.counts.rejected_frames++;
      this.recentRejects.add();
      if (this.badFrameLog.due()) {
        this.ctx.logger.warn(
          { kind: frame.kind, rejected_frames: this.counts.rejected_frames },
          `an SDK ${frame.kind} telemetry frame is not OTLP/JSON (dropped): ${errorMessage(err)}`,
        );
      }
      return;
    }
    const { traces, keepLog, metrics } = this.sinks;
    if (frame.kind === 'OTLP' && traces) {
      const { spans, rejected } = traces.ingest(request);
      this.counts.spans += spans;
      this.reject(rejected);
    } else if (frame.kind === 'LOGS' && keepLog) {
      const { records, rejected } = readSdkLogs(request);
      this.counts.logs += records.length;
      this.reject(rejected);
      for (const record of records) keepLog(record);
    } else if (frame.kind === 'MTRC' && metrics) {
      const points = readSdkMetrics(request);
      this.counts.metric_points += points.length;
      metrics.add(points);
    }
  }
}
