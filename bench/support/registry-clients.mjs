// Many Flint workers in one process, for bench/registry. argv: <url> <first worker index> <workers>
// <functions per worker> <connect concurrency>. Prints {"ready":true} once loaded; on IPC { type: 'go' }
// creates the workers (each registers its functions, then connects; at most <connect concurrency>
// connections opening at once; announce: true, the default) and sends { type: 'connected', ms } once
// every worker is connected. SIGTERM or { type: 'stop' } closes them all.
import { registerWorker } from '@flint/sdk';
import { serveChild } from './proc.mjs';

const [url, firstArg, countArg, fnArg, concurrencyArg] = process.argv.slice(2);
const first = Number(firstArg);
const count = Number(countArg);
const functionsPerWorker = Number(fnArg);
const concurrency = Math.max(1, Math.min(count, Number(concurrencyArg)));
const quiet = { warn: () => {}, error: (...a) => console.error(...a), debug: () => {} };
const workers = [];
const handler = async (input) => input;

async function go() {
  const t0 = process.hrtime.bigint();
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = first + next++;
      const w = registerWorker(url, { workerName: `bench-registry-${i}`, log: quiet });
      for (let j = 0; j < functionsPerWorker; j++) {
        w.registerFunction(`bench::registry::w${i}::f${j}`, handler, { description: `bench function ${j} of worker ${i}` });
      }
      workers.push(w);
      await w.waitConnected();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  process.send({ type: 'connected', ms: Number(process.hrtime.bigint() - t0) / 1e6 });
}

const stop = () => Promise.all(workers.map((w) => w.shutdown()));
serveChild(stop, {
  go: () => {
    go().catch((err) => process.send({ type: 'failed', error: String(err) }));
    return {};
  },
  stop: async () => {
    await stop();
    return {};
  },
});
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
