// bench/cluster: a call forwarded between two engines of a cluster (caller on engine A → NATS → engine B →
// echo worker on B, and back) against a local call on engine A and against a bare NATS request/reply
// between two processes, all three measured in the same run with the same closed-loop driver.
//
//   local:  this one (caller worker) | engine-a child | echo-worker-a child          (bench::echo-local)
//   remote: this one (caller worker) | engine-a child | NATS | engine-b child | echo-worker-b child   (bench::echo-remote)
//   bare:   this one (nats client, nc.request) | NATS | nats-echo child (subscribes and responds)
//
// Engines A and B each run in their own process with `modules: []` (the core alone, which serves worker →
// worker calls) and `cluster: { transport: 'nats', name: 'bench-<random>', node_id: 'bench-a' | 'bench-b',
// heartbeat_ms: 1000, expire_ms: 5000 }`: a cluster name of its own per run, so other clusters on the same
// NATS server (or an earlier run's engines) are never part of it. The local call goes through engine A, the
// very engine the remote call starts from (cluster on), with the same caller: the difference between the two
// is the forwarding alone, not a different engine config. Both echo workers are the same code
// (support/cluster-echo-worker.mjs) under different function ids, since a function that a worker of engine A
// provides is always run on A. The bare baseline uses a subject outside the cluster's (`flint-bench.<random>.echo`),
// the same JSON payload (encoded and decoded by this process; the responder parses and re-serialises it, like
// the bare ws echo of bench/invoke) and the same in-flight levels.
//
// Each level measures every system for BENCH_SECONDS in total, split into BENCH_ROUNDS rounds whose order
// alternates (bare, local, remote, then remote, local, bare, …); each system warms up for BENCH_WARMUP_MS
// before its first round at a level and for 200 ms before the others. CPU time per call of every process on
// the path (the NATS server's from /proc when it runs on this machine).
//
// Targets (the issue's), at every level: remote calls/s ≥ 0.5 × local calls/s, and
// remote p50 ≤ local p50 + 1.5 × bare NATS p50.
//
// With BENCH_CLUSTER_TRANSPORT=redis the engines' cluster runs on Redis instead (BENCH_REDIS_URL); the bare
// baseline stays NATS request/reply, and the broker column shows redis-server for the remote call.
//
// Without a reachable NATS server (or the `nats` client), or Redis when the cluster runs on it, the bench
// prints why it is skipped and exits 0 (1 with BENCH_STRICT=1).
//
// Env: BENCH_SECONDS (5), BENCH_ROUNDS (5), BENCH_WARMUP_MS (1000), BENCH_LEVELS (default "1,16,64"),
//      BENCH_NATS_URL (nats://127.0.0.1:4222), BENCH_CLUSTER_TRANSPORT (nats | redis),
//      BENCH_REDIS_URL (redis://127.0.0.1:6379), BENCH_CPU_PROF=<dir> (profile the child processes),
//      BENCH_STRICT=1 (exit 1 when a target is missed or the bench is skipped).
import { deepStrictEqual } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { registerWorker } from '@flint/sdk';
import { benchSeconds, closedLoop, fixed, printTable, round, summarize } from './support/measure.mjs';
import { childExecArgv, request, startChild, stopChild } from './support/proc.mjs';
import { openRedis, procCpuMs, redactUrl, redisServerPid } from './support/redis.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const seconds = benchSeconds(5);
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const rounds = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 5)) || 1);
const levels = (process.env.BENCH_LEVELS ?? '1,16,64')
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TRANSPORT = process.env.BENCH_CLUSTER_TRANSPORT ?? 'nats';
if (TRANSPORT !== 'nats' && TRANSPORT !== 'redis') {
  console.error(`bench/cluster: BENCH_CLUSTER_TRANSPORT is ${TRANSPORT}; it takes nats or redis`);
  process.exit(2);
}
/** The cluster transport's name and server, for the output. */
const KIND = TRANSPORT === 'nats' ? 'NATS' : 'Redis';
const STRICT = process.env.BENCH_STRICT === '1';
const tag = randomBytes(4).toString('hex');
const CLUSTER = `bench-${tag}`;
const NODE_A = 'bench-a';
const NODE_B = 'bench-b';
const SUBJECT = `flint-bench.${tag}.echo`;
const LOCAL_ID = 'bench::echo-local';
const REMOTE_ID = 'bench::echo-remote';
const payload = { text: 'hello flint', n: 42, ok: true, tags: ['a', 'b'] };
const THROUGHPUT_TARGET = 0.5;
const P50_NATS_FACTOR = 1.5;
const shownUrl = NATS_URL.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const children = [];
const callers = [];
let nc;

