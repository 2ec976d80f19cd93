// A Flint worker in its own process that registers one echo function (returns its input) under the id it
// is given: bench/cluster runs it on engine A (local calls) and on engine B (remote calls), so that both
// ends are the same code. argv[2]: engine URL, argv[3]: function id. Answers IPC { type: 'calls' } with
// { calls } (how many calls it ran). Prints {"ready":true} once connected.
import { registerWorker } from '@flint/sdk';
import { serveChild } from './proc.mjs';

const [url, functionId] = process.argv.slice(2);
let calls = 0;
const worker = registerWorker(url, { workerName: `bench-echo-${functionId.replace(/\W+/g, '-')}` });
worker.registerFunction(
  functionId,
  async (input) => {
    calls++;
    return input;
  },
  { description: 'echoes its input (bench/cluster)' },
);
await worker.waitConnected();

serveChild(() => worker.shutdown(), { calls: () => ({ calls }) });
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
