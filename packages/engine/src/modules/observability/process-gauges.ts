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

/** Heap, RSS and event-loop lag of the engine process, measured with node:perf_hooks (sampled every 20 ms). */
export class ProcessGauges {
  private readonly lag: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });

  constructor() {
    this.lag.enable();
  }

  /** Reads the gauges; the lag figures cover the time since the last reading. */
  read(): ProcessReading {
    const memory = process.memoryUsage();
    const ms = (ns: number) => (Number.isFinite(ns) ? Math.round(ns / 1e3) / 1e3 : 0);
    const reading = {
      heap_used_bytes: memory.heapUsed,
      rss_bytes: memory.rss,
      event_loop_lag_p50_ms: this.lag.count > 0 ? ms(this.lag.percentile(50)) : 0,
      event_loop_lag_p99_ms: this.lag.count > 0 ? ms(this.lag.percentile(99)) : 0,
      event_loop_lag_max_ms: this.lag.count > 0 ? ms(this.lag.max) : 0,
      uptime_seconds: Math.round(process.uptime()),
    };
    this.lag.reset();
    return reading;
  }

  stop(): void {
    this.lag.disable();
  }
}
