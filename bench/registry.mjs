// bench/registry: W workers × F functions connect and register (announce: true). Measured against the
// engine in a child process: time until engine::functions::list shows all W×F functions (polled from
// this process), engine RSS growth per worker (child reports process.memoryUsage() after global.gc()),
// and engine::functions::list latency with all of them registered (median of 20 calls).
// Baseline in the same run: bare-registry-server.mjs (bare `ws` + one Map, same wire protocol, so the
// very same SDK client code drives both).
//
// The workers are plain registerWorker() instances spread over BENCH_REGISTRY_PROCS child processes
// (default 2: machines are 2-core, and the engine needs a core too), each opening at most
// BENCH_REGISTRY_CONNECT connections at a time (default 50).
//
// Each system is measured BENCH_REGISTRY_ROUNDS times (default 2) in alternating order (baseline, Flint,
// Flint, baseline, …), each time with fresh processes. Reported: the best (lowest) time of the rounds
// (background load only ever adds time), the worst (highest) memory growth, and the median over all
// list calls of all rounds. Every round's figures are in the final JSON line.
//
// Env: BENCH_REGISTRY_WORKERS (1000), BENCH_REGISTRY_FUNCTIONS (10), BENCH_REGISTRY_PROCS (2),
//      BENCH_REGISTRY_CONNECT (50), BENCH_REGISTRY_ROUNDS (2), BENCH_CPU_PROF=<dir>, BENCH_STRICT=1.
import { fileURLToPath } from 'node:url';
import { registerWorker } from '@flint/sdk';
import { fixed, median, printTable, round } from './support/measure.mjs';
import { childExecArgv, nextMessage, request, sleep, startChild, stopChild } from './support/proc.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const envInt = (name, fallback) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};
const WORKERS = envInt('BENCH_REGISTRY_WORKERS', 1000);
const FUNCTIONS = envInt('BENCH_REGISTRY_FUNCTIONS', 10);
const PROCS = envInt('BENCH_REGISTRY_PROCS', 2);
const CONNECT = envInt('BENCH_REGISTRY_CONNECT', 50);
const ROUNDS = envInt('BENCH_REGISTRY_ROUNDS', 2);
const LIST_CALLS = 20;
const PREFIX = 'bench::registry::';
const TOTAL = WORKERS * FUNCTIONS;
const KiB = 1024;

async function measure(system) {
  const children = [];
  let observer;
  try {
    const serverFile = system === 'flint' ? './support/engine-process.mjs' : './support/bare-registry-server.mjs';
    const server = await startChild(here(serverFile), {
      name: system === 'flint' ? 'engine' : 'bare-registry',
      execArgv: childExecArgv(system === 'flint' ? 'engine' : 'bare-registry', { exposeGc: true }),
    });
    children.push(server);
    const clients = [];
    const per = Math.ceil(WORKERS / PROCS);
    for (let p = 0; p < PROCS; p++) {
      const first = p * per;
      const count = Math.min(per, WORKERS - first);
      if (count <= 0) break;
      const c = await startChild(here('./support/registry-clients.mjs'), {
        name: `registry-clients-${p}`,
        args: [server.info.url, String(first), String(count), String(FUNCTIONS), String(CONNECT)],
        execArgv: childExecArgv(`registry-clients-${p}`),
      });
      children.push(c);
      clients.push(c);
    }
    observer = registerWorker(server.info.url, { workerName: 'bench-observer', announce: false });
    await observer.waitConnected();
    const list = () => observer.trigger({ function_id: 'engine::functions::list', payload: {} });
    await list();
    const before = await request(server.child, { type: 'mem' });
    const cpu = () => Promise.all([server, ...clients].map((c) => request(c.child, { type: 'cpu' }).then((r) => r.cpuMs)));
    const cpuBefore = await cpu();
    const selfBefore = process.cpuUsage();

    const connected = clients.map((c) => nextMessage(c.child, 'connected', 120_000));
    const t0 = process.hrtime.bigint();
    for (const c of clients) c.child.send({ type: 'go' });
    let polls = 0;
    let seen = 0;
    for (;;) {
      const { functions } = await list();
      polls++;
      seen = 0;
      for (const f of functions) if (f.function_id.startsWith(PREFIX)) seen++;
      if (seen >= TOTAL) break;
      if (process.hrtime.bigint() - t0 > 120_000_000_000n) throw new Error(`${system}: only ${seen} of ${TOTAL} functions listed after 120 s`);
      await sleep(20);
    }
    const registerMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const connectMs = Math.max(...(await Promise.all(connected)).map((m) => m.ms));
    const self = process.cpuUsage(selfBefore);
    const cpuAfter = await cpu();
    const serverCpuMs = cpuAfter[0] - cpuBefore[0];
    const clientCpuMs = cpuAfter.slice(1).reduce((sum, v, i) => sum + v - cpuBefore[i + 1], 0);
    const after = await request(server.child, { type: 'mem' });

    const latencies = [];
    let listBytes = 0;
    for (let i = 0; i < LIST_CALLS; i++) {
      const s = process.hrtime.bigint();
      const r = await list();
      latencies.push(Number(process.hrtime.bigint() - s) / 1e6);
      if (i === 0) listBytes = Buffer.byteLength(JSON.stringify(r));
    }
    return {
      registerMs,
      connectMs,
      polls,
      serverCpuMs,
      clientCpuMs,
      observerCpuMs: (self.user + self.system) / 1000,
      rssPerWorkerKiB: (after.rss - before.rss) / WORKERS / KiB,
      heapPerWorkerKiB: (after.heapUsed + after.external - before.heapUsed - before.external) / WORKERS / KiB,
      rssBeforeMiB: before.rss / KiB / KiB,
      rssAfterMiB: after.rss / KiB / KiB,
      gc: after.gc,
      listLatencies: latencies,
      listBytes,
    };
  } finally {
    await observer?.shutdown();
    // Clients first (each closes its workers), then the server.
    await Promise.all(children.slice(1).map((c) => stopChild(c, 10_000)));
    await stopChild(children[0]);
  }
}

