// Flint workers for bench/cron, several connections in one process. argv: <url> <first connection index>
// <connections> <functions per connection>. Each connection (a registerWorker()) registers its functions
// (`bench::cron::c<i>::f<j>`), whose handler notes when it started (cron-samples.mjs) and returns null.
// Prints {"ready":true} once every connection is open. IPC: { type: 'triggers', expression } registers one
// `cron` trigger per function and answers { ms, triggers, parked } once the engine has confirmed them all;
// `count` and `samples` (cron-samples.mjs); `cpu` (proc.mjs).
import { registerWorker } from '@flint/sdk';
import { createSlotRecorder } from './cron-samples.mjs';
import { serveChild } from './proc.mjs';

const [url, firstArg, connectionsArg, functionsArg] = process.argv.slice(2);
const first = Number(firstArg);
const connections = Number(connectionsArg);
const functionsPerConnection = Number(functionsArg);
const quiet = { warn: () => {}, error: (...a) => console.error(...a), debug: () => {} };
const recorder = createSlotRecorder();

const handler = (data) => {
  const startedAt = Date.now();
  recorder.record(Date.parse(data.scheduled_time), startedAt, Date.parse(data.actual_time));
  return null;
};

const workers = [];
for (let c = 0; c < connections; c++) {
  const i = first + c;
  const worker = registerWorker(url, { workerName: `bench-cron-${i}`, announce: false, log: quiet });
  const functionIds = [];
  for (let j = 0; j < functionsPerConnection; j++) {
    const id = `bench::cron::c${i}::f${j}`;
    worker.registerFunction(id, handler);
    functionIds.push(id);
  }
  workers.push({ worker, functionIds });
}
await Promise.all(workers.map(({ worker }) => worker.waitConnected()));

async function registerTriggers({ expression }) {
  const t0 = performance.now();
  const ready = [];
  for (const { worker, functionIds } of workers) {
    for (const function_id of functionIds) ready.push(worker.registerTrigger({ type: 'cron', function_id, config: { expression } }).ready);
  }
  const outcomes = await Promise.all(ready);
  return { ms: performance.now() - t0, triggers: outcomes.length, parked: outcomes.filter((o) => o.parked).length };
}

serveChild(() => Promise.all(workers.map(({ worker }) => worker.shutdown())), { triggers: registerTriggers, ...recorder.handlers });
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
