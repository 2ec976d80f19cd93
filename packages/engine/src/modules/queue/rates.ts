/** Counts events per second over the last minute (60 one-second buckets), for a queue's stats. */
export class RateWindow {
  private readonly buckets = new Float64Array(60);
  private second = Math.floor(Date.now() / 1000);
  total = 0;

  add(n = 1): void {
    this.roll();
    this.buckets[this.second % 60] = (this.buckets[this.second % 60] ?? 0) + n;
    this.total += n;
  }

  /** Events per second, averaged over the last minute. */
  perSecond(): number {
    this.roll();
    let sum = 0;
    for (const b of this.buckets) sum += b;
    return Math.round((sum / 60) * 100) / 100;
  }

  private roll(): void {
    const now = Math.floor(Date.now() / 1000);
    if (now === this.second) return;
    const gap = Math.min(now - this.second, 60);
    for (let i = 1; i <= gap; i++) this.buckets[(this.second + i) % 60] = 0;
    this.second = now;
  }
}

/** What happened to one queue's messages through this engine. */
export class QueueCounters {
  readonly published = new RateWindow();
  readonly handled = new RateWindow();
  readonly failed = new RateWindow();
  readonly dead = new RateWindow();

  view(): { published_per_sec: number; handled_per_sec: number; failed_per_sec: number; dead_per_sec: number } {
    return {
      published_per_sec: this.published.perSecond(),
      handled_per_sec: this.handled.perSecond(),
      failed_per_sec: this.failed.perSecond(),
      dead_per_sec: this.dead.perSecond(),
    };
  }
}

/** Counters by queue name, created on first use. */
export class CounterTable {
  private readonly byQueue = new Map<string, QueueCounters>();

  of(queue: string): QueueCounters {
    let c = this.byQueue.get(queue);
    if (!c) {
      c = new QueueCounters();
      this.byQueue.set(queue, c);
    }
    return c;
  }
}
