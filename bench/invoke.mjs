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
// Env: BENCH_SECONDS (measurement per level and system, default 5), BENCH_ROUNDS (default 5),
//      BENCH_WARMUP_MS (default 1000), BENCH_LEVELS (default "1,4,16,32,128"), BENCH_RELAY=0 (skip the relay),
//      BENCH_CPU_PROF=<dir> (profile the child processes), BENCH_STRICT=1 (exit 1 when a target is missed),
//      BENCH_VALIDATE=0 (skip the informational run of the same echo with payload validation on).
import { deepStrictEqual } from 'node:assert';
import { fileURLToPath } from 'node:url';
import { registerWorker } from '@flint/sdk';
import { RawEchoClient, benchSeconds, closedLoop, fixed, printTable, round, summarize } from './support/measure.mjs';
import { childExecArgv, request, startChild, stopChild } from './support/proc.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const seconds = benchSeconds(5);
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const rounds = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 5)) || 1);
const levels = (process.env.BENCH_LEVELS ?? '1,4,16,32,128').split(',').map(Number);
const withRelay = process.env.BENCH_RELAY !== '0';
const withValidation = process.env.BENCH_VALIDATE !== '0';
const payload = { text: 'hello flint', n: 42, ok: true, tags: ['a', 'b'] };
const FUNCTION_ID = 'bench::echo';
const VALIDATED_ID = 'bench::echo-validated';

const children = [];
const start = async (file, opts) => {
  const handle = await startChild(here(file), opts);
  children.push(handle);
  return handle;
};

let caller;
let raw;
let relayClient;
try {
  // Flint: engine and echo worker each in their own process; the caller is this process.
  const engine = await start('./support/engine-process.mjs', { name: 'engine', execArgv: childExecArgv('engine') });
  const echoWorker = await start('./support/echo-worker.mjs', { name: 'echo-worker', args: [engine.info.url], execArgv: childExecArgv('echo-worker') });
  caller = registerWorker(engine.info.url, { workerName: 'bench-caller', announce: false });
  await caller.waitConnected();
  await waitForFunction(caller, FUNCTION_ID);
  deepStrictEqual(await caller.trigger({ function_id: FUNCTION_ID, payload }), payload);

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
    const child = async (h) => (h ? (await request(h.child, { type: 'cpu' })).cpuMs : 0);
    return [(user + sys) / 1000, await child(system.router), await child(system.end)];
  };

  const results = [];
  for (const inFlight of levels) {
    process.stderr.write(`  invoke: ${inFlight} in flight, ${rounds} round${rounds === 1 ? '' : 's'}:`);
    const samples = Object.fromEntries(systems.map((s) => [s.name, []]));
    const cpu = Object.fromEntries(systems.map((s) => [s.name, { ms: [0, 0, 0], calls: 0 }]));
    for (let roundNo = 0; roundNo < rounds; roundNo++) {
      const order = roundNo % 2 === 0 ? systems : [...systems].reverse();
      for (const system of order) {
        const cpuBefore = await cpuOf(system);
        const sample = await closedLoop(system.call, {
          concurrency: inFlight,
          warmupMs: samples[system.name].length === 0 ? warmupMs : 200,
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
    const flint = summarize(samples.flint);
    const baseline = summarize(samples.baseline);
    // µs of CPU per call: [caller, router, echo end]
    const cpuUs = Object.fromEntries(Object.entries(cpu).map(([name, c]) => [name, c.ms.map((ms) => (ms * 1000) / c.calls)]));
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

  console.log(
    `\nbench/invoke: echo round trip, closed loop, ${seconds} s per level and system in ${rounds} alternating rounds, ${warmupMs} ms warm-up (latencies in µs)`,
  );
  console.log('Flint = caller worker → engine → echo worker (3 processes); baseline = bare ws client → ws echo server (2 processes)\n');
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

  const at = (n) => results.find((r) => r.inFlight === n);
  const targets = [];
  if (at(128))
    targets.push({ name: 'calls/s at 128 in flight ≥ 0.45 × baseline', value: at(128).throughputRatio, limit: 0.45, met: at(128).throughputRatio >= 0.45 });
  if (at(1)) targets.push({ name: 'p50 at 1 in flight ≤ 2.5 × baseline p50', value: at(1).p50Ratio, limit: 2.5, met: at(1).p50Ratio <= 2.5 });
  // The relay is the floor for Flint's topology (same processes, same hops): Flint should match it.
  if (withRelay)
    for (const r of results) {
      const v = r.flint.callsPerSec / r.relay.callsPerSec;
      targets.push({ name: `calls/s at ${r.inFlight} in flight ≥ 0.95 × bare ws relay`, value: v, limit: 0.95, met: v >= 0.95 });
    }
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
    targets: targets.map((t) => ({ name: t.name, value: round(t.value, 3), limit: t.limit, met: t.met })),
  };
  console.log(`\n${JSON.stringify(summary)}`);
  if (process.env.BENCH_STRICT === '1' && targets.some((t) => !t.met)) process.exitCode = 1;
} catch (err) {
  console.error(`bench/invoke failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  raw?.close();
  relayClient?.close();
  await caller?.shutdown();
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