const start = async (file, opts) => {
  const handle = await startChild(here(file), opts);
  children.push(handle);
  return handle;
};

function skip(reason) {
  console.log(`bench/cluster: skipped: ${reason}`);
  console.log(JSON.stringify({ bench: 'cluster', skipped: reason }));
  if (STRICT) process.exitCode = 1;
}

/** A bare NATS connection (the baseline's client), or `{ reason }` when the client or the server is missing. */
async function openNats() {
  let connect;
  try {
    ({ connect } = await import('nats'));
  } catch (err) {
    return { reason: `the nats client cannot be loaded (${err instanceof Error ? err.message : err})` };
  }
  try {
    return { nc: await connect({ servers: NATS_URL, name: 'flint-bench-cluster', timeout: 2000, maxReconnectAttempts: 0 }) };
  } catch (err) {
    const why =
      err?.code === 'CONNECTION_REFUSED'
        ? 'connection refused'
        : err?.code === 'TIMEOUT'
          ? 'no answer within 2000 ms'
          : err instanceof Error
            ? err.message
            : String(err);
    return { reason: `NATS at ${shownUrl} is not reachable (${why})` };
  }
}

/** The pid of the nats-server this bench talks to when it runs on this machine (the only one in /proc); else undefined. */
async function natsServerPid() {
  const host = new URL(NATS_URL.replace(/^nats:/, 'http:')).hostname;
  if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) return undefined;
  const found = [];
  for (const entry of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (comm.trim() === 'nats-server') found.push(entry);
  }
  return found.length === 1 ? found[0] : undefined;
}

/** An engine child of the cluster, as node `nodeId`. */
const startEngine = (nodeId, role) =>
  start('./support/engine-process.mjs', {
    name: role,
    env: {
      BENCH_ENGINE_CONFIG: JSON.stringify({
        modules: [],
        cluster: {
          transport: TRANSPORT,
          url: TRANSPORT === 'nats' ? NATS_URL : REDIS_URL,
          name: CLUSTER,
          node_id: nodeId,
          heartbeat_ms: 1000,
          expire_ms: 5000,
        },
      }),
    },
    execArgv: childExecArgv(role),
  });

