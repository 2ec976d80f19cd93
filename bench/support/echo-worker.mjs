// A Flint worker in its own process that registers `bench::echo` (returns its input).
// argv[2]: engine URL. Prints {"ready":true} once connected.
import { registerWorker } from '@flint/sdk';
import { serveChild } from './proc.mjs';

const url = process.argv[2];
// BENCH_WORKER_SPANS=1: a span of its own per traced call (the SDK's `spans` option, default off).
const worker = registerWorker(url, { workerName: 'bench-echo-worker', spans: process.env.BENCH_WORKER_SPANS === '1' });
worker.registerFunction('bench::echo', async (input) => input, { description: 'echoes its input (bench)' });
// The same echo with its payload checked by the engine against request_format (bench/invoke's validation rows).
worker.registerFunction('bench::echo-validated', async (input) => input, {
  description: 'echoes its input; the engine validates the payload first (bench)',
  request_format: {
    type: 'object',
    required: ['text', 'n', 'ok', 'tags'],
    properties: {
      text: { type: 'string', maxLength: 100 },
      n: { type: 'integer' },
      ok: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' } },
    },
  },
  metadata: { validate: true },
});
await worker.waitConnected();

serveChild(() => worker.shutdown());
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
