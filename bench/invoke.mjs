// bench/invoke: caller worker → engine → echo worker → engine → caller, against a bare `ws` echo
// (client → server → client) measured in the same run with the same closed-loop driver.
//
//   processes: this one (caller, load generator) | engine child | echo-worker child
//              this one (raw ws client)          | ws echo server child
//   informational: this one (raw ws client) | ws relay child | ws echo server child   (BENCH_RELAY=0 skips)
//
// Each level measures every system for BENCH_SECONDS in total, split into BENCH_ROUNDS rounds whose
// order alternates (baseline, relay, Flint, then Flint, relay, baseline, …) so a burst of background
// load hits all of them alike; each system warms up for BENCH_WARMUP_MS before its first round at a
// level and for 200 ms before the others.
//
// Engine config: the cases above run an engine with `modules: []` (the engine core alone, which serves
// worker → worker calls; no flint-observability). The relay traces nothing and keeps no metrics, so
// that engine is the fair comparison with it, and with the bare echo.
//
// Tracing cost: then, at BENCH_TRACING_LEVELS (default 1 and 16 in flight), the same echo through that
// engine and through a second one whose modules add flint-observability (a span per invocation, memory
// exporter, every trace sampled; its own echo worker, its own caller in this process), in alternating
// rounds like the cases above: calls/s, p50, and CPU per call of each process, with and without. Each of
// the two warms up for at least 5 s before its first round at a level (TRACING_WARMUP_MS: why).
// BENCH_WORKER_SPANS=1 has the echo worker's SDK record a span of its own per traced call and send it
// to the engine (its `spans` option, off by default), to measure that cost too.
//
//   processes: this one (second caller) | engine-traced child | echo-worker-traced child
//
// Python: then, at BENCH_LEVELS, the same echo from the same caller through the same engine to an echo
// worker written with the Python SDK (packages/python, bench/python/echo_worker.py), against a bare
// Python `websockets` echo server (bench/python/bare_echo.py, same {id, data} frames as the bare ws
// echo, driven by the same raw client), in alternating rounds: calls/s, p50, ratios and CPU per call.
// Skipped, with the reason, when no Python ≥ 3.11 with `websockets` is found (support/python.mjs).
//
//   processes: this one (caller) | engine child | python echo worker   /   this one (raw ws client) | python echo server
//
// Env: BENCH_SECONDS (measurement per level and system, default 5), BENCH_ROUNDS (default 5),
//      BENCH_WARMUP_MS (default 1000), BENCH_LEVELS (default "1,4,16,32,128"), BENCH_RELAY=0 (skip the relay),
//      BENCH_CPU_PROF=<dir> (profile the child processes), BENCH_STRICT=1 (exit 1 when a target is missed),
//      BENCH_VALIDATE=0 (skip the informational run of the same echo with payload validation on),
//      BENCH_TRACING_LEVELS (default "1,16"), BENCH_TRACING=0 (skip the tracing-cost comparison),
//      BENCH_WORKER_SPANS=1 (the echo workers record spans of their own),
//      BENCH_PYTHON (0 skips the Python part; a path picks the interpreter; default: the first usable one).
import { deepStrictEqual } from 'node:assert';
import { fileURLToPath } from 'node:url';
import { registerWorker } from '@flint/sdk';
import { RawEchoClient, benchSeconds, closedLoop, fixed, printTable, round, summarize } from './support/measure.mjs';
import { childExecArgv, request, startChild, stopChild } from './support/proc.mjs';
import { findPython, printPython, startPython } from './support/python.mjs';
import { OBSERVABILITY, expectTracing } from './support/tracing.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const seconds = benchSeconds(5);
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const rounds = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 5)) || 1);
const levels = (process.env.BENCH_LEVELS ?? '1,4,16,32,128').split(',').map(Number);
const withRelay = process.env.BENCH_RELAY !== '0';
const withValidation = process.env.BENCH_VALIDATE !== '0';
const tracingLevels =
  process.env.BENCH_TRACING === '0'
    ? []
    : (process.env.BENCH_TRACING_LEVELS ?? '1,16')
        .split(',')
        .map(Number)
        .filter((n) => Number.isInteger(n) && n > 0);
