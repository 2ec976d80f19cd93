// bench/state: `state::set` then `state::get` of the same key through the bridge, from a worker in this
// process, 64 in flight (closed loop), for each kv adapter (in_memory, file_based, redis), beside a
// direct ioredis SET then GET (this process → Redis) in the same run.
//
//   processes: this one (caller worker) | engine child per adapter (flint-state)  [| redis-server]
//              this one (ioredis client) | redis-server
//
// One op = a set followed by a get of that key (2 round trips); the get's value is checked. Keys cycle
// through 10,000 per system, so the 64 ops in flight never share a key. Each system is measured for
// BENCH_SECONDS (default 5) in BENCH_ROUNDS (default 5) rounds whose order alternates (baseline,
// in_memory, file_based, redis, then the reverse, …); BENCH_WARMUP_MS (1000) before each system's first
// round, 200 ms before the others.
//
// Isolation: a random scope; Redis keys under `flint-bench:<random>:` (adapter and baseline), deleted
// afterwards; the file_based store lives in a temp folder removed afterwards. An adapter whose store
// cannot be opened (Redis unreachable, the engine refusing the config) is skipped with the reason.
//
// Env: BENCH_SECONDS (5), BENCH_ROUNDS (5), BENCH_WARMUP_MS (1000), BENCH_STATE_IN_FLIGHT (64),
//      BENCH_REDIS_URL (redis://127.0.0.1:6379), BENCH_CPU_PROF=<dir>, BENCH_STRICT=1.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerWorker } from '@flint/sdk';
import { benchSeconds, closedLoop, fixed, printTable, round, summarize } from './support/measure.mjs';
import { childExecArgv, request, startChild, stopChild } from './support/proc.mjs';
import { deleteKeysUnder, openRedis, procCpuMs, redisServerPid } from './support/redis.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const seconds = benchSeconds(5);
const rounds = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 5)) || 1);
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const IN_FLIGHT = Math.max(1, Math.floor(Number(process.env.BENCH_STATE_IN_FLIGHT ?? 64)) || 64);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEYS = 10_000;
const tag = randomBytes(6).toString('hex');
const REDIS_PREFIX = `flint-bench:${tag}:`;
const SCOPE = `bench-${tag}`;
const value = (n) => ({ n, text: 'hello flint', ok: true, tags: ['a', 'b'] });
const TARGETS = { in_memory: 0.5, file_based: 0.25, redis: 0.45 };

const children = [];
const workers = [];
const skipped = [];
let direct;
let fileDir;

/**
 * CPU time (ms) of the local redis-server so far, read from /proc (Linux; the pid comes from INFO).
 * Undefined when Redis is not a local process this one can see. Clock ticks are assumed to be 10 ms.
 */
async function redisServerCpuMs(redis) {
  const pid = await redisServerPid(redis);
  return pid ? await procCpuMs(pid) : undefined;
}

/** An engine child with flint-state on `adapter` and a caller worker in this process; undefined when it cannot start. */
async function startFlint(name, adapter) {
  let engine;
  try {
    engine = await startChild(here('./support/engine-process.mjs'), {
      name: `engine-${name}`,
      env: { BENCH_ENGINE_CONFIG: JSON.stringify({ modules: [{ name: 'flint-state', config: { adapter } }] }) },
      execArgv: childExecArgv(`engine-${name}`),
    });
  } catch (err) {
    skipped.push({ name, reason: `the engine did not start with this adapter (${err instanceof Error ? err.message : err})` });
    return undefined;
  }
  children.push(engine);
  const worker = registerWorker(engine.info.url, { workerName: `bench-state-${name}`, announce: false });
  workers.push(worker);
  await worker.waitConnected();
  try {
    await worker.state.set(SCOPE, 'probe', value(-1));
    const back = await worker.state.get(SCOPE, 'probe');
    if (back?.n !== -1) throw new Error(`read back ${JSON.stringify(back)}`);
  } catch (err) {
    skipped.push({ name, reason: `state::set/get failed (${err instanceof Error ? err.message : err})` });
    return undefined;
  }
  return {
    name,
    label: { in_memory: 'Flint, in_memory', file_based: 'Flint, file_based', redis: 'Flint, redis' }[name],
    engine,
    call: async (seq) => {
      const key = `k${seq % KEYS}`;
      await worker.state.set(SCOPE, key, value(seq));
      const got = await worker.state.get(SCOPE, key);
      if (got?.n !== seq) throw new Error(`${name}: get ${key} returned ${JSON.stringify(got)}, expected n = ${seq}`);
    },
  };
}

