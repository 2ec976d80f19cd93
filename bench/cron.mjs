// bench/cron: flint-cron with 10,000 `cron` triggers, beside a bare node process with 10,000 croner jobs.
//
//   Flint:  engine child (flint-cron: memory lock, in_memory store) | BENCH_CRON_PROCS worker children, holding
//           BENCH_CRON_CONNECTIONS @flint/sdk connections in all, each registering BENCH_CRON_FUNCTIONS functions
//           and one `cron` trigger per function (distinct function ids: 10,000 distinct jobs)
//   croner: one child with as many croner `Cron` jobs (croner's default options: the process's time zone; Flint's
//           triggers default to UTC), each calling a callback that notes when it started
//
// Firing: every trigger and job is `* * * * * *`. Once all are registered, BENCH_CRON_WARMUP_SLOTS (2) slots
// pass unmeasured, then BENCH_CRON_SLOTS (10) slots are measured: per call, the skew (its handler's start,
// on the handling process's Date.now(), minus its slot; same machine, same clock), and for Flint the
// payload's actual_time − scheduled_time (the engine's own note of when it fired); p50/p99/max overall
// and per slot. CPU time of every process over exactly those slots (ms per second).
//
// Idle: fresh processes; the same triggers and jobs with a yearly expression that does not fire during the
// run. The engine's CPU over BENCH_CRON_IDLE_SECONDS (30: croner re-arms each job's timer every 30 s, and
// the engine notes its presence in the store every 10 s), sampled every second (mean, median second,
// busiest second), first with the workers and their functions but no triggers, then with all the
// triggers; its RSS and heap after a GC before and after registering them; and its live timers (ref'd or
// not; timer-census.mjs, which asks the V8 inspector of the engine process) before and after: one timer
// for all triggers adds one live timer, not 10,000. The same for the croner process.
//
// Order: Flint idle, croner idle, croner firing, Flint firing (each with fresh processes).
//
// Env: BENCH_CRON_SLOTS (10), BENCH_CRON_WARMUP_SLOTS (2), BENCH_CRON_IDLE_SECONDS (30),
//      BENCH_CRON_CONNECTIONS (100), BENCH_CRON_FUNCTIONS (100, per connection), BENCH_CRON_PROCS (4),
//      BENCH_CRON_BACKEND=redis (redis lock and store on BENCH_REDIS_URL, default redis://127.0.0.1:6379),
//      BENCH_CPU_PROF=<dir> (profiles: engine-idle, engine-firing, cron-workers-<i>, croner-idle, croner-firing),
//      BENCH_STRICT=1.
import { fileURLToPath } from 'node:url';
import { fixed, percentile, printTable, round } from './support/measure.mjs';
import { childExecArgv, request, sleep, startChild, stopChild } from './support/proc.mjs';
import { openRedis, redactUrl } from './support/redis.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const intEnv = (name, fallback, min = 1) => Math.max(min, Math.floor(Number(process.env[name] ?? fallback)) || fallback);
const SLOTS = intEnv('BENCH_CRON_SLOTS', 10);
const WARMUP_SLOTS = intEnv('BENCH_CRON_WARMUP_SLOTS', 2, 0);
const IDLE_SECONDS = intEnv('BENCH_CRON_IDLE_SECONDS', 30);
const CONNECTIONS = intEnv('BENCH_CRON_CONNECTIONS', 100);
const FUNCTIONS = intEnv('BENCH_CRON_FUNCTIONS', 100);
const PROCS = Math.min(CONNECTIONS, intEnv('BENCH_CRON_PROCS', 4));
const JOBS = CONNECTIONS * FUNCTIONS;
const EVERY_SECOND = '* * * * * *';
/** Midnight UTC on January 1st (July 1st around the turn of the year): never during the run. */
const YEARLY = [0, 11].includes(new Date().getUTCMonth()) ? '0 0 0 1 7 *' : '0 0 0 1 1 *';
const SKEW_TARGET_MS = 50;
// BENCH_CRON_BACKEND=redis: the several-engines configuration (redis lock and redis store, under a prefix of
// this run's own that is deleted at the end) on BENCH_REDIS_URL; one engine all the same.
const BACKEND = process.env.BENCH_CRON_BACKEND === 'redis' ? 'redis' : 'memory';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_PREFIX = `flint:bench:cron:${process.pid}:`;
const ENGINE_CONFIG = {
  modules: [
    BACKEND === 'redis'
      ? {
          name: 'flint-cron',
          config: {
            adapter: { name: 'redis', config: { redis_url: REDIS_URL, prefix: `${REDIS_PREFIX}lock:` } },
            store: { name: 'redis', config: { redis_url: REDIS_URL, key_prefix: `${REDIS_PREFIX}store:` } },
          },
        }
      : { name: 'flint-cron' },
  ],
};
const BACKEND_TEXT = BACKEND === 'redis' ? `redis lock and redis store on ${redactUrl(REDIS_URL)}` : 'memory lock, in_memory store';

