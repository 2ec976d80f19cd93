// bench/stream: flint-stream fan-out and idle connections, against a bare `ws` broadcast server measured in the
// same run.
//
// Fan-out: one publisher, BENCH_STREAM_SUBSCRIBERS (1,000) WebSocket subscribers of one group, split over 2
// processes (stream-subscribers.mjs; each socket sends a join frame and waits for its sync frame).
//   Flint:    publisher worker (@flint/sdk, stream::set of one item) → engine (flint-stream, kv in_memory) → subscribers
//   baseline: publisher (`ws`)                                       → ws-broadcast-server.mjs             → subscribers
//   processes: this one | server child (engine or broadcast server) | publisher child | 2 subscriber children
// Each rate of BENCH_STREAM_RATES (default "20,100,1000,max": publishes per second; `max`: as fast as the window
// lets; 100/s is the one per 10 ms, 20/s a rate a 2-core machine delivers without queueing, for the latency
// of the fan-out itself) is measured for BENCH_SECONDS (5) per system, split into BENCH_ROUNDS (4) rounds whose
// order alternates (baseline, Flint, then Flint, baseline, …), after BENCH_WARMUP_MS (1000) of publishing before
// each system's first round at a rate and 300 ms before the others. Every phase has at most
// BENCH_STREAM_IN_FLIGHT (8) messages that some subscriber has not received yet (an end-to-end window: the
// subscriber processes report how far all their sockets got, this process forwards it to the publisher). A
// window on the publisher's answers alone would not do: both servers answer once the frames are handed to the
// sockets, so a publisher faster than the subscribers would grow the servers' socket buffers without bound (and
// Flint would rightly drop the subscribers with 1013).
// So `1000` is "up to 1,000/s": when the system cannot deliver that, it runs at what it can (see publishes/s).
//   Delivered messages/s: frames received by all subscribers within the window (receive time), per second.
//   Latency: arrival at the subscriber − publish time at the publisher (process.hrtime, CLOCK_MONOTONIC, one
//   clock for every process of the machine), over every frame received in the window.
//   CPU µs per delivered message: CPU time of each process over the window ÷ frames delivered in it.
//   Checks (a failed one fails the bench): every socket receives frames in every window, each socket gets the
//   seqs of a phase in order without gaps or repeats, every message of a phase reaches every socket before the
//   next phase, no subscriber socket closes (e.g. 1013), and the engine's counters (engine::streams::stats:
//   messages_out, slow_disconnects) agree with what the subscribers counted.
//
// Idle: BENCH_STREAM_IDLE (10,000) sockets that each join one group, from 4 client processes, to a fresh engine
// (flint-stream) and to a fresh broadcast server (same join frame; it keeps a Set per group), each started with
// --expose-gc: RSS after a GC with all of them joined, minus RSS before the first, per connection.
//
// Engine config: {"modules":[{"name":"flint-stream","config":{"port":0,"max_connections":20000}}]}. The open-file
// limit (`ulimit -n`) must allow the idle connections in one process: when it is lower, they are scaled down
// (printed).
//
// Env: BENCH_SECONDS (5), BENCH_ROUNDS (4), BENCH_WARMUP_MS (1000), BENCH_STREAM_SUBSCRIBERS (1000),
//      BENCH_STREAM_IDLE (10000), BENCH_STREAM_RATES ("20,100,1000,max"), BENCH_STREAM_IN_FLIGHT (8),
//      BENCH_CPU_PROF=<dir> (profiles: engine-fanout, engine-idle, ws-broadcast-fanout, ws-broadcast-idle,
//      flint-publisher, bare-publisher, flint-subscribers-0, …), BENCH_STRICT=1.
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { count, merge, percentileOf } from './support/latency-histogram.mjs';
import { benchSeconds, fixed, printTable, round } from './support/measure.mjs';
import { childExecArgv, request, sleep, startChild, stopChild } from './support/proc.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const envInt = (name, fallback) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};
const seconds = benchSeconds(5);
const rounds = envInt('BENCH_ROUNDS', 4);
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 1000);
let SUBSCRIBERS = envInt('BENCH_STREAM_SUBSCRIBERS', 1000);
let IDLE = envInt('BENCH_STREAM_IDLE', 10_000);
const IN_FLIGHT = envInt('BENCH_STREAM_IN_FLIGHT', 8);
const RATES = (process.env.BENCH_STREAM_RATES ?? '20,100,1000,max')
  .split(',')
  .map((r) => r.trim())
  .filter(Boolean)
  .map((r) => (r === 'max' ? 0 : Number(r)))
  .filter((r) => Number.isFinite(r) && r >= 0);