try {
  const systems = [];
  const opened = await openRedis(REDIS_URL);
  if (opened.redis) {
    direct = opened.redis;
    systems.push({
      name: 'baseline',
      label: 'direct ioredis SET + GET',
      call: async (seq) => {
        const key = `${REDIS_PREFIX}direct:k${seq % KEYS}`;
        await direct.set(key, JSON.stringify(value(seq)));
        const got = JSON.parse(await direct.get(key));
        if (got?.n !== seq) throw new Error(`baseline: GET ${key} returned ${JSON.stringify(got)}`);
      },
    });
  } else {
    skipped.push({ name: 'baseline', reason: opened.reason }, { name: 'redis', reason: opened.reason });
  }

  const memory = await startFlint('in_memory', { name: 'kv', config: { store_method: 'in_memory' } });
  if (memory) systems.push(memory);
  fileDir = await mkdtemp(join(tmpdir(), 'flint-bench-state-'));
  const file = await startFlint('file_based', { name: 'kv', config: { store_method: 'file_based', file_path: fileDir } });
  if (file) systems.push(file);
  if (direct) {
    const redis = await startFlint('redis', { name: 'redis', config: { redis_url: REDIS_URL, key_prefix: REDIS_PREFIX } });
    if (redis) systems.push(redis);
  }
  if (systems.length === 0) throw new Error('nothing to measure');

  // CPU time so far (ms): [this process (caller), engine, redis-server]
  const cpuOf = async (system) => {
    const { user, system: sys } = process.cpuUsage();
    return [
      (user + sys) / 1000,
      system.engine ? (await request(system.engine.child, { type: 'cpu' })).cpuMs : 0,
      direct ? ((await redisServerCpuMs(direct)) ?? Number.NaN) : Number.NaN,
    ];
  };
  process.stderr.write(`  state: ${IN_FLIGHT} in flight, ${rounds} round${rounds === 1 ? '' : 's'}:`);
  const samples = Object.fromEntries(systems.map((s) => [s.name, []]));
  const cpu = Object.fromEntries(systems.map((s) => [s.name, { ms: [0, 0, 0], ops: 0 }]));
  for (let roundNo = 0; roundNo < rounds; roundNo++) {
    for (const system of roundNo % 2 === 0 ? systems : [...systems].reverse()) {
      const before = await cpuOf(system);
      const sample = await closedLoop(system.call, {
        concurrency: IN_FLIGHT,
        warmupMs: samples[system.name].length === 0 ? warmupMs : 200,
        durationMs: (seconds * 1000) / rounds,
      });
      const after = await cpuOf(system);
      samples[system.name].push(sample);
      cpu[system.name].ops += sample.completed;
      for (let i = 0; i < 3; i++) cpu[system.name].ms[i] += after[i] - before[i];
    }
    process.stderr.write(` ${roundNo + 1}`);
  }
  process.stderr.write('\n');

  const results = systems.map((s) => ({
    name: s.name,
    label: s.label,
    ...summarize(samples[s.name]),
    cpuUs: cpu[s.name].ms.map((ms) => (ms * 1000) / Math.max(1, cpu[s.name].ops)),
  }));
  const base = results.find((r) => r.name === 'baseline');

  console.log(
    `\nbench/state: one op = set then get of the same key (2 calls; value ${JSON.stringify(value(0)).length} bytes of JSON), ${IN_FLIGHT} ops in flight, ${seconds} s per system in ${rounds} alternating rounds, ${warmupMs} ms warm-up (latencies of whole ops, in µs)`,
  );
  console.log('Flint = worker in this process → engine child (flint-state) → adapter; baseline = ioredis in this process → redis-server (SET, GET)\n');
  printTable(
    ['system', 'ops/s', 'vs baseline', 'p50', 'p99', 'caller CPU µs/op', 'engine CPU µs/op', 'redis-server CPU µs/op'],
    results.map((r) => [
      r.label,
      fixed(r.callsPerSec),
      r.name === 'baseline' || !base ? '-' : fixed(r.callsPerSec / base.callsPerSec, 2),
      fixed(r.p50Us, 0),
      fixed(r.p99Us, 0),
      fixed(r.cpuUs[0], 1),
      r.name === 'baseline' ? '-' : fixed(r.cpuUs[1], 1),
      r.name === 'baseline' || r.name === 'redis' ? fixed(r.cpuUs[2], 1) : '-',
    ]),
  );
  console.log('(CPU µs/op over every op of the measured rounds, warm-ups included; redis-server from /proc in 10 ms ticks)');
  for (const s of skipped) console.log(`skipped ${s.name}: ${s.reason}`);

  const targets = [];
  console.log('\ntargets:');
  for (const [name, limit] of Object.entries(TARGETS)) {
    const r = results.find((x) => x.name === name);
    const t = { name: `${name} ops/s ≥ ${limit} × direct Redis`, limit };
    if (!r || !base) {
      console.log(`  SKIPPED ${t.name}: ${r ? 'no baseline' : 'adapter not measured'}`);
      targets.push({ ...t, value: null, met: null });
      continue;
    }
    t.value = r.callsPerSec / base.callsPerSec;
    t.met = t.value >= limit;
    targets.push(t);
    console.log(`  ${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${fixed(t.value, 2)}`);
  }

  const out = {
    bench: 'state',
    op: 'set+get',
    inFlight: IN_FLIGHT,
    seconds,
    rounds,
    warmupMs,
    systems: results.map((r) => ({
      name: r.name,
      opsPerSec: round(r.callsPerSec, 0),
      p50Us: round(r.p50Us, 1),
      p99Us: round(r.p99Us, 1),
      ops: r.calls,
      cpuUsPerOp: {
        caller: round(r.cpuUs[0], 1),
        engine: r.name === 'baseline' ? null : round(r.cpuUs[1], 1),
        redisServer: r.name === 'baseline' || r.name === 'redis' ? round(r.cpuUs[2], 1) : null,
      },
    })),
    skipped,
    targets: targets.map((t) => ({ name: t.name, value: t.value === null ? null : round(t.value, 3), limit: t.limit, met: t.met })),
  };
  console.log(`\n${JSON.stringify(out)}`);
  if (process.env.BENCH_STRICT === '1' && targets.some((t) => t.met === false)) process.exitCode = 1;
} catch (err) {
  console.error(`bench/state failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  await Promise.all(workers.map((w) => w.shutdown()));
  await Promise.all(children.reverse().map((c) => stopChild(c)));
  if (direct) {
    try {
      await deleteKeysUnder(direct, REDIS_PREFIX);
    } catch (err) {
      console.error(`could not delete the bench's Redis keys (${REDIS_PREFIX}*): ${err instanceof Error ? err.message : err}`);
    }
    direct.disconnect();
  }
  if (fileDir) await rm(fileDir, { recursive: true, force: true });
}
