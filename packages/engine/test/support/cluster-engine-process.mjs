/**
 * An engine of a cluster in its own process, with a worker beside it (for the crash tests):
 * `node cluster-engine-process.mjs <cluster config JSON>`. The worker provides `<node_id>::sleep`
 * ({ms} → waits, then answers its node id). Prints one JSON line `{bridgeUrl}` once both serve (or
 * `{error}` and exits 1). SIGKILL is the crash.
 */
import { startEngine } from '@flint/engine';
import { registerWorker } from '@flint/sdk';

let engine;
let worker;
try {
  const cluster = JSON.parse(process.argv[2] ?? '{}');
  engine = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, cluster } });
  worker = registerWorker(engine.bridgeUrl, { workerName: `worker-of-${cluster.node_id}`, log: { warn() {}, error() {}, debug() {} } });
  worker.registerFunction(`${cluster.node_id}::sleep`, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return cluster.node_id;
  });
  await worker.waitConnected();
  while (!engine.listFunctions().some((f) => f.function_id === `${cluster.node_id}::sleep`)) await new Promise((r) => setTimeout(r, 10));
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n`);
  process.exit(1);
}

process.stdout.write(`${JSON.stringify({ bridgeUrl: engine.bridgeUrl, pid: process.pid })}\n`);