const SUB_PROCS = 2;
const IDLE_PROCS = 4;
const STREAM = 'bench';
const GROUP = 'fanout';
const ITEM = 'item';
const IDLE_GROUP = 'idle';
const KiB = 1024;
const MiB = 1024 * 1024;
const rateLabel = (rate) => (rate === 0 ? 'max' : `${rate}/s`);
const saturated = (rate, s) => rate > 0 && s.publishesPerSec < 0.9 * rate;

// The open-file limit holds for each process: the servers hold every connection of a part in one process.
const notes = [];
let fdLimit = Number.POSITIVE_INFINITY;
try {
  const out = execSync('ulimit -n', { shell: '/bin/sh', encoding: 'utf8' }).trim();
  if (out !== 'unlimited') fdLimit = Number(out);
} catch {}
if (Number.isFinite(fdLimit)) {
  const room = fdLimit - 256;
  if (IDLE > room) {
    notes.push(`open-file limit ${fdLimit}: idle connections scaled down from ${IDLE} to ${Math.max(100, Math.floor(room / 100) * 100)}`);
    IDLE = Math.max(100, Math.floor(room / 100) * 100);
  }
  if (SUBSCRIBERS > room) {
    notes.push(`open-file limit ${fdLimit}: subscribers scaled down from ${SUBSCRIBERS} to ${Math.max(100, Math.floor(room / 100) * 100)}`);
    SUBSCRIBERS = Math.max(100, Math.floor(room / 100) * 100);
  }
}
const ENGINE_CONFIG = { modules: [{ name: 'flint-stream', config: { port: 0, max_connections: Math.max(20_000, IDLE + SUBSCRIBERS + 100) } }] };

const children = [];
const start = async (file, opts) => {
  const handle = await startChild(here(file), opts);
  children.push(handle);
  return handle;
};
const stop = async (handles, graceMs) => {
  await Promise.all(
    handles.map(async (h) => {
      await stopChild(h, graceMs);
      const i = children.indexOf(h);
      if (i >= 0) children.splice(i, 1);
    }),
  );
};
const cpuMs = async (h) => (await request(h.child, { type: 'cpu' })).cpuMs;
const split = (total, parts) => Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0)).filter((n) => n > 0);

/** The server's counters: Flint's engine::streams::stats totals, or the broadcast server's own. */
async function serverStats(system, server) {
  if (system === 'flint') return (await request(server.child, { type: 'invoke', function_id: 'engine::streams::stats', payload: {} })).result.totals;
  return request(server.child, { type: 'stats' });
}

/** Starts a server child for `system` ('flint' | 'baseline'); returns it with the URL subscribers connect to. */
async function startServer(system, role, exposeGc) {
  const flint = system === 'flint';
  const name = `${flint ? 'engine' : 'ws-broadcast'}-${role}`;
  const server = await start(flint ? './support/engine-process.mjs' : './support/ws-broadcast-server.mjs', {
    name,
    env: flint ? { BENCH_ENGINE_CONFIG: JSON.stringify(ENGINE_CONFIG) } : {},
    execArgv: childExecArgv(name, { exposeGc }),
  });
  const streamUrl = flint ? server.info.listeners?.find((l) => l.name === 'stream')?.url : server.info.url;
  if (!streamUrl) throw new Error(`${name} lists no stream listener: ${JSON.stringify(server.info.listeners)}`);
  return { server, streamUrl };
}

/** Subscriber children for `group`, connected and joined. */
async function startSubscribers(label, url, total, procs, group, concurrency) {
  const subs = [];
  for (const [p, n] of split(total, procs).entries()) {
    subs.push(
      await start('./support/stream-subscribers.mjs', {
        name: `${label}-${p}`,
        args: [url, String(n), STREAM, group],
        execArgv: childExecArgv(`${label}-${p}`),
      }),
    );
  }
  const connected = await Promise.all(subs.map((s) => request(s.child, { type: 'connect', concurrency }, 300_000)));
  const joined = connected.reduce((a, c) => a + c.connected, 0);
  if (joined !== total) throw new Error(`${label}: ${joined} of ${total} sockets joined`);
  return { subs, connectMs: Math.max(...connected.map((c) => c.ms)) };
}

let nextPhase = 1;