// The engine of the cases measured against the baselines: the core alone (worker → worker calls need
// no module), i.e. without flint-observability, like the relay, which traces nothing.
const PLAIN_MODULES = [];
// The traced engine of the tracing-cost comparison: the same modules plus flint-observability.
const TRACED_MODULES = [...PLAIN_MODULES, OBSERVABILITY];
const payload = { text: 'hello flint', n: 42, ok: true, tags: ['a', 'b'] };
const FUNCTION_ID = 'bench::echo';
const VALIDATED_ID = 'bench::echo-validated';
const PYTHON_ID = 'bench::echo-python';
/**
 * The tracing comparison's first warm-up per system and level. The traced engine, its echo worker and its
 * caller sit idle through the main levels (minutes in a full run) while the engine without tracing is
 * busy; V8 shrinks an idle process's heap meanwhile (its memory reducer: "Mark-Compact (reduce)" in
 * --trace-gc), and a heap that has to grow again costs more GC for its first seconds. A 1 s warm-up
 * charged that to tracing (with/without 0.81-0.84 at 1 in flight where 4-5 s warm-ups gave 0.90-1.05).
 */
const TRACING_WARMUP_MS = 5000;

const children = [];
const start = async (file, opts) => {
  const handle = await startChild(here(file), opts);
  children.push(handle);
  return handle;
};

/** An engine child with `modules`, an echo worker child on it and a caller worker in this process. */
async function flint(suffix, modules) {
  const engine = await start('./support/engine-process.mjs', {
    name: `engine${suffix}`,
    env: { BENCH_ENGINE_CONFIG: JSON.stringify({ modules }) },
    execArgv: childExecArgv(`engine${suffix}`),
  });
  const echoWorker = await start('./support/echo-worker.mjs', {
    name: `echo-worker${suffix}`,
    args: [engine.info.url],
    execArgv: childExecArgv(`echo-worker${suffix}`),
  });
  const caller = registerWorker(engine.info.url, { workerName: `bench-caller${suffix}`, announce: false });
  callers.push(caller);
  await caller.waitConnected();
  await waitForFunction(caller, FUNCTION_ID);
  deepStrictEqual(await caller.trigger({ function_id: FUNCTION_ID, payload }), payload);
  return { engine, echoWorker, caller };
}

