/**
 * The clock of the engine's spans (SpanClock in src/modules/observability/engine-spans.ts): monotonic
 * readings as wall-clock nanoseconds, following the wall clock when it steps away (an NTP correction, a
 * resumed machine) but not its millisecond jitter.
 *
 * SpanClock is not part of the package's public entry, so this file imports the built module (dist/; run
 * `npx tsc -b` first).
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { SpanClock } from '../../dist/modules/observability/engine-spans.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const ms = (nanos: number) => nanos / 1e6;

describe('SpanClock', () => {
  test('gives wall-clock time with the monotonic clock’s resolution', () => {
    const clock = new SpanClock();
    const at = performance.now();
    expect(Math.abs(ms(clock.nanos(at)) - Date.now())).toBeLessThan(5);
    // Two readings 0.25 ms apart stay 0.25 ms apart (to the double's precision at today's dates).
    expect(clock.nanos(at + 0.25) - clock.nanos(at)).toBeCloseTo(250_000, -3);
  });

  test('follows a wall-clock step once its check is due, and only then', () => {
    const clock = new SpanClock();
    const at = performance.now();
    const wall = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(wall + 3_600_000);
    // Within 10 s of the last check the anchor stands: spans of one call stay on one time line.
    expect(Math.abs(ms(clock.nanos(at + 5_000)) - (wall + 5_000))).toBeLessThan(5);
    // Past it, the clock re-anchors to the wall clock.
    expect(Math.abs(ms(clock.nanos(at + 11_000)) - (wall + 3_600_000))).toBeLessThan(5);
  });

  test('does not follow a drift of a few milliseconds', () => {
    const clock = new SpanClock();
    const at = performance.now();
    const before = clock.nanos(at);
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 11_000 + 10);
    expect(ms(clock.nanos(at + 11_000) - before)).toBeCloseTo(11_000, 2);
  });
});