/** A fan-out system: its server, publisher and subscribers, and the progress relay subscribers → publisher. */
async function startFanout(system) {
  const { server, streamUrl } = await startServer(system, 'fanout', false);
  const { subs, connectMs } = await startSubscribers(`${system === 'flint' ? 'flint' : 'bare'}-subscribers`, streamUrl, SUBSCRIBERS, SUB_PROCS, GROUP, 50);
  const publisher = await start('./support/stream-publisher.mjs', {
    name: `${system === 'flint' ? 'flint' : 'bare'}-publisher`,
    args: [system === 'flint' ? 'flint' : 'bare', server.info.url, STREAM, GROUP, ITEM],
    execArgv: childExecArgv(`${system === 'flint' ? 'flint' : 'bare'}-publisher`),
  });
  const progress = subs.map(() => ({ phase: -1, seq: 0 }));
  let forwarded = { phase: -1, seq: 0 };
  subs.forEach((s, i) => {
    s.child.on('message', (m) => {
      if (m?.type !== 'progress') return;
      progress[i] = { phase: m.phase, seq: m.seq };
      const min = Math.min(...progress.map((p) => (p.phase === m.phase ? p.seq : 0)));
      if (m.phase !== forwarded.phase || min > forwarded.seq) {
        forwarded = { phase: m.phase, seq: min };
        publisher.child.send({ type: 'progress', phase: m.phase, seq: min });
      }
    });
  });
  const stats = await serverStats(system, server);
  if (stats.subscriptions !== SUBSCRIBERS) throw new Error(`${system}: the server counts ${stats.subscriptions} subscriptions, expected ${SUBSCRIBERS}`);
  return { name: system, server, subs, publisher, progress, connectMs };
}

async function subscriberStatus(sys) {
  return Promise.all(sys.subs.map((s) => request(s.child, { type: 'status' })));
}

/** Throws when a subscriber socket closed or saw seqs out of order. */
async function checkSubscribers(sys) {
  const status = await subscriberStatus(sys);
  const closed = status.flatMap((s) => s.closes);
  if (closed.length > 0) {
    const n = status.reduce((a, s) => a + s.closed, 0);
    const slow = closed.some((c) => c.code === 1013) ? ' (1013: the server dropped them as too slow)' : '';
    throw new Error(`${sys.name}: ${n} subscriber sockets closed${slow}; first: ${JSON.stringify(closed[0])}`);
  }
  const orderErrors = status.reduce((a, s) => a + s.orderErrors, 0);
  if (orderErrors > 0) throw new Error(`${sys.name}: ${orderErrors} frames out of order; first: ${status.find((s) => s.firstOrderError).firstOrderError}`);
  return status;
}

async function waitDelivered(sys, phase, last, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!sys.progress.every((p) => p.phase === phase && p.seq >= last)) {
    if (Date.now() > deadline) {
      await checkSubscribers(sys);
      throw new Error(`${sys.name}: messages lost: ${last} published in phase ${phase}, the subscriber processes have all of ${JSON.stringify(sys.progress)}`);
    }
    await sleep(10);
  }
}

/** One measured phase of `sys` at `rate` (0: max). */
async function runPhase(sys, rate, warmMs) {
  const phase = nextPhase++;
  const procs = [sys.server, sys.publisher, ...sys.subs];
  await request(sys.publisher.child, { type: 'run', phase, rate, window: IN_FLIGHT });
  await sleep(warmMs);
  const cpuBefore = await Promise.all(procs.map(cpuMs));
  const pubBefore = await request(sys.publisher.child, { type: 'mark' });
  await Promise.all(sys.subs.map((s) => request(s.child, { type: 'start' })));
  await sleep((seconds * 1000) / rounds);
  const stops = await Promise.all(sys.subs.map((s) => request(s.child, { type: 'stop' })));
  const pubAfter = await request(sys.publisher.child, { type: 'mark' });
  const cpuAfter = await Promise.all(procs.map(cpuMs));
  const halted = await request(sys.publisher.child, { type: 'halt' });
  if (halted.errors > 0) throw new Error(`${sys.name} at ${rateLabel(rate)}: ${halted.errors} publishes failed; first: ${halted.firstError}`);
  if (halted.last === 0) throw new Error(`${sys.name} at ${rateLabel(rate)}: nothing was published`);
  await waitDelivered(sys, phase, halted.last);
  await checkSubscribers(sys);
  const frames = stops.reduce((a, s) => a + s.frames, 0);
  if (frames === 0) throw new Error(`${sys.name} at ${rateLabel(rate)}: no frame delivered in the window`);
  const none = stops.reduce((a, s) => a + s.clientsWithNone, 0);
  if (none > 0) throw new Error(`${sys.name} at ${rateLabel(rate)}: ${none} subscribers received nothing in the window`);
  const cpu = cpuAfter.map((v, i) => v - cpuBefore[i]);
  return {
    frames,
    windowMs: stops.reduce((a, s) => a + s.elapsedMs, 0) / stops.length,
    published: pubAfter.published - pubBefore.published,
    histogram: merge(stops.map((s) => s.histogram)),
    cpuMs: { server: cpu[0], publisher: cpu[1], subscribers: cpu.slice(2).reduce((a, b) => a + b, 0) },
    minPerClient: Math.min(...stops.map((s) => s.minPerClient)),
    maxPerClient: Math.max(...stops.map((s) => s.maxPerClient)),
  };
}

