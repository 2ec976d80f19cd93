import { type SeriesPoint, sparklinePath } from './sparkline.js';

const WIDTH = 240;
const HEIGHT = 44;

/** A small line chart of the last minutes (one path per series; gaps where the console had no reading). */
export function Sparkline({
  series,
  windowMs,
  end,
  label,
}: {
  series: { points: SeriesPoint[]; tone: 'accent' | 'error' | 'info' | 'muted' }[];
  windowMs: number;
  end: number;
  label: string;
}) {
  let max = 0;
  for (const s of series) for (const p of s.points) if (p.v !== undefined && p.v > max) max = p.v;
  return (
    <svg className="sparkline" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label={label}>
      <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} className="sparkline-base" />
      {series.map((s, i) => (
        <path
          // biome-ignore lint/suspicious/noArrayIndexKey: the series are fixed per chart
          key={i}
          d={sparklinePath(s.points, { width: WIDTH, height: HEIGHT, windowMs, end, max })}
          className={`sparkline-line tone-${s.tone}`}
        />
      ))}
    </svg>
  );
}
