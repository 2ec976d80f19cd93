import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../lib/errors.js';
import { LogThrottle } from '../../lib/log-throttle.js';
import { MinuteCounter } from './minute-counter.js';

/** A failing export is logged at most this often, with running totals. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/** What one OTLP export stream (spans or logs) has done since start, for `engine::health::check`. */
export interface ExportReport {
  url: string;
  /** `idle` before the first export, then `ok` or `failing` after the last one. */
  state: 'idle' | 'ok' | 'failing';
  exported: number;
  /** Items in exports that failed (after the exporter's own bounded retries). */
  failed: number;
  /** Items dropped before export because the queue was full (a slow or absent collector), since start and in the last minute. */
  dropped: number;
  dropped_last_minute: number;
  /** Items waiting to be exported or in an export under way. */
  queued: number;
  last_error?: string;
  last_success_at?: string;
}

/**
 * Counts one export stream and logs its trouble: the first failure at once, then at most once a minute
 * with the totals, and the recovery once. Never throws and never waits: the invocation path only ever
 * calls `admit`.
 */
export class ExportHealth {
  private exported = 0;
  private failed = 0;
  private dropped = 0;
  private queued = 0;
  private state: ExportReport['state'] = 'idle';
  private lastError: string | undefined;
  private lastSuccessAt: number | undefined;
  private readonly failureLog = new LogThrottle(FAILURE_LOG_INTERVAL_MS);
  private readonly recentDrops = new MinuteCounter();

  constructor(
    private readonly what: 'spans' | 'logs',
    readonly url: string,
    private readonly maxQueued: number,
    private readonly logger: Logger,
  ) {}

  /** True when one more item may be queued for export; counts it dropped otherwise. */
  admit(): boolean {
    if (this.queued >= this.maxQueued) {
      this.dropped++;
      this.recentDrops.add();
      return false;
    }
    this.queued++;
    return true;
  }

  /** Wraps an exporter's result callback to count the batch of `count` items. */
  settle(count: number, done: (result: ExportResult) => void): (result: ExportResult) => void {
    return (result) => {
      this.queued = Math.max(0, this.queued - count);
      if (result.code === ExportResultCode.SUCCESS) this.succeeded(count);
      else this.fail(count, result.error);
      done(result);
    };
  }

  report(): ExportReport {
    const report: ExportReport = {
      url: this.url,
      state: this.state,
      exported: this.exported,
      failed: this.failed,
      dropped: this.dropped,
      dropped_last_minute: this.recentDrops.count(),
      queued: this.queued,
    };
    if (this.lastError !== undefined) report.last_error = this.lastError;
    if (this.lastSuccessAt !== undefined) report.last_success_at = new Date(this.lastSuccessAt).toISOString();
    return report;
  }

  private succeeded(count: number): void {
    this.exported += count;
    this.lastSuccessAt = Date.now();
    if (this.state === 'failing') this.logger.info({ url: this.url, exported: this.exported }, `OTLP export of ${this.what} to ${this.url} works again`);
    this.state = 'ok';
  }

  private fail(count: number, error: Error | undefined): void {
    this.failed += count;
    this.state = 'failing';
    this.lastError = error ? errorMessage(error) : 'export failed';
    if (!this.failureLog.due()) return;
    const totals = { url: this.url, failed: this.failed, dropped: this.dropped, exported: this.exported };
    this.logger.warn(
      totals,
      `OTLP export of ${this.what} to ${this.url} failed: ${this.lastError} (${this.failed} ${this.what} lost in failed exports and ${this.dropped} dropped by a full queue since start; next report in a minute at most)`,
    );
  }
}