function combine(samples) {
  const frames = samples.reduce((a, s) => a + s.frames, 0);
  const windowMs = samples.reduce((a, s) => a + s.windowMs, 0);
  const published = samples.reduce((a, s) => a + s.published, 0);
  const histogram = merge(samples.map((s) => s.histogram));
  const cpu = (k) => samples.reduce((a, s) => a + s.cpuMs[k], 0);
  const perMsg = (ms) => (ms * 1000) / frames;
  return {
    frames,
    windowMs,
    publishesPerSec: published / (windowMs / 1000),
    deliveredPerSec: frames / (windowMs / 1000),
    latencies: count(histogram),
    p50Ms: percentileOf(histogram, 50) / 1000,
    p99Ms: percentileOf(histogram, 99) / 1000,
    cpuUs: { server: perMsg(cpu('server')), publisher: perMsg(cpu('publisher')), subscribers: perMsg(cpu('subscribers')) },
    serverCpuShare: cpu('server') / windowMs,
    minPerClient: Math.min(...samples.map((s) => s.minPerClient)),
    maxPerClient: Math.max(...samples.map((s) => s.maxPerClient)),
  };
}

/** Idle connections to a fresh server of `system`: RSS and heap growth per connection, after a GC. */
async function idle(system) {
  const started = [];
  try {
    const { server, streamUrl } = await startServer(system, 'idle', true);
    started.push(server);
    const label = `${system === 'flint' ? 'flint' : 'bare'}-idle-clients`;
    const before = await request(server.child, { type: 'mem' });
    const { subs, connectMs } = await startSubscribers(label, streamUrl, IDLE, IDLE_PROCS, IDLE_GROUP, 100);
    started.push(...subs);
    await sleep(500);
    const after = await request(server.child, { type: 'mem' });
    const stats = await serverStats(system, server);
    if (stats.connections !== IDLE || stats.subscriptions !== IDLE)
      throw new Error(`${system} idle: the server counts ${stats.connections} connections and ${stats.subscriptions} subscriptions, expected ${IDLE}`);
    await checkSubscribers({ name: `${system} idle`, subs });
    return {
      connections: IDLE,
      connectMs,
      gc: after.gc,
      rssBeforeMiB: before.rss / MiB,
      rssAfterMiB: after.rss / MiB,
      rssPerConnKiB: (after.rss - before.rss) / IDLE / KiB,
      heapPerConnKiB: (after.heapUsed + after.external - before.heapUsed - before.external) / IDLE / KiB,
    };
  } finally {
    await stop(started.slice(1), 15_000);
    await stop(started.slice(0, 1), 15_000);
  }
}

