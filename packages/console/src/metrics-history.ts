import type { EngineMetricsSnapshot, InvocationCounts, MetricsResponse, MetricsSample, MetricsUnavailableReason } from './api-types.js';
import type { EngineLink } from './engine-link.js';

/** Time between two readings of `engine::metrics::list`. */
export const SAMPLE_INTERVAL_MS = 2000;
/** How much history is kept. */
export const HISTORY_MS = 10 * 60_000;
/** Readings further apart than this leave a gap: no rate is computed across it. */
const GAP_FACTOR = 3;
/** Per-function counts are kept for the newest readings only, for the Flow page's rates (~10 s). */
const FUNCTION_WINDOW = 6;

const UNAVAILABLE: Record<MetricsUnavailableReason, string> = {
  module_not_loaded: 'flint-observability is not loaded: add it to the modules of flint-config.yaml (metrics_enabled is on by default) and restart the engine',
  metrics_disabled: 'flint-observability runs with metrics_enabled: false: set it to true (or unset OTEL_METRICS_ENABLED=false) and restart the engine',
};

interface EngineMetricsAnswer {
  engine_metrics?: {
    invocations?: Partial<InvocationCounts> & {
      in_flight?: number;
      by_function?: Record<string, InvocationCounts>;
      by_trigger_type?: Record<string, InvocationCounts & { skipped?: number }>;
    };
    workers?: { spawns?: number; deaths?: number; active?: number };
    performance?: EngineMetricsSnapshot['performance'];
    process?: EngineMetricsSnapshot['process'];
  };
  timestamp?: number;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The snapshot of an `engine::metrics::list` answer (without the SDK metric points). */
export function snapshotOf(answer: EngineMetricsAnswer, now = Date.now()): EngineMetricsSnapshot {
  const m = answer.engine_metrics ?? {};
  const inv = m.invocations ?? {};
  return {
    timestamp: typeof answer.timestamp === 'number' ? answer.timestamp : now,
    invocations: {
      total: num(inv.total),
      success: num(inv.success),
      error: num(inv.error),
      in_flight: num(inv.in_flight),
      by_function: inv.by_function ?? {},
      by_trigger_type: inv.by_trigger_type ?? {},
    },
    workers: { spawns: num(m.workers?.spawns), deaths: num(m.workers?.deaths), active: num(m.workers?.active) },
    performance: m.performance ?? null,
    process: m.process ?? null,
  };
}

/**
 * The sample of a snapshot, with its rates against the previous sample (none across a gap longer than
 * `maxGapMs` or an engine restart, seen as counts going down).
 */
export function sampleOf(snap: EngineMetricsSnapshot, previous: MetricsSample | undefined, maxGapMs = SAMPLE_INTERVAL_MS * GAP_FACTOR): MetricsSample {
  const inv = snap.invocations;
  const sample: MetricsSample = {
    t: snap.timestamp,
    total: inv.total,
    success: inv.success,
    error: inv.error,
    in_flight: inv.in_flight,
    workers_active: snap.workers.active,
  };
  const perf = snap.performance;
  if (perf && perf.sample_size > 0) {
    sample.p50_ms = perf.p50_duration_ms;
    sample.p95_ms = perf.p95_duration_ms;
    sample.p99_ms = perf.p99_duration_ms;
    sample.avg_ms = perf.avg_duration_ms;
  }
  if (snap.process) {
    sample.heap_used_bytes = snap.process.heap_used_bytes;
    sample.event_loop_lag_p99_ms = snap.process.event_loop_lag_p99_ms;
  }
  if (previous) {
    const dt = (sample.t - previous.t) / 1000;
    const calls = sample.total - previous.total;
    const errors = sample.error - previous.error;
    if (dt > 0 && dt * 1000 <= maxGapMs && calls >= 0 && errors >= 0) {
      sample.rate = round(calls / dt);
      sample.error_rate = round(errors / dt);
      if (calls > 0) sample.error_ratio = round(errors / calls, 4);
    }
  }
  return sample;
}

const round = (n: number, digits = 3) => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

/** A function's counts with its recent rates, for the Flow page's nodes. */
export type FunctionStats = InvocationCounts & { rate?: number; error_rate?: number };

/**
 * The console's history of the engine's metrics: a reading of `engine::metrics::list` every 2 s while
 * the bridge is connected, the last 10 minutes kept in a ring buffer (300 readings). The counts are
 * cumulative; rates come from consecutive readings. Per-function counts are kept for the newest few
 * readings only.
 */
export class MetricsHistory {
  private readonly ring: (MetricsSample | undefined)[];
  private next = 0;
  private size = 0;
  private latest: EngineMetricsSnapshot | null = null;
  private status: { available: boolean; reason?: MetricsUnavailableReason } = { available: false, reason: 'module_not_loaded' };
  /** When the last reading was attempted (epoch ms), 0 before the first. */
  private lastAttempt = 0;
  private recentFunctions: { t: number; byFunction: Record<string, InvocationCounts> }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly link: EngineLink,
    readonly intervalMs = SAMPLE_INTERVAL_MS,
    readonly windowMs = HISTORY_MS,
  ) {
    this.ring = new Array(Math.ceil(windowMs / intervalMs));
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.link.bridgeState === 'connected') void this.sample();
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Takes a reading now (joins one already running). Never throws: a failed reading is skipped. */
  sample(): Promise<void> {
    this.inFlight ??= this.read().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** A fresh-enough history: reads now when the last reading is older than the interval (the first request after start-up). */
  async current(): Promise<MetricsResponse> {
    if (this.link.bridgeState === 'connected' && Date.now() - this.lastAttempt > this.intervalMs) await this.sample();
    return this.response();
  }

  response(): MetricsResponse {
    const answer: MetricsResponse = {
      available: this.status.available,
      bridge: this.link.bridgeState,
      interval_ms: this.intervalMs,
      window_ms: this.windowMs,
      samples: this.samples(),
      latest: this.latest,
    };
    if (this.status.reason) {
      answer.reason = this.status.reason;
      answer.detail = UNAVAILABLE[this.status.reason];
    }
    return answer;
  }

  /** The readings kept, oldest first. */
  samples(): MetricsSample[] {
    const out: MetricsSample[] = [];
    const cap = this.ring.length;
    for (let i = 0; i < this.size; i++) out.push(this.ring[(this.next - this.size + i + cap) % cap]!);
    return out;
  }

  get metricsAvailable(): boolean {
    return this.status.available;
  }

  /** Each function's counts (since the engine started) and its rates over the newest readings (~10 s). */
  functionStats(): Record<string, FunctionStats> {
    const newest = this.recentFunctions.at(-1);
    if (!newest) return {};
    const oldest = this.recentFunctions[0]!;
    const dt = (newest.t - oldest.t) / 1000;
    const out: Record<string, FunctionStats> = {};
    for (const [id, c] of Object.entries(newest.byFunction)) {
      const stats: FunctionStats = { total: c.total, success: c.success, error: c.error };
      if (dt > 0 && oldest !== newest) {
        const before = oldest.byFunction[id] ?? { total: 0, success: 0, error: 0 };
        const calls = c.total - before.total;
        const errors = c.error - before.error;
        if (calls >= 0 && errors >= 0) {
          stats.rate = round(calls / dt);
          stats.error_rate = round(errors / dt);
        }
      }
      out[id] = stats;
    }
    return out;
  }

  private async read(): Promise<void> {
    this.lastAttempt = Date.now();
    let answer: EngineMetricsAnswer | undefined;
    try {
      answer = await this.link.callOptional<EngineMetricsAnswer>('engine::metrics::list', {});
    } catch {
      // The engine went away, or answered with an error: this reading is skipped.
      return;
    }
    if (answer === undefined) {
      this.status = { available: false, reason: 'module_not_loaded' };
      this.latest = null;
      return;
    }
    const snap = snapshotOf(answer);
    this.latest = snap;
    // With metrics_enabled: false the module still answers, with workers and the process but no performance.
    if (snap.performance === null) {
      this.status = { available: false, reason: 'metrics_disabled' };
      return;
    }
    this.status = { available: true };
    const previous = this.size > 0 ? this.ring[(this.next - 1 + this.ring.length) % this.ring.length] : undefined;
    if (previous && snap.timestamp <= previous.t) return;
    const sample = sampleOf(snap, previous, this.intervalMs * GAP_FACTOR);
    this.push(sample);
    // After a gap or an engine restart (no rate), the per-function window starts again.
    if (sample.rate === undefined) this.recentFunctions = [];
    this.recentFunctions.push({ t: snap.timestamp, byFunction: snap.invocations.by_function });
    if (this.recentFunctions.length > FUNCTION_WINDOW) this.recentFunctions.shift();
  }

  private push(sample: MetricsSample): void {
    this.ring[this.next] = sample;
    this.next = (this.next + 1) % this.ring.length;
    this.size = Math.min(this.size + 1, this.ring.length);
  }
}

const histories = new WeakMap<EngineLink, MetricsHistory>();

/** The history of a console's engine link (one per console server). */
export function metricsHistoryOf(link: EngineLink): MetricsHistory {
  let history = histories.get(link);
  if (!history) {
    history = new MetricsHistory(link);
    histories.set(link, history);
  }
  return history;
}
