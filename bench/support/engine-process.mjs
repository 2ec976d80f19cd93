// Runs a Flint engine in its own process. Prints {"ready":true,"url":"ws://…","pid":…,"listeners":[…]} on
// stdout once listening (`url`: the bridge; `listeners`: engine.listeners(), e.g. the flint-http URL).
// Config: JSON in $BENCH_ENGINE_CONFIG, merged over { bridge: { port: 0 }, log: { level: 'silent' } }.
// Answers IPC { type: 'mem' } (see proc.mjs), { type: 'stats' } (engine.stats()), { type: 'timers' } (the live
// timers of the process, see timer-census.mjs) and { type: 'invoke', function_id, payload } ({ result } of
// engine.invoke, e.g. engine::health::check; an error reply when the call fails); SIGTERM stops the engine gracefully.
// An engine that refuses to start (e.g. an unknown adapter) prints {"ready":false,"error":"…"} and exits 1,
// so that startChild rejects with the engine's own message (a bench prints it as a skip reason).
import { startEngine } from '@flint/engine';
import { serveChild } from './proc.mjs';
import { timerCensus } from './timer-census.mjs';

const extra = process.env.BENCH_ENGINE_CONFIG ? JSON.parse(process.env.BENCH_ENGINE_CONFIG) : {};
const config = { ...extra, bridge: { port: 0, ...extra.bridge }, log: { level: 'silent', ...extra.log } };
let engine;
try {
  engine = await startEngine({ config });
} catch (err) {
  process.stdout.write(`${JSON.stringify({ ready: false, error: err instanceof Error ? err.message : String(err) })}\n`);
  process.exit(1);
}

serveChild(() => engine.stop(), {
  stats: () => ({ stats: engine.stats() }),
  timers: async () => ({ timers: await timerCensus() }),
  invoke: async ({ function_id, payload }) => ({ result: await engine.invoke(function_id, payload) }),
});
process.stdout.write(`${JSON.stringify({ ready: true, url: engine.bridgeUrl, pid: process.pid, listeners: engine.listeners() })}\n`);
