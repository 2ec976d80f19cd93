/** Events counted over the last minute, in six 10-second buckets (so a burst stops counting within a minute). */
export class MinuteCounter {
  private readonly buckets = new Float64Array(6);
  private bucketStart = 0;
  private current = 0;

  add(n = 1, now = Date.now()): void {
    this.advance(now);
    this.buckets[this.current] = (this.buckets[this.current] ?? 0) + n;
  }

  count(now = Date.now()): number {
    this.advance(now);
    let sum = 0;
    for (const b of this.buckets) sum += b;
    return sum;
  }

  private advance(now: number): void {
    const bucket = Math.floor(now / 10_000);
    if (this.bucketStart === 0) this.bucketStart = bucket;
    const steps = Math.min(6, bucket - this.bucketStart);
    for (let i = 0; i < steps; i++) {
      this.current = (this.current + 1) % 6;
      this.buckets[this.current] = 0;
    }
    if (steps > 0) this.bucketStart = bucket;
  }
}
