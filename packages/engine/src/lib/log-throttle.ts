/**
 * Says when a repeated log line may be written again: at most once per `intervalMs` (the first time
 * at once). The line itself carries running totals, so nothing is lost by the lines skipped.
 */
export class LogThrottle {
  private last = Number.NEGATIVE_INFINITY;

  constructor(private readonly intervalMs: number) {}

  /** True when the line may be written now (and starts a new interval). */
  due(now = Date.now()): boolean {
    if (now - this.last < this.intervalMs) return false;
    this.last = now;
    return true;
  }
}
