// Closed-loop load generation, latency statistics and table printing shared by the benches.
import { SequenceTable } from '@flint/protocol';
import WebSocket from 'ws';
import { sleep } from './proc.mjs';

/** Seconds of measurement per level: $BENCH_SECONDS (default `fallback`). */
export function benchSeconds(fallback = 5) {
  const v = Number(process.env.BENCH_SECONDS);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

/**
 * Runs `concurrency` loops; each awaits `call(seq)` then issues the next. The first `warmupMs` are not
 * recorded; then every call completing within the next `durationMs` is counted and its latency (from
 * issue to completion, process.hrtime.bigint, in ns) recorded. Returns { latencies, elapsedNs, completed }
 * (`completed`: every call that finished, warm-up included).
 */
export async function closedLoop(call, { concurrency, warmupMs, durationMs }) {
  let phase = 'warmup';
  const latencies = [];
  let errors = 0;
  let firstError;
  let seq = 0;
  let completed = 0;
  const loop = async () => {
    while (phase !== 'done') {
      const t0 = process.hrtime.bigint();
      try {
        await call(seq++);
      } catch (err) {
        errors++;
        firstError ??= err;
        if (errors > 100) phase = 'done';
        continue;
      }
      completed++;
      if (phase === 'measure') latencies.push(Number(process.hrtime.bigint() - t0));
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  await sleep(warmupMs);
  phase = 'measure';
  const start = process.hrtime.bigint();
  await sleep(durationMs);
  if (phase === 'measure') phase = 'done';
  const elapsedNs = Number(process.hrtime.bigint() - start);
  await Promise.all(loops);
  if (errors > 0) throw new Error(`${errors} calls failed; first: ${firstError?.message ?? firstError}`);
  return { latencies, elapsedNs, completed };
}

/** Merges closedLoop() samples (e.g. several rounds) into calls/s, p50 and p99 (µs). */
export function summarize(samples) {
  const all = samples.flatMap((s) => s.latencies);
  const elapsedNs = samples.reduce((sum, s) => sum + s.elapsedNs, 0);
  const sorted = Float64Array.from(all).sort();
  return {
    calls: all.length,
    callsPerSec: all.length / (elapsedNs / 1e9),
    p50Us: percentile(sorted, 50) / 1000,
    p99Us: percentile(sorted, 99) / 1000,
  };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function median(values) {
  return percentile(Float64Array.from(values).sort(), 50);
}

/**
 * Minimal JSON-RPC-ish client over a raw `ws` socket: sends { id, data }, resolves on the reply with that id.
 * Its calls wait in a SequenceTable keyed by the id, as the SDK's do: a Map with an insert and a delete per
 * call would have V8 promote every call of this process (the load generator of every system) to the old
 * generation, and the baselines would pay for it.
 */
export class RawEchoClient {
  constructor(url) {
    this.pending = new SequenceTable(1024);
    this.nextId = 0;
    this.ws = new WebSocket(url, { perMessageDeflate: false });
    this.ws.on('upgrade', (res) => res.socket.setNoDelay(true));
    this.ws.on('message', (raw) => {
      const msg = JSON.parse(raw.toString());
      const resolve = this.pending.get(msg.id);
      if (!resolve) return;
      this.pending.delete(msg.id);
      resolve(msg.data);
    });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', resolve);
      this.ws.once('error', reject);
    });
  }

  call(data) {
    const id = ++this.nextId;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.ws.send(JSON.stringify({ id, data }));
    });
  }

  close() {
    this.ws.terminate();
  }
}

/** Prints rows (arrays of cells) as a left-aligned first column and right-aligned others. */
export function printTable(header, rows) {
  const all = [header, ...rows].map((r) => r.map(String));
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const fmt = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(fmt(all[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of all.slice(1)) console.log(fmt(r));
}

export const fixed = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
export const round = (n, digits = 2) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null);