const children = [];
const start = async (file, opts) => {
  const handle = await startChild(here(file), opts);
  children.push(handle);
  return handle;
};
const stopAll = async (handles) => {
  await Promise.all(handles.map((h) => stopChild(h, 10_000)));
  for (const h of handles) children.splice(children.indexOf(h), 1);
};
const errorText = (err) => (err instanceof Error ? err.message : String(err));
const cpuMs = async (h) => (await request(h.child, { type: 'cpu' })).cpuMs;
const sleepUntil = (t) => sleep(Math.max(0, t - Date.now()));
const sorted = (values) => Float64Array.from(values).sort();
const stats = (values) => {
  const s = sorted(values);
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s.length ? s[s.length - 1] : Number.NaN };
};

/** An engine child and the worker children, every connection open and its functions registered. */
async function startFlint(role) {
  const engine = await start('./support/engine-process.mjs', {
    name: role,
    env: { BENCH_ENGINE_CONFIG: JSON.stringify(ENGINE_CONFIG) },
    execArgv: childExecArgv(role, { exposeGc: true }),
  });
  const per = Math.ceil(CONNECTIONS / PROCS);
  const workers = [];
  for (let p = 0; p < PROCS; p++) {
    const first = p * per;
    const count = Math.min(per, CONNECTIONS - first);
    if (count <= 0) break;
    workers.push(
      start('./support/cron-workers.mjs', {
        name: `cron-workers-${p}`,
        args: [engine.info.url, String(first), String(count), String(FUNCTIONS)],
        execArgv: childExecArgv(`cron-workers-${p}`),
        timeoutMs: 60_000,
      }),
    );
  }
  return { engine, workers: await Promise.all(workers) };
}

/** Registers one trigger per function in every worker child; ms until the engine confirmed all of them. */
async function registerTriggers({ engine, workers }, expression) {
  const t0 = performance.now();
  const replies = await Promise.all(workers.map((w) => request(w.child, { type: 'triggers', expression }, 120_000)));
  const ms = performance.now() - t0;
  const triggers = replies.reduce((n, r) => n + r.triggers, 0);
  const parked = replies.reduce((n, r) => n + r.parked, 0);
  if (triggers !== JOBS || parked > 0) throw new Error(`${triggers} triggers registered (${parked} parked), expected ${JOBS} live ones`);
  const { stats: engineStats } = await request(engine.child, { type: 'stats' });
  if (engineStats.triggers < JOBS) throw new Error(`the engine lists ${engineStats.triggers} triggers, expected at least ${JOBS}`);
  return ms;
}

/**
 * CPU of `handle` over `seconds`, sampled every second: { mean, median, max } in ms of CPU per second.
 * The mean is the long-run cost when the window is typical; the median leaves out one-off work such as
 * V8's memory reducer, which runs full GCs over the heap some seconds after allocation stopped.
 */
async function idleCpu(handle, seconds) {
  const perSecond = [];
  let prev = await cpuMs(handle);
  let t = performance.now();
  for (let i = 0; i < seconds; i++) {
    await sleep(1000);
    const now = performance.now();
    const cpu = await cpuMs(handle);
    perSecond.push((cpu - prev) / ((now - t) / 1000));
    prev = cpu;
    t = now;
  }
  const s = sorted(perSecond);
  return { mean: perSecond.reduce((a, b) => a + b, 0) / perSecond.length, median: percentile(s, 50), max: s[s.length - 1], perSecond };
}

async function timers(handle) {
  try {
    return (await request(handle.child, { type: 'timers' })).timers;
  } catch (err) {
    return { error: errorText(err) };
  }
}

/** RSS and heap used (MiB) after a GC. */
const memMiB = async (handle) => {
  const m = await request(handle.child, { type: 'mem' });
  return { rss: m.rss / 1024 / 1024, heap: m.heapUsed / 1024 / 1024 };
};

