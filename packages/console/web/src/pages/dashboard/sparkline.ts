import type { MetricsSample } from '../../../../src/api-types.js';

/** A point of a series: its time (epoch ms) and value, undefined where there is no value (a gap). */
export interface SeriesPoint {
  t: number;
  v: number | undefined;
}

/**
 * An SVG path of a series over a time window ending at `end`: one `M…L…` run per stretch without a gap,
 * scaled to `width` × `height` (0 at the bottom, `max` — at least the series' largest value — at the top).
 * A lone point is drawn as a short flat stroke so it stays visible.
 */
export function sparklinePath(points: readonly SeriesPoint[], opts: { width: number; height: number; windowMs: number; end: number; max?: number }): string {
  const { width, height, windowMs, end } = opts;
  const start = end - windowMs;
  let max = opts.max ?? 0;
  for (const p of points) if (p.v !== undefined && p.v > max) max = p.v;
  if (max <= 0) max = 1;
  const x = (t: number) => round(((t - start) / windowMs) * width);
  const y = (v: number) => round(height - (v / max) * (height - 2) - 1);
  const runs: string[] = [];
  let run: [number, number][] = [];
  const flush = () => {
    if (run.length === 1) run.push([Math.min(width, run[0]![0] + 2), run[0]![1]]);
    if (run.length > 0) runs.push(run.map(([px, py], i) => `${i === 0 ? 'M' : 'L'}${px},${py}`).join(''));
    run = [];
  };
  for (const p of points) {
    if (p.t < start || p.v === undefined || !Number.isFinite(p.v)) {
      flush();
      continue;
    }
    run.push([x(p.t), y(p.v)]);
  }
  flush();
  return runs.join('');
}

const round = (n: number) => Math.round(n * 10) / 10;

/** A series of one field of the samples; a sample with no rate (after a gap) breaks the line. */
export function seriesOf(samples: readonly MetricsSample[], pick: (s: MetricsSample) => number | undefined): SeriesPoint[] {
  return samples.map((s) => ({ t: s.t, v: pick(s) }));
}

/** The newest sample that has a rate (the very newest may follow a gap). */
export function latestWithRate(samples: readonly MetricsSample[]): MetricsSample | undefined {
  for (let i = samples.length - 1; i >= 0; i--) if (samples[i]!.rate !== undefined) return samples[i];
  return undefined;
}

/** Calls and failures over the readings kept (counts going down, an engine restart, restart the sum). */
export function windowTotals(samples: readonly MetricsSample[]): { calls: number; errors: number } {
  let calls = 0;
  let errors = 0;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    if (b.total >= a.total && b.error >= a.error) {
      calls += b.total - a.total;
      errors += b.error - a.error;
    }
  }
  return { calls, errors };
}

/** The average call rate over the last `ms` of readings (calls per second), undefined without two readings in it. */
export function averageRate(samples: readonly MetricsSample[], ms: number): number | undefined {
  const last = samples.at(-1);
  if (!last) return undefined;
  const inWindow = samples.filter((s) => s.t >= last.t - ms);
  if (inWindow.length < 2) return undefined;
  const { calls } = windowTotals(inWindow);
  const dt = (last.t - inWindow[0]!.t) / 1000;
  return dt > 0 ? calls / dt : undefined;
}