const callers = [];
let raw;
let relayClient;
let pyRaw;
try {
  // Flint: engine and echo worker each in their own process; the caller is this process.
  const { engine, echoWorker, caller } = await flint('', PLAIN_MODULES);
  await expectTracing(engine, false);
  const traced = tracingLevels.length > 0 ? await flint('-traced', TRACED_MODULES) : undefined;
  if (traced) await expectTracing(traced.engine, true);

  // Baseline: bare ws echo server, and (informational) a bare ws relay in front of a second one.
  const echo = await start('./support/ws-echo-server.mjs', { name: 'ws-echo', execArgv: childExecArgv('ws-echo') });
  raw = new RawEchoClient(echo.info.url);
  await raw.opened;
  deepStrictEqual(await raw.call(payload), payload);
  let echo2;
  let relay;
  if (withRelay) {
    echo2 = await start('./support/ws-echo-server.mjs', { name: 'ws-echo-upstream' });
    relay = await start('./support/ws-relay.mjs', { name: 'ws-relay', args: [echo2.info.url], execArgv: childExecArgv('ws-relay') });
    relayClient = new RawEchoClient(relay.info.url);
    await relayClient.opened;
    deepStrictEqual(await relayClient.call(payload), payload);
  }

  const systems = [
    { name: 'baseline', call: () => raw.call(payload), router: undefined, end: echo },
    ...(withRelay ? [{ name: 'relay', call: () => relayClient.call(payload), router: relay, end: echo2 }] : []),
    { name: 'flint', call: () => caller.trigger({ function_id: FUNCTION_ID, payload }), router: engine, end: echoWorker },
    ...(withValidation ? [{ name: 'validated', call: () => caller.trigger({ function_id: VALIDATED_ID, payload }), router: engine, end: echoWorker }] : []),
  ];
  if (withValidation) deepStrictEqual(await caller.trigger({ function_id: VALIDATED_ID, payload }), payload);
  // CPU time (ms) of this process, the router process and the echo process, to charge per call.
  const cpuOf = async (system) => {
    const { user, system: sys } = process.cpuUsage();
    const child = async (h) => (h ? (h.cpuMs?.() ?? (await request(h.child, { type: 'cpu' })).cpuMs) : 0);
    return [(user + sys) / 1000, await child(system.router), await child(system.end)];
  };

  /**
   * Measures `list` (systems) at `inFlight` calls in flight in alternating rounds. Returns the raw
   * closedLoop samples by system name and the CPU µs per call by name: [caller, router, echo end].
   */
  const measure = async (what, inFlight, list, firstWarmupMs = warmupMs) => {
    process.stderr.write(`  ${what}: ${inFlight} in flight, ${rounds} round${rounds === 1 ? '' : 's'}:`);
    const samples = Object.fromEntries(list.map((s) => [s.name, []]));
    const cpu = Object.fromEntries(list.map((s) => [s.name, { ms: [0, 0, 0], calls: 0 }]));
    for (let roundNo = 0; roundNo < rounds; roundNo++) {
      const order = roundNo % 2 === 0 ? list : [...list].reverse();
      for (const system of order) {
        const cpuBefore = await cpuOf(system);
        const sample = await closedLoop(system.call, {
          concurrency: inFlight,
          warmupMs: samples[system.name].length === 0 ? firstWarmupMs : 200,
          durationMs: (seconds * 1000) / rounds,
        });
        const cpuAfter = await cpuOf(system);
        samples[system.name].push(sample);
        cpu[system.name].calls += sample.completed;
        for (let i = 0; i < 3; i++) cpu[system.name].ms[i] += cpuAfter[i] - cpuBefore[i];
      }
      process.stderr.write(` ${roundNo + 1}`);
    }
    process.stderr.write('\n');
    const cpuUs = Object.fromEntries(Object.entries(cpu).map(([name, c]) => [name, c.ms.map((ms) => (ms * 1000) / c.calls)]));
    return { samples, cpuUs };
  };

  const results = [];
  for (const inFlight of levels) {
    const { samples, cpuUs } = await measure('invoke', inFlight, systems);
    const flint = summarize(samples.flint);
    const baseline = summarize(samples.baseline);
    results.push({
      inFlight,
      flint,
      baseline,
      relay: withRelay ? summarize(samples.relay) : undefined,
      validated: withValidation ? summarize(samples.validated) : undefined,
      cpuUs,
      throughputRatio: flint.callsPerSec / baseline.callsPerSec,
      p50Ratio: flint.p50Us / baseline.p50Us,
    });
  }

  // Tracing cost: the engine above (no flint-observability) against the traced one, alternating.
  const tracing = [];
  let spanStore;
  if (traced) {
    const plainSystem = systems.find((s) => s.name === 'flint');
    const tracedSystem = {
      name: 'traced',
      call: () => traced.caller.trigger({ function_id: FUNCTION_ID, payload }),
      router: traced.engine,
      end: traced.echoWorker,
    };
    for (const inFlight of tracingLevels) {
      const { samples, cpuUs } = await measure('tracing cost', inFlight, [plainSystem, tracedSystem], Math.max(warmupMs, TRACING_WARMUP_MS));
      const without = summarize(samples.flint);
      const withTracing = summarize(samples.traced);
      tracing.push({
        inFlight,
        without,
        with: withTracing,
        ratio: withTracing.callsPerSec / without.callsPerSec,
        p50Ratio: withTracing.p50Us / without.p50Us,
        cpuUs: { without: cpuUs.flint, with: cpuUs.traced },
      });
    }
    // The traced engine did keep spans (and the other has no span store at all).
    spanStore = await expectTracing(traced.engine, true);
    await expectTracing(engine, false);
  }

  // Python: the same caller and engine → an echo worker on the Python SDK, against a bare Python
  // `websockets` echo server driven by the same raw client as the bare ws echo. Never fails the bench.
  const python = findPython();
  if (!python.skipped) {
    python.levels = [];
    try {
      const startPy = async (file, opts) => {
        const handle = await startPython(python.executable, file, opts);
        children.push(handle);
        return handle;
      };
      const pyWorker = await startPy('echo_worker.py', { name: 'python-echo-worker', args: [engine.info.url] });
      await waitForFunction(caller, PYTHON_ID);
      deepStrictEqual(await caller.trigger({ function_id: PYTHON_ID, payload }), payload);
      const pyEcho = await startPy('bare_echo.py', { name: 'python-bare-echo' });
      pyRaw = new RawEchoClient(pyEcho.info.url);
      await pyRaw.opened;
      deepStrictEqual(await pyRaw.call(payload), payload);
      const pySystems = [
        { name: 'bare', call: () => pyRaw.call(payload), router: undefined, end: pyEcho },
        { name: 'flint', call: () => caller.trigger({ function_id: PYTHON_ID, payload }), router: engine, end: pyWorker },
      ];
      for (const inFlight of levels) {
        const { samples, cpuUs } = await measure('python', inFlight, pySystems);
        python.levels.push({ inFlight, flint: summarize(samples.flint), bare: summarize(samples.bare), cpuUs });
      }
    } catch (err) {
      python.failed = err instanceof Error ? err.message : String(err);
    }
  }

  console.log(
    `\nbench/invoke: echo round trip, closed loop, ${seconds} s per level and system in ${rounds} alternating rounds, ${warmupMs} ms warm-up (latencies in µs)`,
  );
  console.log('Flint = caller worker → engine → echo worker (3 processes); baseline = bare ws client → ws echo server (2 processes)');
  console.log(`Flint's engine: modules ${JSON.stringify(PLAIN_MODULES)} (no flint-observability: like the relay and the bare echo, it traces nothing)\n`);
  printTable(
    ['in flight', 'Flint calls/s', 'baseline calls/s', 'ratio', 'Flint p50', 'Flint p99', 'base p50', 'base p99', 'p50 ratio'],
    results.map((r) => [
      r.inFlight,
      fixed(r.flint.callsPerSec),
      fixed(r.baseline.callsPerSec),
      fixed(r.throughputRatio, 2),
      fixed(r.flint.p50Us, 1),
      fixed(r.flint.p99Us, 1),
      fixed(r.baseline.p50Us, 1),
      fixed(r.baseline.p99Us, 1),
      fixed(r.p50Ratio, 2),
    ]),
  );
  if (withRelay) {
    console.log('\ninformational: bare ws relay (client → relay → echo server, 3 processes, same topology as Flint)\n');
    printTable(
      ['in flight', 'relay calls/s', 'relay p50', 'relay p99', 'Flint/relay calls/s', 'Flint/relay p50'],
      results.map((r) => [
        r.inFlight,
        fixed(r.relay.callsPerSec),
        fixed(r.relay.p50Us, 1),
        fixed(r.relay.p99Us, 1),
        fixed(r.flint.callsPerSec / r.relay.callsPerSec, 2),
        fixed(r.flint.p50Us / r.relay.p50Us, 2),
      ]),
    );
  }

  if (withValidation) {
    console.log('\ninformational: the same echo with payload validation on (metadata.validate: true, Ajv against request_format)\n');
    printTable(
      ['in flight', 'validated calls/s', 'validated/off calls/s', 'engine CPU µs/call off', 'engine CPU µs/call on', 'on/off engine CPU'],
      results.map((r) => [
        r.inFlight,
        fixed(r.validated.callsPerSec),
        fixed(r.validated.callsPerSec / r.flint.callsPerSec, 2),
        fixed(r.cpuUs.flint[1], 1),
        fixed(r.cpuUs.validated[1], 1),
        fixed(r.cpuUs.validated[1] / r.cpuUs.flint[1], 2),
      ]),
    );
  }

  console.log('\nCPU time per call (µs; every call of every round, warm-ups included; noise-resistant, unlike wall time)\n');
  const cpuRows = [];
  for (const r of results) {
    for (const system of systems) {
      const [c, m, e] = r.cpuUs[system.name];
      const label = {
        baseline: 'baseline (ws client → ws echo)',
        relay: 'relay (ws client → ws relay → ws echo)',
        flint: 'Flint (caller → engine → echo worker)',
        validated: 'Flint, payload validated',
      }[system.name];
      cpuRows.push([r.inFlight, label, fixed(c, 1), system.router ? fixed(m, 1) : '-', fixed(e, 1), fixed(c + m + e, 1)]);
    }
  }
  printTable(['in flight', 'system', 'caller', 'router', 'echo end', 'total'], cpuRows);

  if (tracing.length > 0) {
    console.log(
      `\ntracing cost: the same echo, engine without flint-observability (modules ${JSON.stringify(PLAIN_MODULES)}) vs with it (modules ${JSON.stringify(TRACED_MODULES)}), ${seconds} s per level and engine in ${rounds} alternating rounds (latencies in µs)\n`,
    );
    printTable(
      ['in flight', 'without calls/s', 'with calls/s', 'with/without', 'without p50', 'with p50', 'p50 with/without', 'without p99', 'with p99'],
      tracing.map((t) => [
        t.inFlight,
        fixed(t.without.callsPerSec),
        fixed(t.with.callsPerSec),
        fixed(t.ratio, 2),
        fixed(t.without.p50Us, 1),
        fixed(t.with.p50Us, 1),
        fixed(t.p50Ratio, 2),
        fixed(t.without.p99Us, 1),
        fixed(t.with.p99Us, 1),
      ]),
    );
    console.log('\nCPU µs per call, without → with tracing (every call of every round, warm-ups included)\n');
    const total = (us) => us[0] + us[1] + us[2];
    printTable(
      [
        'in flight',
        'engine without',
        'engine with',
        'engine with/without',
        'caller without',
        'caller with',
        'echo without',
        'echo with',
        'total without',
        'total with',
      ],
      tracing.map((t) => [
        t.inFlight,
        fixed(t.cpuUs.without[1], 1),
        fixed(t.cpuUs.with[1], 1),
        fixed(t.cpuUs.with[1] / t.cpuUs.without[1], 2),
        fixed(t.cpuUs.without[0], 1),
        fixed(t.cpuUs.with[0], 1),
        fixed(t.cpuUs.without[2], 1),
        fixed(t.cpuUs.with[2], 1),
        fixed(total(t.cpuUs.without), 1),
        fixed(total(t.cpuUs.with), 1),
      ]),
    );
    console.log(
      `(traced engine's span store at the end: ${spanStore.spans} spans in ${spanStore.traces} traces, ${fixed(spanStore.bytes / 1024 / 1024, 1)} MiB; ${spanStore.dropped_by_count} dropped by the count cap, ${spanStore.dropped_by_bytes} by the byte cap)`,
    );
  }

  const pythonSummary = printPython(python);

  const at = (n) => results.find((r) => r.inFlight === n);
  const targets = [];
  if (at(128))
    targets.push({ name: 'calls/s at 128 in flight ≥ 0.45 × baseline', value: at(128).throughputRatio, limit: 0.45, met: at(128).throughputRatio >= 0.45 });
  if (at(1)) targets.push({ name: 'p50 at 1 in flight ≤ 2.0 × baseline p50', value: at(1).p50Ratio, limit: 2, met: at(1).p50Ratio <= 2 });
  // The relay is the floor for Flint's topology (same processes, same hops): Flint should match it.
  if (withRelay)
    for (const r of results) {
      const v = r.flint.callsPerSec / r.relay.callsPerSec;
      targets.push({ name: `calls/s at ${r.inFlight} in flight ≥ 0.95 × bare ws relay`, value: v, limit: 0.95, met: v >= 0.95 });
    }
  for (const t of tracing)
    targets.push({
      name: `tracing every call costs ≤ 15% throughput at ${t.inFlight} in flight (with/without ≥ 0.85)`,
      value: t.ratio,
      limit: 0.85,
      met: t.ratio >= 0.85,
    });
  console.log('\ntargets:');
  for (const t of targets) console.log(`  ${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${fixed(t.value, 2)}`);

  const summary = {
    bench: 'invoke',
    seconds,
    rounds,
    warmupMs,
    levels: results.map((r) => ({
      inFlight: r.inFlight,
      flint: { callsPerSec: round(r.flint.callsPerSec, 0), p50Us: round(r.flint.p50Us, 1), p99Us: round(r.flint.p99Us, 1), calls: r.flint.calls },
      baseline: {
        callsPerSec: round(r.baseline.callsPerSec, 0),
        p50Us: round(r.baseline.p50Us, 1),
        p99Us: round(r.baseline.p99Us, 1),
        calls: r.baseline.calls,
      },
      relay: r.relay
        ? { callsPerSec: round(r.relay.callsPerSec, 0), p50Us: round(r.relay.p50Us, 1), p99Us: round(r.relay.p99Us, 1), calls: r.relay.calls }
        : undefined,
      validated: r.validated ? { callsPerSec: round(r.validated.callsPerSec, 0), p50Us: round(r.validated.p50Us, 1), calls: r.validated.calls } : undefined,
      throughputRatio: round(r.throughputRatio, 3),
      p50Ratio: round(r.p50Ratio, 3),
      cpuUsPerCall: Object.fromEntries(
        Object.entries(r.cpuUs).map(([name, [c, m, e]]) => [name, { caller: round(c, 1), router: round(m, 1), end: round(e, 1), total: round(c + m + e, 1) }]),
      ),
    })),
    engineModules: PLAIN_MODULES,
    tracing: traced
      ? {
          modules: { without: PLAIN_MODULES, with: TRACED_MODULES },
          levels: tracing.map((t) => {
            const cpuOfCall = ([c, m, e]) => ({ caller: round(c, 1), engine: round(m, 1), echo: round(e, 1), total: round(c + m + e, 1) });
            const stats = (s) => ({ callsPerSec: round(s.callsPerSec, 0), p50Us: round(s.p50Us, 1), p99Us: round(s.p99Us, 1), calls: s.calls });
            return {
              inFlight: t.inFlight,
              without: stats(t.without),
              with: stats(t.with),
              ratio: round(t.ratio, 3),
              p50Ratio: round(t.p50Ratio, 3),
              cpuUsPerCall: { without: cpuOfCall(t.cpuUs.without), with: cpuOfCall(t.cpuUs.with) },
            };
          }),
          spanStore,
        }
      : undefined,
    targets: targets.map((t) => ({ name: t.name, value: round(t.value, 3), limit: t.limit, met: t.met })),
    python: pythonSummary,
  };
  console.log(`\n${JSON.stringify(summary)}`);
  if (process.env.BENCH_STRICT === '1' && (targets.some((t) => !t.met) || python.failed)) process.exitCode = 1;
} catch (err) {
  console.error(`bench/invoke failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  raw?.close();
  relayClient?.close();
  pyRaw?.close();
  await Promise.all(callers.map((c) => c.shutdown()));
  await Promise.all(children.reverse().map((c) => stopChild(c)));
}

async function waitForFunction(worker, id, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { functions } = await worker.trigger({ function_id: 'engine::functions::list', payload: {} });
    if (functions.some((f) => f.function_id === id)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${id} was not registered within ${timeoutMs} ms`);
}