try {
  if (RATES.length === 0) throw new Error('BENCH_STREAM_RATES lists no rate');
  for (const n of notes) process.stderr.write(`  note: ${n}\n`);

  // Fan-out: both systems up at once (the idle one's processes only wait), measured in alternating rounds.
  process.stderr.write(`  stream fan-out: ${SUBSCRIBERS} subscribers, starting …`);
  const baseline = await startFanout('baseline');
  const flint = await startFanout('flint');
  process.stderr.write(` connected (baseline ${fixed(baseline.connectMs)} ms, Flint ${fixed(flint.connectMs)} ms)\n`);
  const systems = [baseline, flint];
  const results = [];
  for (const rate of RATES) {
    process.stderr.write(`  fan-out at ${rateLabel(rate)}, ${rounds} round${rounds === 1 ? '' : 's'}:`);
    const samples = { baseline: [], flint: [] };
    for (let roundNo = 0; roundNo < rounds; roundNo++) {
      for (const sys of roundNo % 2 === 0 ? systems : [...systems].reverse()) {
        samples[sys.name].push(await runPhase(sys, rate, samples[sys.name].length === 0 ? warmupMs : 300));
      }
      process.stderr.write(` ${roundNo + 1}`);
    }
    process.stderr.write('\n');
    const f = combine(samples.flint);
    const b = combine(samples.baseline);
    results.push({ rate, flint: f, baseline: b, ratio: f.deliveredPerSec / b.deliveredPerSec });
  }

  // The engine's own counters against what the subscribers counted (syncs included), and back-pressure drops.
  const engineStats = await serverStats('flint', flint.server);
  const bareStats = await serverStats('baseline', baseline.server);
  const received = async (sys) => (await checkSubscribers(sys)).reduce((a, s) => a + s.totalFrames, 0);
  const flintReceived = await received(flint);
  const bareReceived = await received(baseline);
  if (engineStats.messages_out !== flintReceived)
    throw new Error(`Flint: engine::streams::stats counts ${engineStats.messages_out} messages out, the subscribers received ${flintReceived}`);
  if (bareStats.messages_out !== bareReceived)
    throw new Error(`baseline: the server sent ${bareStats.messages_out} messages, the subscribers received ${bareReceived}`);
  if (engineStats.slow_disconnects > 0) throw new Error(`Flint dropped ${engineStats.slow_disconnects} subscribers as too slow (1013) during the bench`);
  const frameBytes = engineStats.bytes_out / engineStats.messages_out;
  for (const sys of systems) await stop([sys.publisher, ...sys.subs], 10_000);
  await stop([flint.server, baseline.server], 10_000);

  // Idle connections: fresh processes, baseline first.
  process.stderr.write(`  stream idle: ${IDLE} connections, baseline …`);
  const idleBare = await idle('baseline');
  process.stderr.write(' Flint …');
  const idleFlint = await idle('flint');
  process.stderr.write(' done\n');

  console.log(
    `\nbench/stream: fan-out of one item's updates to ${SUBSCRIBERS} WebSocket subscribers of one group (${SUB_PROCS} client processes), ${seconds} s per rate and system in ${rounds} alternating rounds, ${warmupMs} ms warm-up; at most ${IN_FLIGHT} messages not yet received by every subscriber`,
  );
  console.log(
    'Flint = publisher worker → stream::set → engine (flint-stream, kv in_memory) → subscribers; baseline = ws publisher → bare ws broadcast server → subscribers',
  );
  console.log(`frames of ${fixed(frameBytes)} bytes; delivered = frames received by all subscribers per second; latency = publish → arrival (ms)\n`);
  printTable(
    [
      'rate',
      'Flint pub/s',
      'base pub/s',
      'Flint delivered/s',
      'base delivered/s',
      'ratio',
      'Flint p50',
      'Flint p99',
      'base p50',
      'base p99',
      'Flint server CPU',
      'base server CPU',
    ],
    results.map((r) => [
      rateLabel(r.rate),
      `${fixed(r.flint.publishesPerSec)}${saturated(r.rate, r.flint) ? '*' : ''}`,
      `${fixed(r.baseline.publishesPerSec)}${saturated(r.rate, r.baseline) ? '*' : ''}`,
      fixed(r.flint.deliveredPerSec),
      fixed(r.baseline.deliveredPerSec),
      fixed(r.ratio, 2),
      fixed(r.flint.p50Ms, 2),
      fixed(r.flint.p99Ms, 2),
      fixed(r.baseline.p50Ms, 2),
      fixed(r.baseline.p99Ms, 2),
      `${fixed(r.flint.serverCpuShare * 100)}%`,
      `${fixed(r.baseline.serverCpuShare * 100)}%`,
    ]),
  );
  console.log('(server CPU: the engine or the broadcast server, CPU time over the window as a share of one core)');
  if (results.some((r) => saturated(r.rate, r.flint) || saturated(r.rate, r.baseline)))
    console.log(
      `(* below 90% of the asked rate: the machine delivers no more, so the window of ${IN_FLIGHT} messages was full and latency is mostly waiting in it)`,
    );

  console.log('\nCPU µs per delivered message (over the measured windows)\n');
  const cpuRows = [];
  for (const r of results) {
    for (const [label, s] of [
      ['baseline (ws publisher → bare ws broadcast)', r.baseline],
      ['Flint (worker → engine → subscribers)', r.flint],
    ]) {
      const { server, publisher, subscribers } = s.cpuUs;
      cpuRows.push([rateLabel(r.rate), label, fixed(server, 2), fixed(publisher, 2), fixed(subscribers, 2), fixed(server + publisher + subscribers, 2)]);
    }
    cpuRows.push([rateLabel(r.rate), 'Flint engine / bare server', fixed(r.flint.cpuUs.server / r.baseline.cpuUs.server, 2), '', '', '']);
  }
  printTable(['rate', 'system', 'server', 'publisher', 'subscribers', 'total'], cpuRows);
  console.log(
    `\nengine::streams::stats after the fan-out: ${engineStats.messages_out} messages out (the subscribers received ${flintReceived}), ${engineStats.slow_disconnects} slow disconnects (1013), ${engineStats.buffered_bytes} bytes buffered`,
  );

  console.log(`\nidle: ${IDLE} WebSocket connections, each joined to one group (${IDLE_PROCS} client processes); server memory after a GC\n`);
  printTable(
    ['system', 'connect ms', 'RSS before MiB', 'RSS after MiB', 'RSS KiB/conn', 'heap+external KiB/conn'],
    [
      ['baseline (bare ws, Set per group)', idleBare],
      ['Flint (flint-stream)', idleFlint],
    ].map(([label, m]) => [
      label,
      fixed(m.connectMs),
      fixed(m.rssBeforeMiB, 1),
      fixed(m.rssAfterMiB, 1),
      fixed(m.rssPerConnKiB, 2),
      fixed(m.heapPerConnKiB, 2),
    ]),
  );
  if (!idleFlint.gc || !idleBare.gc) console.log('(no global.gc in a server process: figures include garbage)');
  for (const n of notes) console.log(`note: ${n}`);

  const targets = [];
  const top = results.find((r) => r.rate === 0) ?? results[results.length - 1];
  targets.push({
    name: `delivered messages/s at ${rateLabel(top.rate)} ≥ 0.5 × bare ws broadcast`,
    value: top.ratio,
    limit: 0.5,
    met: top.ratio >= 0.5,
  });
  targets.push({
    name: `engine RSS per idle connection ≤ 20 KiB (bare ws: ${fixed(idleBare.rssPerConnKiB, 2)} KiB)`,
    value: idleFlint.rssPerConnKiB,
    limit: 20,
    met: idleFlint.rssPerConnKiB <= 20,
  });
  console.log('\ntargets:');
  for (const t of targets) console.log(`  ${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${fixed(t.value, 2)}`);

  const stats = (s) => ({
    publishesPerSec: round(s.publishesPerSec, 0),
    deliveredPerSec: round(s.deliveredPerSec, 0),
    frames: s.frames,
    p50Ms: round(s.p50Ms, 3),
    p99Ms: round(s.p99Ms, 3),
    cpuUsPerMessage: { server: round(s.cpuUs.server, 3), publisher: round(s.cpuUs.publisher, 3), subscribers: round(s.cpuUs.subscribers, 3) },
    serverCpuShare: round(s.serverCpuShare, 3),
  });
  const idleOut = (m) => ({
    connections: m.connections,
    connectMs: round(m.connectMs, 0),
    rssBeforeMiB: round(m.rssBeforeMiB, 1),
    rssAfterMiB: round(m.rssAfterMiB, 1),
    rssPerConnKiB: round(m.rssPerConnKiB, 2),
    heapPerConnKiB: round(m.heapPerConnKiB, 2),
  });
  const summary = {
    bench: 'stream',
    seconds,
    rounds,
    warmupMs,
    subscribers: SUBSCRIBERS,
    inFlight: IN_FLIGHT,
    frameBytes: round(frameBytes, 0),
    fanout: results.map((r) => ({ rate: rateLabel(r.rate), flint: stats(r.flint), baseline: stats(r.baseline), ratio: round(r.ratio, 3) })),
    engineStats: { messages_out: engineStats.messages_out, slow_disconnects: engineStats.slow_disconnects, buffered_bytes: engineStats.buffered_bytes },
    idle: { flint: idleOut(idleFlint), baseline: idleOut(idleBare) },
    notes,
    targets: targets.map((t) => ({ name: t.name, value: round(t.value, 3), limit: t.limit, met: t.met })),
  };
  console.log(`\n${JSON.stringify(summary)}`);
  if (process.env.BENCH_STRICT === '1' && targets.some((t) => !t.met)) process.exitCode = 1;
} catch (err) {
  console.error(`bench/stream failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  await Promise.all(children.reverse().map((c) => stopChild(c, 10_000)));
}
