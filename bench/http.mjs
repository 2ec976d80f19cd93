// bench/http: autocannon (its Node API, in this process) against a GET route of flint-http answered by
// a worker, beside a bare node:http server answering the same JSON, measured in the same run.
//
//   processes: this one (autocannon) | engine child (flint-http, 1 route)     | http-worker child (1 route)
//              this one (autocannon) | engine child (flint-http, 1,000 routes) | http-worker child (1,000 routes)
//              this one (autocannon) | engine child (flint-http + flint-observability, 1 route) | http-worker child
//              this one (autocannon) | bare node:http server child
//
// Cases (connections = requests in flight; one request per connection at a time, keep-alive):
//   64 connections: bare, Flint with 1 route, Flint with 1,000 routes registered (requests all to the
//                   measured route), and the same engine with requests spread over all 1,000 routes;
//   16, 8 connections and 1 connection: bare and Flint with 1 route (p50 at 8 vs 1: Nagle/delayed-ACK check).
// Tracing cost: at 64 (BENCH_HTTP_CONNECTIONS) and 8 connections, also "Flint, 1 route, traced": an engine
// with flint-http plus flint-observability (a span per request and invocation, memory exporter, every
// trace sampled; BENCH_WORKER_SPANS=1 has the worker's SDK record its own span per call and send it,
// its `spans` option, off by default), in the same alternating rounds; "Flint, 1 route" (flint-http only) is
// the without. BENCH_TRACING=0 skips it.
// Each system gets BENCH_SECONDS (default 10) of measurement per case, split into BENCH_ROUNDS
// (default 5) autocannon runs whose order alternates (bare, Flint …, then … Flint, bare) so background
// load hits all of them alike; before its first round at a case each system gets an unrecorded
// BENCH_WARMUP_MS (default 3000) run: processes here run 20-30% slower in their first seconds, bare
// node:http included, so a short warm-up charges that to whichever system is measured first. req/s
// and latencies (every 2xx response, recorded by this process with sub-ms resolution) are totals
// over the rounds.
//
// Env: BENCH_SECONDS (10), BENCH_ROUNDS (5), BENCH_WARMUP_MS (3000), BENCH_HTTP_ROUTES (1000),
//      BENCH_HTTP_CONNECTIONS (64), BENCH_CPU_PROF=<dir> (profile the children), BENCH_STRICT=1, BENCH_TRACING=0.
import { deepStrictEqual } from 'node:assert';
import { fileURLToPath } from 'node:url';
import { load } from './support/autocannon.mjs';
import { HELLO, HELLO_PATH, routePaths } from './support/http-shared.mjs';
import { benchSeconds, fixed, percentile, printTable, round } from './support/measure.mjs';
import { childExecArgv, request, startChild, stopChild } from './support/proc.mjs';
import { OBSERVABILITY, expectTracing } from './support/tracing.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const envNumber = (name, fallback) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const seconds = benchSeconds(10);
const rounds = Math.max(1, Math.floor(envNumber('BENCH_ROUNDS', 5)));
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 3000);
const ROUTES = Math.max(2, Math.floor(envNumber('BENCH_HTTP_ROUTES', 1000)));
const CONNECTIONS = Math.floor(envNumber('BENCH_HTTP_CONNECTIONS', 64));
const roundSeconds = Math.max(0.1, Math.round((seconds / rounds) * 10) / 10);
const withTracing = process.env.BENCH_TRACING !== '0';

const children = [];
const start = async (file, opts) => {
  const handle = await startChild(here(file), opts);
  children.push(handle);
  return handle;
};
// The engines' modules: flint-http alone; the traced engine of the tracing-cost rows adds flint-observability.
const httpModules = [{ name: 'flint-http', config: { port: 0 } }];
const tracedModules = [...httpModules, OBSERVABILITY];

/** An engine with flint-http (plus flint-observability when `traced`) and a worker registering `routes` routes; resolves with the http base URL. */
async function flint(routes, { traced = false } = {}) {
  const role = `${routes}-route${routes === 1 ? '' : 's'}${traced ? '-traced' : ''}`;
  const engine = await start('./support/engine-process.mjs', {
    name: `engine-${role}`,
    env: { BENCH_ENGINE_CONFIG: JSON.stringify({ modules: traced ? tracedModules : httpModules }) },
    execArgv: childExecArgv(`engine-${role}`),
  });
  const worker = await start('./support/http-worker.mjs', {
    name: `http-worker-${role}`,
    args: [engine.info.url, String(routes)],
    execArgv: childExecArgv(`http-worker-${role}`),
  });
  const base = engine.info.listeners.find((l) => l.name === 'http')?.url;
  if (!base) throw new Error('the engine reports no http listener');
  await expectTracing(engine, traced);
  return { base, engine, processes: [engine, worker] };
}

