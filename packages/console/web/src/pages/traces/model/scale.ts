/** Placing spans on a shared time axis (pure: no DOM). Times are nanoseconds from the trace's start. */
import { formatNs } from './format.js';

/** A time axis: `[start, end]` (ns) drawn over `width` units (pixels, or 1 for fractions). */
export interface Axis {
  start: number;
  end: number;
  width: number;
}

/** The position of instant `t` on the axis (clamped to it). */
export function toX(axis: Axis, t: number): number {
  const span = axis.end - axis.start;
  if (!(span > 0)) return 0;
  const x = ((t - axis.start) / span) * axis.width;
  return x < 0 ? 0 : x > axis.width ? axis.width : x;
}

/** The instant at position `x` of the axis. */
export function fromX(axis: Axis, x: number): number {
  return axis.start + (x / axis.width) * (axis.end - axis.start);
}

/**
 * The box of an interval on the axis: its offset and width, at least `minWidth` (a 0-length span still
 * shows), shifted left when the minimum would pass the axis' end.
 */
export function spanBox(axis: Axis, start: number, end: number, minWidth = 0): { x: number; width: number } {
  let x = toX(axis, start);
  let width = Math.max(toX(axis, end) - x, minWidth);
  if (width > axis.width) width = axis.width;
  if (x + width > axis.width) x = Math.max(0, axis.width - width);
  return { x, width };
}

/** A 1-2-5 step so that `span` is cut into about `count` parts. */
export function niceStep(span: number, count: number): number {
  if (!(span > 0) || !(count > 0)) return 1;
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const f = raw / power;
  const nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * power;
}

/** Ticks over `[0, durationNs]`: about `count` of them at round values, each with its position as a fraction (0…1) and a label. */
export function timeTicks(durationNs: number, count = 5): { at: number; fraction: number; label: string }[] {
  if (!(durationNs > 0)) return [{ at: 0, fraction: 0, label: '0' }];
  const step = niceStep(durationNs, count);
  const ticks: { at: number; fraction: number; label: string }[] = [];
  for (let k = 0; k * step <= durationNs * (1 + 1e-9); k++) {
    const at = k * step;
    ticks.push({ at, fraction: at / durationNs, label: at === 0 ? '0' : formatNs(at) });
  }
  return ticks;
}
