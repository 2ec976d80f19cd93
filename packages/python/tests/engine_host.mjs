/**
 * The engine the Python tests talk to, with a Node worker beside it (`@flint/sdk`), in one process:
 * `node engine_host.mjs`. Prints one JSON line `{"bridge", "http"}` once serving. Commands on stdin,
 * one per line: `restart` (stop the engine and start it again on the same ports; prints
 * `{"restarted": true}` once it serves again), `stats` (prints `{"stats": engine.stats()}`) and `stop`.
 * Stops when stdin closes.
 *
 * The Node worker's functions let the tests cross languages both ways:
 *   node::echo {..}                   → {"echoed": <payload>, "runtime": "node"}
 *   node::call {function_id, payload} → the result of calling function_id from Node
 *   node::fail {code, message}        → fails with that code
 */
import { createInterface } from 'node:readline';
import { startEngine } from '@flint/engine';
import { FlintError, registerWorker } from '@flint/sdk';

const silent = { warn() {}, error() {}, debug() {} };
const config = (bridgePort, httpPort) => ({
  // Spares unused for 1 s (half of this) are closed by the workers: a test sees that happen.
  bridge: { port: bridgePort, spare_channel_idle_ms: 2000 },
  log: { level: 'silent' },
  modules: [
    { name: 'flint-http', config: { port: httpPort, default_timeout_ms: 10_000 } },
    { name: 'flint-state' },
    { name: 'flint-queue', config: { queue_configs: { default: { concurrency: 4, max_retries: 1 } } } },
    { name: 'flint-observability', config: { exporter: 'memory' } },
  ],
});

let engine = await startEngine({ config: config(0, 0) });
const bridgePort = Number(new URL(engine.bridgeUrl).port);
const httpUrl = engine.listeners().find((l) => l.name === 'http')?.url;
const httpPort = Number(new URL(httpUrl).port);

const worker = registerWorker(engine.bridgeUrl, { workerName: 'node-peer', reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, log: silent });
worker.registerFunction('node::echo', async (input) => ({ echoed: input, runtime: 'node' }), { description: 'echoes from Node' });
worker.registerFunction('node::call', async (input) => worker.trigger({ function_id: input.function_id, payload: input.payload }));
worker.registerFunction('node::fail', async (input) => {
  throw new FlintError(input?.code ?? 'node_failure', input?.message ?? 'failed in Node');
});
await worker.waitConnected();

process.stdout.write(`${JSON.stringify({ bridge: engine.bridgeUrl, http: httpUrl })}\n`);

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const command = line.trim();
  if (command === 'restart') {
    await engine.stop();
    engine = await startEngine({ config: config(bridgePort, httpPort) });
    // Answer once the Node worker has reconnected and registered again, so tests may call it at once.
    while (!engine.listFunctions().some((f) => f.function_id === 'node::call')) await new Promise((r) => setTimeout(r, 10));
    process.stdout.write(`${JSON.stringify({ restarted: true })}\n`);
  } else if (command === 'stats') {
    process.stdout.write(`${JSON.stringify({ stats: engine.stats() })}\n`);
  } else if (command === 'stop') {
    break;
  }
}
await worker.shutdown();
await engine.stop();
process.exit(0);
