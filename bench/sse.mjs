// bench/sse: a worker's http() handler streams N (default 10,000) Server-Sent Events through flint-http
// as fast as the response stream takes them (res.sse(), awaiting 'drain' on res.stream whenever it asks
// to), then closes. This process fetches the route and measures time to first byte, time to the first
// event and events/s received (SSE frames parsed, `data:` events counted, ids checked in order).
// Baseline in the same run: a bare node:http server writing the same N frames (awaiting 'drain').
//
//   processes: this one (client) | engine child (flint-http) | http-worker child (sse)
//              this one (client) | bare node:http server child
//
// BENCH_SSE_RUNS (default 7) streams per system in alternating order (bare, Flint, Flint, bare, …)
// after one unrecorded warm-up stream each; one keep-alive connection per system (no-delay), reused by
// every run, so connection set-up is not in the figures. Reported: medians over the runs.
//
// Env: BENCH_SSE_EVENTS (10000), BENCH_SSE_RUNS (7), BENCH_CPU_PROF=<dir>, BENCH_STRICT=1 (fails only on
// broken streams: the issue sets no target for SSE).
import { Agent, get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { SSE_PATH } from './support/http-shared.mjs';
import { fixed, median, printTable, round } from './support/measure.mjs';
import { childExecArgv, request, startChild, stopChild } from './support/proc.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const envInt = (name, fallback) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};
const EVENTS = envInt('BENCH_SSE_EVENTS', 10_000);
const RUNS = envInt('BENCH_SSE_RUNS', 7);

const children = [];
const start = async (file, opts) => {
  const handle = await startChild(here(file), opts);
  children.push(handle);
  return handle;
};

/**
 * Streams `url` once: resolves with ms from the request to the response head (ttfbMs), to the first
 * complete event (firstEventMs) and to the end of the body (totalMs), and the events received.
 */
function stream(url, agent) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
    let ttfbMs;
    let firstEventMs;
    let events = 0;
    let expectId = 0;
    let pending = '';
    const req = get(url, { agent, headers: { accept: 'text/event-stream' } }, (res) => {
      ttfbMs = ms();
      if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.resume();
        return reject(new Error(`GET ${url}: ${res.statusCode} ${res.headers['content-type']}`));
      }
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        pending += chunk;
        let end = pending.indexOf('\n\n');
        let from = 0;
        while (end >= 0) {
          const frame = pending.slice(from, end);
          from = end + 2;
          end = pending.indexOf('\n\n', from);
          if (!frame.includes('data:')) continue;
          const id = frame.startsWith('id: ') ? Number(frame.slice(4, frame.indexOf('\n'))) : Number.NaN;
          if (id !== expectId) return req.destroy(new Error(`event ${events}: id ${id}, expected ${expectId}`));
          expectId++;
          if (events++ === 0) firstEventMs = ms();
        }
        pending = pending.slice(from);
      });
      res.once('end', () => resolve({ ttfbMs, firstEventMs, totalMs: ms(), events, leftover: pending.length }));
      res.once('error', reject);
    });
    req.once('socket', (socket) => socket.setNoDelay(true));
    req.once('error', reject);
  });
}

