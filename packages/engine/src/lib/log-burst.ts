import type { Logger } from '../core/logger.js';

/** Keys (function ids) a summary line names; the rest are counted as others. */
const LISTED_KEYS = 10;
/** Keys counted one by one within a window; past it events are counted as others (ids may be anything). */
const COUNTED_KEYS = 1000;

export interface BurstLogOptions {
  level: 'warn' | 'error' | 'info';
  windowMs: number;
  /** The summary's message for `total` events in the last window, e.g. `12 invocations timed out`; `detail` names the keys. */
  summary: (total: number, detail: string) => string;
  /** The JSON field carrying the counts per key (`functions`). */
  keysField: string;
  /** Events written in full in each window before the rest are counted; default 1. */
  burst?: number;
}

/**
 * One kind of log line that may come in bursts (100,000 time-outs at once), rate-limited: the first
 * events of each window (`burst`, default 1) are logged at once as they are; later ones are counted per
 * key (a function id) and written as one summary line per window, e.g. `99,999 invocations timed out in
 * the last second (a::b: 90,000, c::d: 9,999)`. A window in which nothing was counted ends the burst.
 */
export class BurstLog {
  private counts = new Map<string, number>();
  private total = 0;
  private others = 0;
  /** Events written in full in the current window. */
  private written = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly options: BurstLogOptions,
  ) {}

  /** One event under `key`; `logFirst` writes it in full when it is among the first `burst` of its window. */
  add(key: string, logFirst: () => void): void {
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.endWindow(), this.options.windowMs);
      this.timer.unref();
      this.written = 0;
    }
    if (this.written < (this.options.burst ?? 1)) {
      this.written++;
      logFirst();
      return;
    }
    this.total++;
    const count = this.counts.get(key);
    if (count !== undefined) this.counts.set(key, count + 1);
    else if (this.counts.size < COUNTED_KEYS) this.counts.set(key, 1);
    else this.others++;
  }

  /** Writes what the current window counted (at shutdown) and ends the burst. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.write();
  }

  private endWindow(): void {
    if (this.total === 0) {
      this.timer = undefined;
      return;
    }
    this.write();
    this.written = 0;
    this.timer = setTimeout(() => this.endWindow(), this.options.windowMs);
    this.timer.unref();
  }

  private write(): void {
    if (this.total === 0) return;
    const sorted = [...this.counts].sort((a, b) => b[1] - a[1]);
    const listed = sorted.slice(0, LISTED_KEYS);
    const unlisted = this.others + sorted.slice(LISTED_KEYS).reduce((n, [, c]) => n + c, 0);
    const parts = listed.map(([key, n]) => `${key}: ${n.toLocaleString('en-US')}`);
    if (unlisted > 0) parts.push(`others: ${unlisted.toLocaleString('en-US')}`);
    const fields = { count: this.total, [this.options.keysField]: Object.fromEntries(listed), ...(unlisted > 0 ? { others: unlisted } : {}) };
    this.logger[this.options.level](fields, this.options.summary(this.total, parts.join(', ')));
    this.counts = new Map();
    this.total = 0;
    this.others = 0;
  }
}

/**
 * The limit of the lines a module may write in floods (trigger failures, dead letters, cron slots): the
 * first ten of each second in full, then one line a second counting the rest per key. Below ten a second
 * every event keeps its own line.
 */
export function floodLimit(level: BurstLogOptions['level'], keysField: string, summary: BurstLogOptions['summary']): BurstLogOptions {
  return { level, windowMs: 1000, burst: 10, keysField, summary };
}

const shared = new WeakMap<Logger, Map<BurstLogOptions, BurstLog>>();

/**
 * The BurstLog of a logger (a module's) for `options` (a constant of the code that writes the lines), made
 * on first use: for lines written from code that has no object of its own to keep one in (a trigger's
 * firing, a queue's delivery).
 */
export function burstLogOf(logger: Logger, options: BurstLogOptions): BurstLog {
  let logs = shared.get(logger);
  if (!logs) {
    logs = new Map();
    shared.set(logger, logs);
  }
  let log = logs.get(options);
  if (!log) {
    log = new BurstLog(logger, options);
    logs.set(options, log);
  }
  return log;
}

/** Writes what the BurstLogs of a logger (a module's, see `burstLogOf`) still count: at the module's stop. */
export function flushBurstLogs(logger: Logger): void {
  for (const log of shared.get(logger)?.values() ?? []) log.flush();
}
