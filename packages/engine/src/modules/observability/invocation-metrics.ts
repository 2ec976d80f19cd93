import type { ErrorBody } from '@flint/protocol';
import type { InvocationEnd, InvocationEvent, InvocationHooks } from '../../core/module-api.js';

/** Counts of one function (or of all). */
export interface CallCounts {
  total: number;
  success: number;
  error: number;
}

/** Durations kept for the percentiles of `engine::metrics::list` (the most recent ones). */
const RESERVOIR = 10_000;

/** Sink for each finished invocation, for exporters (the OpenTelemetry instruments, when a reader exists). */
export type InvocationSink = (functionId: string, triggerType: string, durationMs: number, error: ErrorBody | undefined) => void;

/**
 * Invocation counts per function and trigger type, calls in flight and recent durations, kept by the
 * invocation hooks: a few additions per call, nothing allocated once a function has been seen. The
 * engine's own functions (`engine::*`: listings, log calls, the console's and the scrapes' queries) are
 * left out, as they are from tracing.
 */
export class InvocationMetrics implements InvocationHooks {
  readonly all: CallCounts = { total: 0, success: 0, error: 0 };
  readonly byFunction = new Map<string, CallCounts>();
  /** Trigger firings per trigger type, and how many were skipped by their condition. */
  readonly firings = new Map<string, CallCounts & { skipped: number }>();
  inFlight = 0;
  private readonly durations = new Float64Array(RESERVOIR);
  private recorded = 0;

  constructor(private readonly sink?: InvocationSink) {}

  onStart(event: InvocationEvent): void {
    if (event.kind === 'invocation' && !isEngineFunction(event.functionId)) this.inFlight++;
  }

  onEnd(event: InvocationEvent, end: InvocationEnd): void {
    this.finish(event, end, undefined);
  }

  onError(event: InvocationEvent, end: InvocationEnd & { error: ErrorBody }): void {
    this.finish(event, end, end.error);
  }

  /** Percentiles and extremes of the recent durations (ms), or zeros before the first call. */
  performance(): {
    avg_duration_ms: number;
    p50_duration_ms: number;
    p95_duration_ms: number;
    p99_duration_ms: number;
    min_duration_ms: number;
    max_duration_ms: number;
    sample_size: number;
  } {
    const n = Math.min(this.recorded, RESERVOIR);
    if (n === 0)
      return { avg_duration_ms: 0, p50_duration_ms: 0, p95_duration_ms: 0, p99_duration_ms: 0, min_duration_ms: 0, max_duration_ms: 0, sample_size: 0 };
    const sorted = this.durations.slice(0, n).sort();
    let sum = 0;
    for (const d of sorted) sum += d;
    const at = (q: number) => round(sorted[Math.min(n - 1, Math.floor(q * n))]!);
    return {
      avg_duration_ms: round(sum / n),
      p50_duration_ms: at(0.5),
      p95_duration_ms: at(0.95),
      p99_duration_ms: at(0.99),
      min_duration_ms: round(sorted[0]!),
      max_duration_ms: round(sorted[n - 1]!),
      sample_size: n,
    };
  }

  private finish(event: InvocationEvent, end: InvocationEnd, error: ErrorBody | undefined): void {
    const triggerType = event.trigger?.type ?? 'call';
    if (event.kind === 'trigger') {
      let f = this.firings.get(triggerType);
      if (!f) {
        f = { total: 0, success: 0, error: 0, skipped: 0 };
        this.firings.set(triggerType, f);
      }
      count(f, error);
      if (end.skipped) f.skipped++;
      return;
    }
    if (isEngineFunction(event.functionId)) return;
    this.inFlight--;
    count(this.all, error);
    let c = this.byFunction.get(event.functionId);
    if (!c) {
      c = { total: 0, success: 0, error: 0 };
      this.byFunction.set(event.functionId, c);
    }
    count(c, error);
    this.durations[this.recorded++ % RESERVOIR] = end.durationMs;
    this.sink?.(event.functionId, triggerType, end.durationMs, error);
  }
}

function count(c: CallCounts, error: ErrorBody | undefined): void {
  c.total++;
  if (error) c.error++;
  else c.success++;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

const isEngineFunction = (functionId: string) => functionId.startsWith('engine::');