/**
 * Waits out the warm-up slots after `registeredAt`, then measures SLOTS slots: samples from `handlers`
 * (the processes running the handlers), CPU of `cpuOf` (name → handles) over exactly those seconds.
 */
async function measureSlots(registeredAt, handlers, cpuOf) {
  const from = Math.ceil(registeredAt / 1000) * 1000 + WARMUP_SLOTS * 1000;
  const to = from + SLOTS * 1000;
  const all = Object.values(cpuOf).flat();
  await sleepUntil(from - 500);
  const before = await Promise.all(all.map(cpuMs));
  await sleepUntil(to - 500);
  const after = await Promise.all(all.map(cpuMs));
  // The last slot's calls: all in, or 5 s after the slot (a missing call shows in the counts).
  const last = to - 1000;
  while (Date.now() < to + 5000) {
    const counts = await Promise.all(handlers.map((h) => request(h.child, { type: 'count', slot: last })));
    if (counts.reduce((n, c) => n + c.count, 0) >= JOBS) break;
    await sleep(100);
  }
  const perSlot = new Map();
  for (let slot = from; slot < to; slot += 1000) perSlot.set(slot, { skew: [], actual: [] });
  for (const h of handlers) {
    const { slots } = await request(h.child, { type: 'samples', from, to }, 60_000);
    for (const s of slots) {
      const into = perSlot.get(s.slot);
      for (const v of s.skew) into.skew.push(v);
      for (const v of s.actual) into.actual.push(v);
    }
  }
  const cpu = {};
  let i = 0;
  for (const [name, handles] of Object.entries(cpuOf)) {
    let ms = 0;
    for (let k = 0; k < handles.length; k++, i++) ms += after[i] - before[i];
    cpu[name] = ms / SLOTS;
  }
  const slots = [...perSlot].map(([slot, s]) => ({ slot, skew: stats(s.skew), actual: stats(s.actual) }));
  return {
    from,
    slots,
    skew: stats([...perSlot.values()].flatMap((s) => s.skew)),
    actual: stats([...perSlot.values()].flatMap((s) => s.actual)),
    cpu,
  };
}

async function flintIdle() {
  const flint = await startFlint('engine-idle');
  const { engine, workers } = flint;
  await sleep(1000);
  const timersBefore = await timers(engine);
  const memBefore = await memMiB(engine);
  process.stderr.write(` no triggers ${IDLE_SECONDS} s…`);
  const cpuNoTriggers = await idleCpu(engine, IDLE_SECONDS);
  const registerMs = await registerTriggers(flint, YEARLY);
  await sleep(1000);
  const timersAfter = await timers(engine);
  const memAfter = await memMiB(engine);
  process.stderr.write(` ${JOBS} yearly triggers ${IDLE_SECONDS} s…`);
  const cpu = await idleCpu(engine, IDLE_SECONDS);
  const fired = await Promise.all(workers.map((w) => request(w.child, { type: 'samples', from: 0, to: Number.MAX_SAFE_INTEGER })));
  const calls = fired.reduce((n, r) => n + r.slots.reduce((m, s) => m + s.skew.length, 0), 0);
  if (calls > 0) throw new Error(`the yearly triggers (${YEARLY}) fired ${calls} times during the idle window`);
  await stopAll([...workers, engine]);
  return { cpu, cpuNoTriggers, registerMs, memBefore, memAfter, timersBefore, timersAfter };
}

async function cronerIdle() {
  const t0 = performance.now();
  const croner = await start('./support/cron-baseline.mjs', {
    name: 'croner-idle',
    args: [String(JOBS), YEARLY],
    execArgv: childExecArgv('croner-idle', { exposeGc: true }),
    timeoutMs: 60_000,
  });
  const registerMs = performance.now() - t0;
  await sleep(1000);
  const timersAfter = await timers(croner);
  const memAfter = await memMiB(croner);
  process.stderr.write(` ${IDLE_SECONDS} s…`);
  const cpu = await idleCpu(croner, IDLE_SECONDS);
  await stopAll([croner]);
  return { cpu, registerMs, memAfter, timersAfter };
}

async function cronerFiring() {
  const croner = await start('./support/cron-baseline.mjs', {
    name: 'croner-firing',
    args: [String(JOBS), EVERY_SECOND],
    execArgv: childExecArgv('croner-firing', { exposeGc: true }),
    timeoutMs: 60_000,
  });
  const result = await measureSlots(Date.now(), [croner], { process: [croner] });
  result.mem = await memMiB(croner);
  await stopAll([croner]);
  return result;
}

