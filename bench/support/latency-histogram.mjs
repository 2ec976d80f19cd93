// A log-scale latency histogram (µs, 2% wide buckets) that child processes fill and send over IPC as a plain
// array, and that the bench merges and reads percentiles from. Used by bench/stream, whose subscribers
// see too many frames to send every latency back.
const PER_E = 50; // buckets per factor e: each bucket spans ~2%
const BUCKETS = 1200; // up to e^(1199/50) µs ≈ 7 hours

export function newHistogram() {
  return new Array(BUCKETS).fill(0);
}

/** Adds one latency (µs) to `h`. */
export function record(h, us) {
  const b = us < 1 ? 0 : Math.min(BUCKETS - 1, Math.floor(Math.log(us) * PER_E) + 1);
  h[b]++;
}

/** Sums histograms (arrays from newHistogram) into a new one. */
export function merge(histograms) {
  const out = newHistogram();
  for (const h of histograms) for (let i = 0; i < BUCKETS; i++) out[i] += h[i];
  return out;
}

export function count(h) {
  return h.reduce((a, b) => a + b, 0);
}

/** Nearest-rank percentile (µs): the upper edge of the bucket holding that rank; NaN when empty. */
export function percentileOf(h, p) {
  const total = count(h);
  if (total === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (let i = 0; i < BUCKETS; i++) {
    seen += h[i];
    if (seen >= rank) return i === 0 ? 1 : Math.exp(i / PER_E);
  }
  return Number.NaN;
}
