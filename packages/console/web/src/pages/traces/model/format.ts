/** Durations and instants of spans as text (pure: no DOM). */

/** A duration in nanoseconds: "420 ns", "12.3 µs", "4.56 ms", "1.20 s", "2 min 5 s". */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return String(ns);
  const abs = Math.abs(ns);
  // A value that rounds up to 1000 of a unit is written in the next one ("1 ms", not "1000 µs").
  if (Math.round(abs) < 1_000) return `${Math.round(ns)} ns`;
  if (rounds(abs / 1_000) < 1_000) return `${trim(ns / 1_000)} µs`;
  if (rounds(abs / 1_000_000) < 1_000) return `${trim(ns / 1_000_000)} ms`;
  if (abs < 60e9) return `${trim(ns / 1e9)} s`;
  const s = Math.round(ns / 1e9);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** A duration in milliseconds, as formatNs. */
export const formatMs = (ms: number): string => formatNs(ms * 1e6);

/** `v` (positive) as trim would round it. */
const rounds = (v: number): number => Number(v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2));

/** Three significant digits at most, without trailing zeros ("12.3", "4.56", "120"). */
function trim(v: number): string {
  const abs = Math.abs(v);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  return String(Number(v.toFixed(digits)));
}

/** A share as a percentage: "42%", "3.5%", "<0.1%". */
export function formatShare(part: number, whole: number): string {
  if (!(whole > 0)) return '–';
  const p = (part / whole) * 100;
  if (p > 0 && p < 0.1) return '<0.1%';
  return `${p >= 10 ? Math.round(p) : Number(p.toFixed(1))}%`;
}