/** Waits until `worker`'s engine lists `id` (with a provider on engine `node`, when given). */
async function waitForFunction(worker, id, node, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { functions } = await worker.trigger({ function_id: 'engine::functions::list', payload: {} });
    const fn = functions.find((f) => f.function_id === id);
    if (fn && (!node || fn.providers?.some((p) => p.engine === node))) return fn;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${id} was not listed${node ? ` with a provider on engine ${node}` : ''} within ${timeoutMs} ms`);
}

const opened = await openNats();
/** With the cluster on Redis: a client of that server (its pid for the broker column), or why it cannot be reached. */
const redisOpened = TRANSPORT === 'redis' ? await openRedis(REDIS_URL) : undefined;
if (!opened.nc) {
  skip(opened.reason);
  redisOpened?.redis?.disconnect();
} else if (redisOpened && !redisOpened.redis) {
  skip(redisOpened.reason);
  await opened.nc.close();
} else {
  nc = opened.nc;
  try {
    await run();
  } catch (err) {
    console.error(`bench/cluster failed: ${err instanceof Error ? err.stack : err}`);
    process.exitCode = 1;
  } finally {
    await Promise.all(callers.map((c) => c.shutdown()));
    await nc.close().catch(() => {});
    redisOpened?.redis?.disconnect();
    await Promise.all(children.reverse().map((c) => stopChild(c)));
  }
}

async function run() {
  // The cluster: engines A and B, an echo worker on each; the caller is this process, on A.
  const engineA = await startEngine(NODE_A, 'engine-a');
  const engineB = await startEngine(NODE_B, 'engine-b');
  const echoA = await start('./support/cluster-echo-worker.mjs', {
    name: 'echo-worker-a',
    args: [engineA.info.url, LOCAL_ID],
    execArgv: childExecArgv('echo-worker-a'),
  });
  const echoB = await start('./support/cluster-echo-worker.mjs', {
    name: 'echo-worker-b',
    args: [engineB.info.url, REMOTE_ID],
    execArgv: childExecArgv('echo-worker-b'),
  });
  const caller = registerWorker(engineA.info.url, { workerName: 'bench-caller', announce: false });
  callers.push(caller);
  await caller.waitConnected();
  await waitForFunction(caller, LOCAL_ID);
  await waitForFunction(caller, REMOTE_ID, NODE_B);
  const { members } = await caller.trigger({ function_id: 'engine::cluster::members', payload: {} });
  deepStrictEqual(
    members.map((m) => m.node),
    [NODE_A, NODE_B],
  );
  deepStrictEqual(await caller.trigger({ function_id: LOCAL_ID, payload }), payload);
  deepStrictEqual(await caller.trigger({ function_id: REMOTE_ID, payload }), payload);

  // Baseline: a bare NATS responder in its own process; this process requests.
  const natsEcho = await start('./support/nats-echo-server.mjs', { name: 'nats-echo', args: [NATS_URL, SUBJECT], execArgv: childExecArgv('nats-echo') });
  const bareCall = async () => decoder.decode((await nc.request(SUBJECT, encoder.encode(JSON.stringify(payload)), { timeout: 10_000 })).data);
  deepStrictEqual(JSON.parse(await bareCall()), payload);
  const natsPid = await natsServerPid();
  /** The server the cluster runs on: the NATS one, or Redis. */
  const brokerPid = TRANSPORT === 'nats' ? natsPid : await redisServerPid(redisOpened.redis);

  const callsOf = async (h) => (await request(h.child, { type: 'calls' })).calls;
  const callsBefore = { local: await callsOf(echoA), remote: await callsOf(echoB), bare: await callsOf(natsEcho) };

  // CPU columns: this process (caller / NATS client), engine A, engine B, the echo end, the server between
  // them (nats-server for the bare baseline; the cluster transport's server for the remote call).
  const COLUMNS = ['caller', 'engine A', 'engine B', 'echo end', 'broker'];
  const systems = [
    { name: 'bare', label: 'bare NATS (nc.request → responder)', call: bareCall, procs: [undefined, undefined, natsEcho], broker: natsPid },
    {
      name: 'local',
      label: 'local (caller → A → echo on A)',
      call: () => caller.trigger({ function_id: LOCAL_ID, payload }),
      procs: [engineA, undefined, echoA],
      broker: undefined,
    },
    {
      name: 'remote',
      label: `remote (caller → A → ${KIND} → B → echo on B)`,
      call: () => caller.trigger({ function_id: REMOTE_ID, payload }),
      procs: [engineA, engineB, echoB],
      broker: brokerPid,
    },
  ];
  const cpuOf = async (system) => {
    const { user, system: sys } = process.cpuUsage();
    const child = async (h) => (h ? (await request(h.child, { type: 'cpu' })).cpuMs : Number.NaN);
    return [(user + sys) / 1000, ...(await Promise.all(system.procs.map(child))), system.broker ? await procCpuMs(system.broker) : Number.NaN];
  };

  const results = [];
  for (const inFlight of levels) {
    process.stderr.write(`  cluster: ${inFlight} in flight, ${rounds} round${rounds === 1 ? '' : 's'}:`);
    const samples = Object.fromEntries(systems.map((s) => [s.name, []]));
    const cpu = Object.fromEntries(systems.map((s) => [s.name, { ms: COLUMNS.map(() => 0), calls: 0 }]));
    for (let roundNo = 0; roundNo < rounds; roundNo++) {
      for (const system of roundNo % 2 === 0 ? systems : [...systems].reverse()) {
        const before = await cpuOf(system);
        const sample = await closedLoop(system.call, {
          concurrency: inFlight,
          warmupMs: samples[system.name].length === 0 ? warmupMs : 200,
          durationMs: (seconds * 1000) / rounds,
        });
        const after = await cpuOf(system);
        samples[system.name].push(sample);
        cpu[system.name].calls += sample.completed;
        for (let i = 0; i < COLUMNS.length; i++) cpu[system.name].ms[i] += after[i] - before[i];
      }
      process.stderr.write(` ${roundNo + 1}`);
    }
    process.stderr.write('\n');
    const stats = Object.fromEntries(systems.map((s) => [s.name, summarize(samples[s.name])]));
    const cpuUs = Object.fromEntries(Object.entries(cpu).map(([name, c]) => [name, c.ms.map((ms) => (ms * 1000) / c.calls)]));
    const completed = Object.fromEntries(Object.entries(cpu).map(([name, c]) => [name, c.calls]));
    const p50Limit = stats.local.p50Us + P50_NATS_FACTOR * stats.bare.p50Us;
    results.push({
      inFlight,
      ...stats,
      cpuUs,
      completed,
      throughputRatio: stats.remote.callsPerSec / stats.local.callsPerSec,
      p50Limit,
      // The remote call's extra p50 in bare NATS round trips.
      extraInNatsTrips: (stats.remote.p50Us - stats.local.p50Us) / stats.bare.p50Us,
    });
  }

  // Every call was run by the process it was meant for: remote calls by B's worker, etc.
  const callsAfter = { local: await callsOf(echoA), remote: await callsOf(echoB), bare: await callsOf(natsEcho) };
  for (const name of ['local', 'remote', 'bare']) {
    const ran = callsAfter[name] - callsBefore[name];
    const made = results.reduce((sum, r) => sum + r.completed[name], 0);
    if (ran < made) throw new Error(`${name}: ${made} calls answered but its echo end ran only ${ran}`);
  }

  console.log(
    `\nbench/cluster: echo round trip, closed loop, ${seconds} s per level and system in ${rounds} alternating rounds, ${warmupMs} ms warm-up (latencies in µs)`,
  );
  console.log(
    `cluster ${CLUSTER} on ${KIND} at ${TRANSPORT === 'nats' ? shownUrl : redactUrl(REDIS_URL)}: engines ${NODE_A} and ${NODE_B}, each in its own process (modules [], heartbeat_ms 1000, expire_ms 5000)`,
  );
  console.log(
    `local = caller worker (this process) → engine A → echo worker on A; remote = the same caller → engine A → ${KIND} → engine B → echo worker on B; bare NATS = nc.request (this process) → NATS → responder process\n`,
  );
  printTable(
    [
      'in flight',
      'local calls/s',
      'remote calls/s',
      'NATS calls/s',
      'remote/local',
      'local p50',
      'local p99',
      'remote p50',
      'remote p99',
      'NATS p50',
      'NATS p99',
    ],
    results.map((r) => [
      r.inFlight,
      fixed(r.local.callsPerSec),
      fixed(r.remote.callsPerSec),
      fixed(r.bare.callsPerSec),
      fixed(r.throughputRatio, 2),
      fixed(r.local.p50Us, 1),
      fixed(r.local.p99Us, 1),
      fixed(r.remote.p50Us, 1),
      fixed(r.remote.p99Us, 1),
      fixed(r.bare.p50Us, 1),
      fixed(r.bare.p99Us, 1),
    ]),
  );
  console.log(`\ncheck: remote p50 ≤ local p50 + ${P50_NATS_FACTOR} × bare NATS p50 (µs)\n`);
  printTable(
    ['in flight', 'remote p50', 'local p50 + 1.5 × NATS p50', 'remote − local p50', 'in NATS round trips', 'check'],
    results.map((r) => [
      r.inFlight,
      fixed(r.remote.p50Us, 1),
      fixed(r.p50Limit, 1),
      fixed(r.remote.p50Us - r.local.p50Us, 1),
      fixed(r.extraInNatsTrips, 2),
      r.remote.p50Us <= r.p50Limit ? 'ok' : 'over',
    ]),
  );

  console.log(
    `\nCPU time per call (µs; every call of every round, warm-ups included; broker: ${TRANSPORT === 'nats' ? 'nats-server' : 'nats-server for bare NATS, redis-server for remote'}, from /proc in 10 ms ticks)\n`,
  );
  const cpuRows = [];
  for (const r of results) {
    for (const system of systems) {
      const us = r.cpuUs[system.name];
      const shown = us.map((v) => (Number.isFinite(v) ? fixed(v, 1) : '-'));
      const total = us.filter(Number.isFinite).reduce((a, b) => a + b, 0);
      cpuRows.push([r.inFlight, system.label, ...shown, fixed(total, 1)]);
    }
  }
  printTable(['in flight', 'system', ...COLUMNS, 'total'], cpuRows);
  if (!natsPid) console.log('(nats-server: not a single local nats-server process in /proc, so its CPU is not shown)');
  if (TRANSPORT === 'redis' && !brokerPid) console.log('(redis-server: not on this machine, so its CPU is not shown)');

  const targets = [];
  for (const r of results) {
    targets.push({
      name: `remote calls/s at ${r.inFlight} in flight ≥ ${THROUGHPUT_TARGET} × local`,
      value: r.throughputRatio,
      limit: THROUGHPUT_TARGET,
      met: r.throughputRatio >= THROUGHPUT_TARGET,
      shown: fixed(r.throughputRatio, 2),
    });
    targets.push({
      name: `remote p50 at ${r.inFlight} in flight ≤ local p50 + ${P50_NATS_FACTOR} × bare NATS p50`,
      value: r.remote.p50Us,
      limit: r.p50Limit,
      met: r.remote.p50Us <= r.p50Limit,
      shown: `${fixed(r.remote.p50Us, 1)} µs (limit ${fixed(r.p50Limit, 1)} µs)`,
    });
  }
  console.log('\ntargets:');
  for (const t of targets) console.log(`  ${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${t.shown}`);

  const stats = (s) => ({ callsPerSec: round(s.callsPerSec, 0), p50Us: round(s.p50Us, 1), p99Us: round(s.p99Us, 1), calls: s.calls });
  const summary = {
    bench: 'cluster',
    seconds,
    rounds,
    warmupMs,
    nats: shownUrl,
    transport: TRANSPORT,
    ...(TRANSPORT === 'redis' ? { redis: redactUrl(REDIS_URL) } : {}),
    cluster: CLUSTER,
    levels: results.map((r) => ({
      inFlight: r.inFlight,
      local: stats(r.local),
      remote: stats(r.remote),
      bare: stats(r.bare),
      throughputRatio: round(r.throughputRatio, 3),
      p50LimitUs: round(r.p50Limit, 1),
      extraInNatsTrips: round(r.extraInNatsTrips, 2),
      cpuUsPerCall: Object.fromEntries(
        Object.entries(r.cpuUs).map(([name, us]) => [name, Object.fromEntries(COLUMNS.map((c, i) => [c, round(us[i], 1)]).filter(([, v]) => v !== null))]),
      ),
    })),
    targets: targets.map((t) => ({ name: t.name, value: round(t.value, 3), limit: round(t.limit, 3), met: t.met })),
  };
  console.log(`\n${JSON.stringify(summary)}`);
  if (STRICT && targets.some((t) => !t.met)) process.exitCode = 1;
}