try {
  const bare = await start('./support/bare-http-server.mjs', { name: 'bare-http', execArgv: childExecArgv('bare-http') });
  const one = await flint(1);
  const many = await flint(ROUTES);
  const traced = withTracing ? await flint(1, { traced: true }) : undefined;
  const spread = routePaths(ROUTES).map((r) => ({ method: 'GET', path: r.path }));
  for (const [base, path] of [
    [bare.info.url, HELLO_PATH],
    [one.base, HELLO_PATH],
    [many.base, HELLO_PATH],
    [many.base, spread[1].path],
    [many.base, spread[2].path],
    [many.base, spread.at(-1).path],
    ...(traced ? [[traced.base, HELLO_PATH]] : []),
  ]) {
    const res = await fetch(base + path);
    if (res.status !== 200) throw new Error(`GET ${base}${path}: ${res.status} ${await res.text()}`);
    deepStrictEqual(await res.json(), HELLO);
  }

  const systems = {
    bare: { label: 'bare node:http', url: bare.info.url + HELLO_PATH, processes: [bare] },
    flint: { label: 'Flint, 1 route', url: one.base + HELLO_PATH, processes: one.processes },
    flint1k: { label: `Flint, ${ROUTES} routes`, url: many.base + HELLO_PATH, processes: many.processes },
    flint1kSpread: { label: `Flint, ${ROUTES} routes, spread`, url: many.base, requests: spread, processes: many.processes },
    ...(traced ? { flintTraced: { label: 'Flint, 1 route, traced', url: traced.base + HELLO_PATH, processes: traced.processes } } : {}),
  };
  const tracedCase = traced ? ['flintTraced'] : [];
  const cases = [
    { connections: CONNECTIONS, systems: ['bare', 'flint', 'flint1k', 'flint1kSpread', ...tracedCase] },
    { connections: 16, systems: ['bare', 'flint'] },
    { connections: 8, systems: ['bare', 'flint', ...tracedCase] },
    { connections: 1, systems: ['bare', 'flint'] },
  ];
  // CPU time so far (ms): [this process (autocannon), server or engine, worker]
  const cpuOf = async (processes) => {
    const { user, system } = process.cpuUsage();
    return [(user + system) / 1000, ...(await Promise.all(processes.map(async (p) => (await request(p.child, { type: 'cpu' })).cpuMs)))];
  };

  const results = [];
  for (const c of cases) {
    process.stderr.write(`  http: ${c.connections} connection${c.connections === 1 ? '' : 's'}, ${rounds} × ${roundSeconds} s:`);
    const acc = Object.fromEntries(
      c.systems.map((name) => [name, { latencies: [], ok: 0, seconds: 0, bad: 0, cpuMs: [0, ...systems[name].processes.map(() => 0)], requests: 0 }]),
    );
    for (const name of c.systems) {
      const s = systems[name];
      if (warmupMs > 0) await load({ url: s.url, requests: s.requests, connections: c.connections, seconds: Math.max(0.1, warmupMs / 1000) });
    }
    for (let roundNo = 0; roundNo < rounds; roundNo++) {
      const order = roundNo % 2 === 0 ? c.systems : [...c.systems].reverse();
      for (const name of order) {
        const s = systems[name];
        const a = acc[name];
        const before = await cpuOf(s.processes);
        const r = await load({ url: s.url, requests: s.requests, connections: c.connections, seconds: roundSeconds });
        const after = await cpuOf(s.processes);
        a.latencies.push(r.latenciesMs);
        a.ok += r.ok;
        a.seconds += r.seconds;
        a.bad += r.non2xx + r.errors + r.timeouts;
        a.requests += r.ok + r.non2xx;
        for (let i = 0; i < after.length; i++) a.cpuMs[i] += after[i] - before[i];
      }
      process.stderr.write(` ${roundNo + 1}`);
    }
    process.stderr.write('\n');
    const summary = {};
    for (const name of c.systems) {
      const a = acc[name];
      const all = new Float64Array(a.latencies.reduce((n, l) => n + l.length, 0));
      let offset = 0;
      for (const l of a.latencies) {
        all.set(l, offset);
        offset += l.length;
      }
      all.sort();
      summary[name] = {
        rps: a.ok / a.seconds,
        p50: percentile(all, 50),
        p99: percentile(all, 99),
        max: all.length ? all[all.length - 1] : Number.NaN,
        // Responses of 40 ms or more: the signature of a Nagle / delayed-ACK stall.
        stalls: all.length - lowerBound(all, 40),
        responses: a.ok,
        bad: a.bad,
        // µs of CPU per request: [autocannon, server or engine, worker]
        cpuUs: a.cpuMs.map((ms) => (ms * 1000) / Math.max(1, a.requests)),
      };
    }
    results.push({ connections: c.connections, summary });
  }

  console.log(
    `\nbench/http: GET ${HELLO_PATH} (${JSON.stringify(HELLO).length}-byte JSON), autocannon keep-alive connections, ${seconds} s per case and system in ${rounds} alternating rounds, ${warmupMs} ms warm-up (latencies in ms)`,
  );
  console.log(
    `Flint = autocannon → engine (flint-http) → worker process and back; bare = autocannon → node:http server. "spread": requests cycle through all ${ROUTES} routes`,
  );
  if (traced) console.log('"traced": the engine also loads flint-observability (enabled, memory exporter, sampling_ratio 1)');
  console.log('');
  const rows = [];
  for (const r of results) {
    const bareRps = r.summary.bare.rps;
    for (const [name, s] of Object.entries(r.summary)) {
      const [loadCpu, serverCpu, workerCpu] = s.cpuUs;
      rows.push([
        r.connections,
        systems[name].label,
        fixed(s.rps),
        name === 'bare' ? '-' : fixed(s.rps / bareRps, 2),
        fixed(s.p50, 2),
        fixed(s.p99, 2),
        fixed(s.max, 1),
        s.stalls,
        fixed(serverCpu, 0),
        workerCpu === undefined ? '-' : fixed(workerCpu, 0),
        fixed(loadCpu, 0),
        s.bad,
      ]);
    }
  }
  printTable(
    ['conns', 'system', 'req/s', 'Flint/bare', 'p50', 'p99', 'max', '≥ 40 ms', 'server CPU µs/req', 'worker CPU µs/req', 'autocannon CPU µs/req', 'errors'],
    rows,
  );
  console.log('(CPU µs/req: the engine or bare server process, the worker process and this one (autocannon); every request of the measured rounds)');

  const at = (n) => results.find((r) => r.connections === n)?.summary;
  const main = at(CONNECTIONS);
  const targets = [
    {
      name: `req/s at ${CONNECTIONS} connections ≥ 0.55 × bare`,
      value: main.flint.rps / main.bare.rps,
      limit: 0.55,
      met: main.flint.rps / main.bare.rps >= 0.55,
    },
    { name: `p99 at ${CONNECTIONS} connections ≤ 25 ms`, value: main.flint.p99, limit: 25, met: main.flint.p99 <= 25 },
    {
      name: `req/s with ${ROUTES} routes ≥ 0.9 × 1 route`,
      value: main.flint1k.rps / main.flint.rps,
      limit: 0.9,
      met: main.flint1k.rps / main.flint.rps >= 0.9,
    },
  ];
  // Few requests in flight: the batching of frames must not cost a turn of latency per hop.
  if (at(8)) {
    const v = at(8).flint.rps / at(8).bare.rps;
    targets.push({ name: 'req/s at 8 connections ≥ 0.45 × bare', value: v, limit: 0.45, met: v >= 0.45 });
  }
  if (at(8) && at(1)) {
    const v = at(8).flint.p50 / at(1).flint.p50;
    targets.push({ name: 'p50 at 8 connections ≤ 3 × p50 at 1 connection', value: v, limit: 3, met: v <= 3 });
  }
  const tracing = results
    .filter((r) => r.summary.flintTraced)
    .map((r) => ({
      connections: r.connections,
      without: r.summary.flint,
      with: r.summary.flintTraced,
      ratio: r.summary.flintTraced.rps / r.summary.flint.rps,
    }));
  let spanStore;
  if (tracing.length > 0) {
    spanStore = await expectTracing(traced.engine, true);
    console.log(
      `\ntracing cost: Flint, 1 route, engine modules ${JSON.stringify(httpModules)} (without) vs ${JSON.stringify(tracedModules)} (with); latencies in ms\n`,
    );
    printTable(
      [
        'conns',
        'without req/s',
        'with req/s',
        'with/without',
        'without p50',
        'with p50',
        'without p99',
        'with p99',
        'engine CPU µs/req without',
        'with',
        'worker CPU µs/req without',
        'with',
      ],
      tracing.map((t) => [
        t.connections,
        fixed(t.without.rps),
        fixed(t.with.rps),
        fixed(t.ratio, 2),
        fixed(t.without.p50, 2),
        fixed(t.with.p50, 2),
        fixed(t.without.p99, 2),
        fixed(t.with.p99, 2),
        fixed(t.without.cpuUs[1], 0),
        fixed(t.with.cpuUs[1], 0),
        fixed(t.without.cpuUs[2], 0),
        fixed(t.with.cpuUs[2], 0),
      ]),
    );
    console.log(
      `(traced engine's span store at the end: ${spanStore.spans} spans in ${spanStore.traces} traces; ${spanStore.dropped_by_count} dropped by the count cap, ${spanStore.dropped_by_bytes} by the byte cap)`,
    );
    for (const t of tracing)
      targets.push({
        name: `tracing every request costs ≤ 15% throughput at ${t.connections} connections (with/without ≥ 0.85)`,
        value: t.ratio,
        limit: 0.85,
        met: t.ratio >= 0.85,
      });
  }
  const errors = results.reduce((n, r) => n + Object.values(r.summary).reduce((m, s) => m + s.bad, 0), 0);
  console.log('\ntargets:');
  for (const t of targets) console.log(`  ${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${fixed(t.value, 2)}`);
  // The spread variant is reported, not judged: cycling through 1,000 request templates makes
  // autocannon itself (on the same 2 cores) use about 2.5x the CPU per request, which lowers req/s
  // for reasons outside the engine. The engine's own CPU per request is the fair comparison.
  console.log(
    `  (informational: requests spread over all ${ROUTES} routes: ${fixed(main.flint1kSpread.rps / main.flint.rps, 2)} × the 1-route req/s; ` +
      `engine CPU per request ${fixed(main.flint1kSpread.cpuUs[1] / main.flint.cpuUs[1], 2)} × the 1-route figure)`,
  );
  if (at(8) && at(1)) {
    console.log(
      `  (informational: bare p50 at 8 connections = ${fixed(at(8).bare.p50 / at(1).bare.p50, 2)} × its p50 at 1; Flint's floor at 8 connections by Little's law, 8 ÷ its req/s = ${fixed((8 / at(8).flint.rps) * 1000, 2)} ms; stalls show as responses ≥ 40 ms)`,
    );
  }
  if (errors > 0) console.log(`  (${errors} failed requests: non-2xx, errors or time-outs)`);

  const out = {
    bench: 'http',
    seconds,
    rounds,
    warmupMs,
    routes: ROUTES,
    engineModules: httpModules,
    tracing: traced
      ? {
          modules: { without: httpModules, with: tracedModules },
          cases: tracing.map((t) => ({ connections: t.connections, ratio: round(t.ratio, 3) })),
          spanStore,
        }
      : undefined,
    cases: results.map((r) => ({
      connections: r.connections,
      systems: Object.fromEntries(
        Object.entries(r.summary).map(([name, s]) => [
          name,
          {
            rps: round(s.rps, 0),
            p50Ms: round(s.p50, 3),
            p99Ms: round(s.p99, 3),
            maxMs: round(s.max, 3),
            atLeast40Ms: s.stalls,
            responses: s.responses,
            errors: s.bad,
            cpuUsPerReq: Object.fromEntries(s.cpuUs.map((v, i) => [['autocannon', name === 'bare' ? 'server' : 'engine', 'worker'][i], round(v, 1)])),
          },
        ]),
      ),
    })),
    targets: targets.map((t) => ({ name: t.name, value: round(t.value, 3), limit: t.limit, met: t.met })),
  };
  console.log(`\n${JSON.stringify(out)}`);
  if (process.env.BENCH_STRICT === '1' && (targets.some((t) => !t.met) || errors > 0)) process.exitCode = 1;
} catch (err) {
  console.error(`bench/http failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  await Promise.all(children.reverse().map((c) => stopChild(c)));
}

/** Index of the first element ≥ `value` in an ascending array. */
function lowerBound(sorted, value) {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