async function flintFiring() {
  const flint = await startFlint('engine-firing');
  const registerMs = await registerTriggers(flint, EVERY_SECOND);
  const result = await measureSlots(Date.now(), flint.workers, { engine: [flint.engine], workers: flint.workers });
  result.registerMs = registerMs;
  // Informational: the engine's live timers half-way between two slots, and its RSS (after a GC) after the slots.
  await sleepUntil(Math.ceil(Date.now() / 1000) * 1000 + 500);
  result.timersMidSlot = await timers(flint.engine);
  result.mem = await memMiB(flint.engine);
  await stopAll([...flint.workers, flint.engine]);
  return result;
}

/** Live timers gained between two censuses, by callback: "+1 run timeout". */
function timerGain(before, after) {
  if (before?.error || after?.error) return { gained: null, text: before?.error ?? after?.error };
  const keys = new Set([...Object.keys(before.byCallback), ...Object.keys(after.byCallback)]);
  const parts = [];
  for (const k of keys) {
    const d = (after.byCallback[k] ?? 0) - (before.byCallback[k] ?? 0);
    if (d !== 0) parts.push(`${d > 0 ? '+' : ''}${d} ${k}`);
  }
  return { gained: after.live - before.live, text: parts.join(', ') || 'none' };
}

const topCallbacks = (census, n = 3) =>
  census?.error
    ? census.error
    : Object.entries(census.byCallback)
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ');