try {
  const bare = await start('./support/bare-http-server.mjs', { name: 'bare-http', execArgv: childExecArgv('bare-http') });
  const engine = await start('./support/engine-process.mjs', {
    name: 'engine',
    env: { BENCH_ENGINE_CONFIG: JSON.stringify({ modules: [{ name: 'flint-http', config: { port: 0 } }] }) },
    execArgv: childExecArgv('engine'),
  });
  const worker = await start('./support/http-worker.mjs', { name: 'http-worker', args: [engine.info.url, '1', 'sse'], execArgv: childExecArgv('http-worker') });
  const base = engine.info.listeners.find((l) => l.name === 'http')?.url;
  if (!base) throw new Error('the engine reports no http listener');

  const systems = [
    { name: 'bare', label: 'bare node:http', url: `${bare.info.url}${SSE_PATH}?n=${EVENTS}`, processes: [bare] },
    { name: 'flint', label: 'Flint (engine ← worker)', url: `${base}${SSE_PATH}?n=${EVENTS}`, processes: [engine, worker] },
  ];
  const cpuOf = async (processes) => Promise.all(processes.map(async (p) => (await request(p.child, { type: 'cpu' })).cpuMs));
  const runs = Object.fromEntries(systems.map((s) => [s.name, []]));
  const cpu = Object.fromEntries(systems.map((s) => [s.name, s.processes.map(() => 0)]));
  const agents = Object.fromEntries(systems.map((s) => [s.name, new Agent({ keepAlive: true, maxSockets: 1 })]));
  let broken = 0;
  const check = (s, r) => {
    if (r.events !== EVENTS || r.leftover !== 0) {
      broken++;
      console.error(`  ${s.name}: ${r.events} of ${EVENTS} events, ${r.leftover} bytes of an unterminated frame`);
    }
  };
  for (const s of systems) check(s, await stream(s.url, agents[s.name])); // warm-up
  process.stderr.write(`  sse: ${EVENTS} events, ${RUNS} runs:`);
  for (let i = 0; i < RUNS; i++) {
    for (const s of i % 2 === 0 ? systems : [...systems].reverse()) {
      const before = await cpuOf(s.processes);
      const r = await stream(s.url, agents[s.name]);
      const after = await cpuOf(s.processes);
      check(s, r);
      runs[s.name].push(r);
      after.forEach((ms, j) => {
        cpu[s.name][j] += ms - before[j];
      });
    }
    process.stderr.write(` ${i + 1}`);
  }
  process.stderr.write('\n');
  for (const a of Object.values(agents)) a.destroy();

  const summary = Object.fromEntries(
    systems.map((s) => {
      const rs = runs[s.name];
      return [
        s.name,
        {
          ttfbMs: median(rs.map((r) => r.ttfbMs)),
          firstEventMs: median(rs.map((r) => r.firstEventMs)),
          totalMs: median(rs.map((r) => r.totalMs)),
          eventsPerSec: median(rs.map((r) => (r.events / r.totalMs) * 1000)),
          bestEventsPerSec: Math.max(...rs.map((r) => (r.events / r.totalMs) * 1000)),
          // µs of CPU per event: [server or engine, worker]
          cpuUs: cpu[s.name].map((ms) => (ms * 1000) / (EVENTS * rs.length)),
        },
      ];
    }),
  );
  const { bare: b, flint: f } = summary;

  console.log(
    `\nbench/sse: one GET streaming ${EVENTS} SSE events (~${Buffer.byteLength('id: 9999\nevent: tick\ndata: {"i":9999,"text":"hello flint"}\n\n')} bytes each), ${RUNS} runs per system, alternating; medians`,
  );
  console.log('time to first byte = request → response head; first event = request → first complete event; events/s = events ÷ (request → end of body)\n');
  printTable(
    ['system', 'TTFB ms', 'first event ms', 'stream ms', 'events/s', 'best events/s', 'server CPU µs/event', 'worker CPU µs/event'],
    systems.map((s) => {
      const r = summary[s.name];
      return [
        s.label,
        fixed(r.ttfbMs, 2),
        fixed(r.firstEventMs, 2),
        fixed(r.totalMs, 1),
        fixed(r.eventsPerSec),
        fixed(r.bestEventsPerSec),
        fixed(r.cpuUs[0], 1),
        r.cpuUs[1] === undefined ? '-' : fixed(r.cpuUs[1], 1),
      ];
    }),
  );
  console.log(
    `\nFlint/bare: events/s ${fixed(f.eventsPerSec / b.eventsPerSec, 2)}, TTFB ${fixed(f.ttfbMs / b.ttfbMs, 1)}×, first event ${fixed(f.firstEventMs / b.firstEventMs, 1)}×`,
  );
  if (broken > 0) console.log(`${broken} stream(s) were incomplete`);
  const targets = [
    { name: 'time to first byte ≤ 2 × bare', value: f.ttfbMs / b.ttfbMs, limit: 2, met: f.ttfbMs / b.ttfbMs <= 2 },
    { name: 'events/s ≥ 0.6 × bare', value: f.eventsPerSec / b.eventsPerSec, limit: 0.6, met: f.eventsPerSec / b.eventsPerSec >= 0.6 },
  ];
  console.log('\ntargets:');
  for (const t of targets) console.log(`  ${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${fixed(t.value, 2)}`);

  const out = {
    bench: 'sse',
    events: EVENTS,
    runs: RUNS,
    systems: Object.fromEntries(
      Object.entries(summary).map(([name, r]) => [
        name,
        {
          ttfbMs: round(r.ttfbMs, 3),
          firstEventMs: round(r.firstEventMs, 3),
          totalMs: round(r.totalMs, 1),
          eventsPerSec: round(r.eventsPerSec, 0),
          cpuUsPerEvent: r.cpuUs.map((v) => round(v, 2)),
          eachRun: runs[name].map((x) => ({ ttfbMs: round(x.ttfbMs, 3), totalMs: round(x.totalMs, 1) })),
        },
      ]),
    ),
    ratio: {
      eventsPerSec: round(f.eventsPerSec / b.eventsPerSec, 3),
      ttfb: round(f.ttfbMs / b.ttfbMs, 2),
      firstEvent: round(f.firstEventMs / b.firstEventMs, 2),
    },
    broken,
    targets: targets.map((t) => ({ name: t.name, value: round(t.value, 3), limit: t.limit, met: t.met })),
  };
  console.log(`\n${JSON.stringify(out)}`);
  if (process.env.BENCH_STRICT === '1' && (broken > 0 || targets.some((t) => !t.met))) process.exitCode = 1;
} catch (err) {
  console.error(`bench/sse failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  await Promise.all(children.reverse().map((c) => stopChild(c)));
}
