/** Time scaling of the Traces page's views, and the duration texts (pure functions). */
import { describe, expect, it } from 'vitest';
import { formatMs, formatNs, formatShare } from '../../web/src/pages/traces/model/format.js';
import { fromX, niceStep, spanBox, timeTicks, toX } from '../../web/src/pages/traces/model/scale.js';

describe('the time axis', () => {
  const axis = { start: 1000, end: 3000, width: 500 };

  it('maps instants to positions and back, clamped to the axis', () => {
    expect(toX(axis, 1000)).toBe(0);
    expect(toX(axis, 2000)).toBe(250);
    expect(toX(axis, 3000)).toBe(500);
    expect(toX(axis, 0)).toBe(0);
    expect(toX(axis, 9999)).toBe(500);
    expect(fromX(axis, 250)).toBe(2000);
    expect(toX({ start: 5, end: 5, width: 100 }, 5)).toBe(0);
  });

  it('gives a span its offset and width, at least the minimum and within the axis', () => {
    expect(spanBox(axis, 1500, 2500)).toEqual({ x: 125, width: 250 });
    expect(spanBox(axis, 2000, 2000, 2)).toEqual({ x: 250, width: 2 });
    // A minimum width past the end shifts the box left.
    expect(spanBox(axis, 3000, 3000, 4)).toEqual({ x: 496, width: 4 });
    // A zoomed axis clips a span wider than it.
    expect(spanBox(axis, 0, 10_000)).toEqual({ x: 0, width: 500 });
    // As fractions of 100 (the waterfall's percentages).
    expect(spanBox({ start: 0, end: 80, width: 100 }, 20, 40)).toEqual({ x: 25, width: 25 });
  });

  it('cuts the axis at round 1-2-5 steps with readable labels', () => {
    expect(niceStep(100, 5)).toBe(20);
    expect(niceStep(1000, 4)).toBe(500);
    expect(niceStep(7, 7)).toBe(1);
    const ticks = timeTicks(10_000_000, 5); // 10 ms
    expect(ticks.map((t) => t.label)).toEqual(['0', '2 ms', '4 ms', '6 ms', '8 ms', '10 ms']);
    expect(ticks.map((t) => t.fraction)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(timeTicks(0)).toEqual([{ at: 0, fraction: 0, label: '0' }]);
    expect(timeTicks(3_500_000_000, 4).map((t) => t.label)).toEqual(['0', '1 s', '2 s', '3 s']);
  });
});

describe('durations as text', () => {
  it('picks the unit and keeps three significant digits', () => {
    expect(formatNs(420)).toBe('420 ns');
    expect(formatNs(12_345)).toBe('12.3 µs');
    expect(formatNs(4_560_000)).toBe('4.56 ms');
    expect(formatNs(150_000_000)).toBe('150 ms');
    expect(formatNs(1_200_000_000)).toBe('1.2 s');
    expect(formatNs(125e9)).toBe('2 min 5 s');
    expect(formatMs(15.702)).toBe('15.7 ms');
    // Rounding up to 1000 of a unit moves to the next unit.
    expect(formatNs(999.6)).toBe('1 µs');
    expect(formatNs(999_950)).toBe('1 ms');
    expect(formatNs(999_999_000)).toBe('1 s');
    expect(formatNs(-2_500_000)).toBe('-2.5 ms');
    expect(formatShare(1, 4)).toBe('25%');
    expect(formatShare(1, 3000)).toBe('<0.1%');
    expect(formatShare(1, 0)).toBe('–');
  });
});
