// bench/trace-store: the span store's bound under load. An engine with flint-observability (memory
// exporter, memory_max_spans 10,000) takes 1,000,000 spans sent as SDK telemetry (`OTLP` frames of
// OTLP/JSON on the bridge's /otel path, 1,000 spans a frame, one trace per span: the trace index's
// worst case). After every 100,000 spans the engine's heap and RSS are read after a GC; the RSS must stay
// flat (the target: RSS at 1,000,000 within 10% of RSS at 200,000). Also prints the engine's CPU per
// span ingested (JSON parse, checks, store) and what engine::health::check says the store holds.
//
//   processes: this one (telemetry sender, a @flint/sdk worker for the health check) | engine child
//
// Env: BENCH_TRACE_SPANS (1000000), BENCH_STRICT=1.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { registerWorker } from '@flint/sdk';
import WebSocket from 'ws';
import { fixed, printTable } from './support/measure.mjs';
import { childExecArgv, request, startChild, stopChild } from './support/proc.mjs';
import { procCpuMs } from './support/redis.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const TOTAL = Math.max(100_000, Math.floor(Number(process.env.BENCH_TRACE_SPANS ?? 1_000_000)) || 1_000_000);
const PER_FRAME = 1000;
const STEP = 100_000;

const engine = await startChild(here('./support/engine-process.mjs'), {
  name: 'engine',
  execArgv: childExecArgv('engine', { exposeGc: true }),
  env: {
    BENCH_ENGINE_CONFIG: JSON.stringify({
      modules: [{ name: 'flint-observability', config: { enabled: true, exporter: 'memory', memory_max_spans: 10_000 } }],
    }),
  },
});
const pid = engine.info.pid;
const ws = new WebSocket(`${engine.info.url}/otel`);
await new Promise((resolve, reject) => {
  ws.once('open', resolve);
  ws.once('error', reject);
});

const resource = { attributes: [{ key: 'service.name', value: { stringValue: 'bench-worker' } }] };
/** One frame of PER_FRAME spans, each of its own trace, shaped like a worker's handler span. */
function frame(first) {
  const now = Date.now() * 1e6;
  const spans = [];
  for (let i = 0; i < PER_FRAME; i++) {
    spans.push({
      traceId: randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
      parentSpanId: randomBytes(8).toString('hex'),
      name: `handle bench::fn-${(first + i) % 50}`,
      kind: 2,
      startTimeUnixNano: String(now),
      endTimeUnixNano: String(now + 250_000),
      attributes: [
        { key: 'function_id', value: { stringValue: `bench::fn-${(first + i) % 50}` } },
        { key: 'http.route', value: { stringValue: '/orders/:id' } },
      ],
      status: { code: 1 },
    });
  }
  return Buffer.from(`OTLP${JSON.stringify({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: '@flint/sdk' }, spans }] }] })}`);
}
const send = (buf) => new Promise((resolve, reject) => ws.send(buf, { binary: true }, (err) => (err ? reject(err) : resolve())));

const worker = registerWorker(engine.info.url, { workerName: 'trace-store-bench', log: { warn() {}, error() {}, debug() {} } });
await worker.waitConnected();
const health = async () => (await worker.trigger({ function_id: 'engine::health::check', payload: {} })).components.traces.details.store;
// The frames are taken in order on one socket: a health call answered after them has seen them all.
const settled = async () => {
  await new Promise((r) => setTimeout(r, 50));
  return health();
};

const rows = [];
const mem = () => request(engine.child, { type: 'mem' });
const base = await mem();
rows.push(['0', fixed(base.heapUsed / 2 ** 20, 1), fixed(base.rss / 2 ** 20, 1), '0', '', '']);
let sent = 0;
let cpuSpentMs = 0;
const byStep = new Map();
while (sent < TOTAL) {
  // Frames are built before the CPU window opens: only the engine's work is timed.
  const frames = [];
  for (let i = 0; i < STEP / PER_FRAME; i++) frames.push(frame(sent + i * PER_FRAME));
  const cpu0 = await procCpuMs(pid);
  for (const f of frames) await send(f);
  const store = await settled();
  cpuSpentMs += (await procCpuMs(pid)) - cpu0;
  sent += STEP;
  const m = await mem();
  byStep.set(sent, m.rss);
  rows.push([
    sent.toLocaleString('en-US'),
    fixed(m.heapUsed / 2 ** 20, 1),
    fixed(m.rss / 2 ** 20, 1),
    String(store.spans),
    String(store.dropped_by_count),
    fixed((cpuSpentMs * 1000) / sent, 2),
  ]);
}
printTable(['spans sent', 'heap MiB (after GC)', 'RSS MiB', 'spans held', 'dropped by count', 'engine CPU µs/span'], rows);

const early = byStep.get(200_000) ?? byStep.get(STEP);
const last = byStep.get(sent);
const growth = (last - early) / early;
const met = growth <= 0.1;
console.log(
  `\ntarget: RSS flat while 1,000,000 spans pass a store capped at 10,000 (RSS at ${sent.toLocaleString('en-US')} within 10% of RSS at 200,000): ${fixed(growth * 100, 1)}% — ${met ? 'met' : 'MISSED'}`,
);

ws.close();
await worker.shutdown();
await stopChild(engine);
console.log(
  JSON.stringify({
    bench: 'trace-store',
    spans: sent,
    rss_mib_at_200k: fixed(early / 2 ** 20, 1),
    rss_mib_at_end: fixed(last / 2 ** 20, 1),
    rss_growth: Number(growth.toFixed(3)),
    engine_cpu_us_per_span: Number(((cpuSpentMs * 1000) / sent).toFixed(2)),
    met,
  }),
);
if (!met && process.env.BENCH_STRICT === '1') process.exit(1);
