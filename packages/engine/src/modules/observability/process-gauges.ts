import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/** The engine process as `engine::metrics::list` and Prometheus show it. */
export interface ProcessReading {
  heap_used_bytes: number;
  rss_bytes: number;
  /** Event-loop delay since the previous reading (ms). */
  event_loop_lag_p50_ms: number;
  event_loop_lag_p99_ms: number;
  event_loop_lag_max_ms: number;
  uptime_seconds: number;
}

/** Event-loop lag is reported over windows of this length (the last complete one). */
const LAG_WINDOW_MS = 10_000;

type Lag = Pick<ProcessReading, 'event_loop_lag_p50_ms' | 'event_loop_lag_p99_ms' | 'event_loop_lag_max_ms'>;

/**
 * Heap, RSS and event-loop lag of the engine process, measured with node:perf_hooks (sampled every
 * 20 ms). Lag figures cover the last complete 10-second window (the current one until the first ends),
 * so that every reader (engine::metrics::list, a Prometheus scrape) sees the same figures.
 */
export class ProcessGauges {
  private readonly lag: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  private lastWindow: Lag | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.lag.enable();
    this.timer = setInterval(() => {
      this.lastWindow = this.lagNow();
      this.lag.reset();
    }, LAG_WINDOW_MS);
    this.timer.unref();
  }

  read(): ProcessReading {
    const memory = process.memoryUsage();
    return { heap_used_bytes: memory.heapUsed, rss_bytes: memory.rss, ...(this.lastWindow ?? this.lagNow()), uptime_seconds: Math.round(process.uptime()) };
  }

  stop(): void {
    clearInterval(this.timer);
    this.lag.disable();
  }

  private lagNow(): Lag {
    const h = this.lag;
    const ms = (ns: number) => (h.count > 0 && Number.isFinite(ns) ? Math.round(ns / 1e3) / 1e3 : 0);
    return { event_loop_lag_p50_ms: ms(h.percentile(50)), event_loop_lag_p99_ms: ms(h.percentile(99)), event_loop_lag_max_ms: ms(h.max) };
  }
}