/** Best time, worst memory, list latency over all calls of every round. */
function combine(runs) {
  const min = (k) => Math.min(...runs.map((r) => r[k]));
  const max = (k) => Math.max(...runs.map((r) => r[k]));
  const latencies = runs.flatMap((r) => r.listLatencies);
  const worstMem = runs.reduce((a, b) => (b.rssPerWorkerKiB > a.rssPerWorkerKiB ? b : a));
  return {
    registerMs: min('registerMs'),
    connectMs: min('connectMs'),
    serverCpuMs: min('serverCpuMs'),
    clientCpuMs: min('clientCpuMs'),
    observerCpuMs: min('observerCpuMs'),
    polls: min('polls'),
    rssPerWorkerKiB: max('rssPerWorkerKiB'),
    heapPerWorkerKiB: max('heapPerWorkerKiB'),
    rssBeforeMiB: worstMem.rssBeforeMiB,
    rssAfterMiB: worstMem.rssAfterMiB,
    gc: runs.every((r) => r.gc),
    listMedianMs: median(latencies),
    listMaxMs: Math.max(...latencies),
    listBytes: max('listBytes'),
  };
}

try {
  process.stderr.write(`  registry: ${WORKERS} workers × ${FUNCTIONS} functions, ${PROCS} client processes, ${ROUNDS} rounds:`);
  const runs = { baseline: [], flint: [] };
  for (let roundNo = 0; roundNo < ROUNDS; roundNo++) {
    for (const system of roundNo % 2 === 0 ? ['baseline', 'flint'] : ['flint', 'baseline']) {
      process.stderr.write(` ${system}…`);
      runs[system].push(await measure(system));
    }
  }
  process.stderr.write(' done\n');
  const baseline = combine(runs.baseline);
  const flint = combine(runs.flint);

  const targets = [
    { name: 'engine RSS growth per worker ≤ 100 KiB', value: flint.rssPerWorkerKiB, limit: 100, met: flint.rssPerWorkerKiB <= 100 },
    { name: `engine::functions::list (${TOTAL} functions) median ≤ 50 ms`, value: flint.listMedianMs, limit: 50, met: flint.listMedianMs <= 50 },
  ];
  console.log(
    `\nbench/registry: ${WORKERS} workers × ${FUNCTIONS} functions (announce: true) from ${PROCS} client processes, ≤ ${CONNECT} connects in flight each`,
  );
  console.log('baseline = bare ws server keeping registrations in a Map (same SDK clients, same wire protocol)');
  console.log(`${ROUNDS} rounds per system: times are the best round, memory the worst round, list latency over all ${ROUNDS * LIST_CALLS} calls\n`);
  const row = (label, f, b, digits, target) => [label, fixed(f, digits), fixed(b, digits), fixed(f / b, 2), target ?? ''];
  printTable(
    ['', 'Flint', 'baseline', 'ratio', 'target'],
    [
      row(`time until all ${TOTAL} functions listed (ms)`, flint.registerMs, baseline.registerMs, 0),
      row('time until all workers connected (ms)', flint.connectMs, baseline.connectMs, 0),
      row('server CPU time during registration (ms)', flint.serverCpuMs, baseline.serverCpuMs, 0),
      row('client processes CPU time, summed (ms)', flint.clientCpuMs, baseline.clientCpuMs, 0),
      row('this process (list polling) CPU time (ms)', flint.observerCpuMs, baseline.observerCpuMs, 0),
      row('list polls until complete', flint.polls, baseline.polls, 0),
      row('server RSS growth per worker (KiB)', flint.rssPerWorkerKiB, baseline.rssPerWorkerKiB, 1, '≤ 100'),
      row('server heap+external growth per worker (KiB)', flint.heapPerWorkerKiB, baseline.heapPerWorkerKiB, 1),
      row('server RSS before → after (MiB)', flint.rssAfterMiB, baseline.rssAfterMiB, 1),
      row(`list latency, median of ${ROUNDS * LIST_CALLS} (ms)`, flint.listMedianMs, baseline.listMedianMs, 1, '≤ 50'),
      row(`list latency, max of ${ROUNDS * LIST_CALLS} (ms)`, flint.listMaxMs, baseline.listMaxMs, 1),
      row('list reply size (KiB)', flint.listBytes / KiB, baseline.listBytes / KiB, 0),
    ].map((r, i) => (i === 8 ? [r[0], `${fixed(flint.rssBeforeMiB, 1)} → ${r[1]}`, `${fixed(baseline.rssBeforeMiB, 1)} → ${r[2]}`, '', ''] : r)),
  );
  if (!flint.gc) console.log('\nnote: the engine child ran without --expose-gc; memory figures include garbage');
  console.log('\ntargets:');
  for (const t of targets) console.log(`  ${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${fixed(t.value, 1)}`);
  const pick = (r) => ({
    registerMs: round(r.registerMs, 0),
    connectMs: round(r.connectMs, 0),
    serverCpuMs: round(r.serverCpuMs, 0),
    clientCpuMs: round(r.clientCpuMs, 0),
    observerCpuMs: round(r.observerCpuMs, 0),
    polls: r.polls,
    rssPerWorkerKiB: round(r.rssPerWorkerKiB, 1),
    heapPerWorkerKiB: round(r.heapPerWorkerKiB, 1),
    rssBeforeMiB: round(r.rssBeforeMiB, 1),
    rssAfterMiB: round(r.rssAfterMiB, 1),
    listMedianMs: round(r.listMedianMs, 2),
    listMaxMs: round(r.listMaxMs, 2),
    listBytes: r.listBytes,
  });
  const summary = {
    bench: 'registry',
    workers: WORKERS,
    functionsPerWorker: FUNCTIONS,
    clientProcesses: PROCS,
    connectConcurrency: CONNECT,
    rounds: ROUNDS,
    flint: pick(flint),
    baseline: pick(baseline),
    perRound: {
      flint: runs.flint.map((r) => pick({ ...r, listMedianMs: median(r.listLatencies), listMaxMs: Math.max(...r.listLatencies) })),
      baseline: runs.baseline.map((r) => pick({ ...r, listMedianMs: median(r.listLatencies), listMaxMs: Math.max(...r.listLatencies) })),
    },
    ratios: {
      registerMs: round(flint.registerMs / baseline.registerMs, 3),
      rssPerWorker: round(flint.rssPerWorkerKiB / baseline.rssPerWorkerKiB, 3),
      listMedianMs: round(flint.listMedianMs / baseline.listMedianMs, 3),
    },
    targets: targets.map((t) => ({ name: t.name, value: round(t.value, 2), limit: t.limit, met: t.met })),
  };
  console.log(`\n${JSON.stringify(summary)}`);
  if (process.env.BENCH_STRICT === '1' && targets.some((t) => !t.met)) process.exitCode = 1;
} catch (err) {
  console.error(`\nbench/registry failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
}