/** Deletes this run's keys (BENCH_CRON_BACKEND=redis). */
async function deleteRedisKeys() {
  const { redis } = await openRedis(REDIS_URL);
  if (!redis) return;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${REDIS_PREFIX}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

if (BACKEND === 'redis') {
  const { redis, reason } = await openRedis(REDIS_URL);
  if (!redis) {
    console.error(`bench/cron: BENCH_CRON_BACKEND=redis, but ${reason}`);
    process.exit(1);
  }
  redis.disconnect();
}

try {
  process.stderr.write(`  cron: ${JOBS} triggers (${BACKEND_TEXT}), ${CONNECTIONS} connections in ${PROCS} worker processes\n  cron: Flint idle:`);
  const idle = await flintIdle();
  process.stderr.write('\n  cron: croner idle:');
  const baseIdle = await cronerIdle();
  process.stderr.write(`\n  cron: croner firing, ${WARMUP_SLOTS} + ${SLOTS} slots…`);
  const baseFiring = await cronerFiring();
  process.stderr.write(`\n  cron: Flint firing, ${WARMUP_SLOTS} + ${SLOTS} slots…`);
  const firing = await flintFiring();
  process.stderr.write(' done\n');

  const gain = timerGain(idle.timersBefore, idle.timersAfter);
  const expected = JOBS * SLOTS;

  console.log(
    `\nbench/cron: ${JOBS} cron triggers (${CONNECTIONS} @flint/sdk connections × ${FUNCTIONS} functions, in ${PROCS} worker processes) on one engine (flint-cron: ${BACKEND_TEXT})`,
  );
  console.log(`baseline = ${JOBS} croner Cron jobs (default options) in one bare node process, each calling a callback that notes the time`);
  console.log(
    `firing: '${EVERY_SECOND}', ${SLOTS} slots measured after ${WARMUP_SLOTS} unmeasured; skew = handler start − slot (ms, Date.now() of the handling process)\n`,
  );
  printTable(
    [
      'slot',
      'Flint calls',
      'skew p50',
      'skew p99',
      'skew max',
      'actual−sched p50',
      'actual−sched p99',
      'actual−sched max',
      'croner calls',
      'croner p50',
      'croner p99',
    ],
    firing.slots.map((s, i) => {
      const b = baseFiring.slots[i];
      return [
        i + 1,
        s.skew.n,
        fixed(s.skew.p50, 0),
        fixed(s.skew.p99, 0),
        fixed(s.skew.max, 0),
        fixed(s.actual.p50, 0),
        fixed(s.actual.p99, 0),
        fixed(s.actual.max, 0),
        b.skew.n,
        fixed(b.skew.p50, 0),
        fixed(b.skew.p99, 0),
      ];
    }),
  );

  console.log(`\nidle: '${YEARLY}' (does not fire during the run), CPU sampled every second for ${IDLE_SECONDS} s; RSS after a GC\n`);
  const ratio = (a, b) => (Number.isFinite(a / b) ? fixed(a / b, 2) : '-');
  const row = (label, f, b, digits) => [label, fixed(f, digits), b === undefined ? '-' : fixed(b, digits), b === undefined ? '-' : ratio(f, b)];
  const mem = (label, f, b) => [
    label,
    `${fixed(f.rss, 1)} (${fixed(f.heap, 1)})`,
    b ? `${fixed(b.rss, 1)} (${fixed(b.heap, 1)})` : '-',
    b ? ratio(f.rss, b.rss) : '-',
  ];
  printTable(
    ['', 'Flint', 'croner', 'ratio'],
    [
      row(`calls in the ${SLOTS} measured slots (of ${expected})`, firing.skew.n, baseFiring.skew.n, 0),
      row('firing skew p50 (ms)', firing.skew.p50, baseFiring.skew.p50, 1),
      row('firing skew p99 (ms)', firing.skew.p99, baseFiring.skew.p99, 1),
      row('firing skew max (ms)', firing.skew.max, baseFiring.skew.max, 1),
      row('payload actual_time − scheduled_time p50 (ms)', firing.actual.p50, undefined, 0),
      row('payload actual_time − scheduled_time p99 (ms)', firing.actual.p99, undefined, 0),
      row('payload actual_time − scheduled_time max (ms)', firing.actual.max, undefined, 0),
      row('CPU while firing, engine / croner process (ms per s)', firing.cpu.engine, baseFiring.cpu.process, 1),
      row(`CPU while firing, the ${PROCS} Flint worker processes (ms per s)`, firing.cpu.workers, undefined, 1),
      row(`idle CPU, ${JOBS} yearly triggers, mean (ms per s)`, idle.cpu.mean, baseIdle.cpu.mean, 2),
      row(`idle CPU, ${JOBS} yearly triggers, median second (ms per s)`, idle.cpu.median, baseIdle.cpu.median, 2),
      row(`idle CPU, ${JOBS} yearly triggers, busiest second (ms per s)`, idle.cpu.max, baseIdle.cpu.max, 1),
      row(`idle CPU, engine with ${CONNECTIONS} workers and no triggers, mean (ms per s)`, idle.cpuNoTriggers.mean, undefined, 2),
      row(`idle CPU, engine with ${CONNECTIONS} workers and no triggers, median second (ms per s)`, idle.cpuNoTriggers.median, undefined, 2),
      mem(`RSS (heap used) with ${JOBS} yearly triggers, after a GC (MiB)`, idle.memAfter, baseIdle.memAfter),
      mem(`engine RSS (heap used) with ${CONNECTIONS} workers, no triggers (MiB)`, idle.memBefore),
      mem('RSS (heap used) after the firing slots (MiB)', firing.mem, baseFiring.mem),
      row(
        `time to register ${JOBS} (ms; Flint: yearly, until the engine confirmed each; croner: process start to scheduled)`,
        idle.registerMs,
        baseIdle.registerMs,
        0,
      ),
      row('live timers with the yearly triggers', idle.timersAfter?.live, baseIdle.timersAfter?.live, 0),
    ],
  );
  console.log(
    `\nengine live timers (timer-census.mjs): ${idle.timersBefore?.live ?? '?'} before the ${JOBS} triggers, ${idle.timersAfter?.live ?? '?'} after (${gain.text}); mid-slot while firing: ${firing.timersMidSlot?.live ?? '?'} (${topCallbacks(firing.timersMidSlot)})`,
  );
  console.log(`croner live timers: ${baseIdle.timersAfter?.live ?? '?'} (${topCallbacks(baseIdle.timersAfter)})`);

  const targets = [];
  console.log('\ntargets:');
  const met = firing.skew.p99 < SKEW_TARGET_MS;
  console.log(`  ${met ? 'MET   ' : 'MISSED'} firing skew p99 < ${SKEW_TARGET_MS} ms: ${fixed(firing.skew.p99, 1)} (croner: ${fixed(baseFiring.skew.p99, 1)})`);
  targets.push({ name: `firing skew p99 < ${SKEW_TARGET_MS} ms`, value: round(firing.skew.p99, 1), limit: SKEW_TARGET_MS, met });
  console.log(
    `  REPORT engine idle CPU with ${JOBS} triggers (ms per s): mean ${fixed(idle.cpu.mean, 2)}, median second ${fixed(idle.cpu.median, 2)} (croner: ${fixed(baseIdle.cpu.mean, 2)}, ${fixed(baseIdle.cpu.median, 2)}; ratio of the means ${ratio(idle.cpu.mean, baseIdle.cpu.mean)})`,
  );
  targets.push({ name: `engine idle CPU with ${JOBS} triggers (ms per s, mean)`, value: round(idle.cpu.mean, 3), limit: null, met: null });
  const timerName = `one timer for all triggers (live timers gained by registering ${JOBS}: ≤ 1)`;
  if (gain.gained === null) {
    console.log(`  SKIPPED ${timerName}: ${gain.text}`);
    targets.push({ name: timerName, value: null, limit: 1, met: null });
  } else {
    const one = gain.gained <= 1;
    console.log(`  ${one ? 'MET   ' : 'MISSED'} ${timerName}: ${gain.gained} (${gain.text})`);
    targets.push({ name: timerName, value: gain.gained, limit: 1, met: one });
  }
  if (firing.skew.n < expected)
    console.log(
      `  note: ${expected - firing.skew.n} of ${expected} Flint calls did not come within the window (+5 s): late, or skipped (overlap: skip) while the job's previous run was under way`,
    );

  const pickCpu = (c) => ({ mean: round(c.mean, 3), median: round(c.median, 3), max: round(c.max, 1), perSecond: c.perSecond.map((v) => round(v, 1)) });
  const pickStats = (s) => ({ n: s.n, p50: round(s.p50, 1), p99: round(s.p99, 1), max: round(s.max, 1) });
  const out = {
    bench: 'cron',
    backend: BACKEND,
    triggers: JOBS,
    connections: CONNECTIONS,
    functionsPerConnection: FUNCTIONS,
    workerProcesses: PROCS,
    slots: SLOTS,
    warmupSlots: WARMUP_SLOTS,
    idleSeconds: IDLE_SECONDS,
    flint: {
      skewMs: pickStats(firing.skew),
      actualMinusScheduledMs: pickStats(firing.actual),
      perSlot: firing.slots.map((s) => ({ skewMs: pickStats(s.skew), actualMinusScheduledMs: pickStats(s.actual) })),
      firingCpuMsPerSec: { engine: round(firing.cpu.engine, 1), workers: round(firing.cpu.workers, 1) },
      idleCpuMsPerSec: pickCpu(idle.cpu),
      idleCpuNoTriggersMsPerSec: pickCpu(idle.cpuNoTriggers),
      rssMiB: { noTriggers: round(idle.memBefore.rss, 1), yearlyTriggers: round(idle.memAfter.rss, 1), afterFiring: round(firing.mem.rss, 1) },
      heapUsedMiB: { noTriggers: round(idle.memBefore.heap, 1), yearlyTriggers: round(idle.memAfter.heap, 1), afterFiring: round(firing.mem.heap, 1) },
      registerMs: { yearly: round(idle.registerMs, 0), everySecond: round(firing.registerMs, 0) },
      liveTimers: {
        before: idle.timersBefore?.live ?? null,
        after: idle.timersAfter?.live ?? null,
        gained: gain.text,
        midSlot: firing.timersMidSlot?.live ?? null,
      },
    },
    baseline: {
      skewMs: pickStats(baseFiring.skew),
      perSlot: baseFiring.slots.map((s) => ({ skewMs: pickStats(s.skew) })),
      firingCpuMsPerSec: round(baseFiring.cpu.process, 1),
      idleCpuMsPerSec: pickCpu(baseIdle.cpu),
      rssMiB: { yearlyJobs: round(baseIdle.memAfter.rss, 1), afterFiring: round(baseFiring.mem.rss, 1) },
      heapUsedMiB: { yearlyJobs: round(baseIdle.memAfter.heap, 1), afterFiring: round(baseFiring.mem.heap, 1) },
      liveTimers: baseIdle.timersAfter?.live ?? null,
    },
    ratios: {
      skewP99: round(firing.skew.p99 / baseFiring.skew.p99, 2),
      idleCpuMean: round(idle.cpu.mean / baseIdle.cpu.mean, 2),
    },
    targets,
  };
  console.log(`\n${JSON.stringify(out)}`);
  if (process.env.BENCH_STRICT === '1' && targets.some((t) => t.met === false)) process.exitCode = 1;
} catch (err) {
  console.error(`\nbench/cron failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  await Promise.all(children.map((c) => stopChild(c, 10_000)));
  if (BACKEND === 'redis') await deleteRedisKeys();
}
