// A Flint worker in its own process that registers `bench::echo` (returns its input).
// argv[2]: engine URL. Prints {"ready":true} once connected.
import { registerWorker } from '@flint/sdk';
import { serveChild } from './proc.mjs';

const url = process.argv[2];
const worker = registerWorker(url, { workerName: 'bench-echo-worker' });
worker.registerFunction('bench::echo', async (input) => input, { description: 'echoes its input (bench)' });
await worker.waitConnected();

serveChild(() => worker.shutdown());
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
