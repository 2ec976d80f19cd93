// Measures the memory of a file_based builtin queue holding many waiting messages (not a test: it
// writes ~1.1 GB). `write` publishes <total> 1 KiB messages (CONC publishes in flight, default 256),
// `read` reopens the folder; both print RSS and heap after a GC, then `read` the first delivery's time.
//   node --expose-gc measure-memory.mjs <dir> [total=1000000] [write|read]
import { openAdapter } from '@flint/engine';

const dir = process.argv[2];
const total = Number(process.argv[3] ?? 1000000);
const mode = process.argv[4] ?? 'write';
const ref = { name: 'builtin', config: { store_method: 'file_based', file_path: dir } };
const mb = (n) => (n / 1048576).toFixed(0);
let peak = 0;
const timer = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss());
}, 50);
const t0 = performance.now();
const q = await openAdapter('queue', ref, { configDir: '/' });
console.log('opened in', (performance.now() - t0).toFixed(0), 'ms; rss', mb(process.memoryUsage.rss()));
if (mode === 'write') {
  const pad = 'z'.repeat(1000);
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      await q.publish('big', { data: { n: i, pad } });
      if (i % 100000 === 0)
        console.log(i, 'rss', mb(process.memoryUsage.rss()), 'heap', mb(process.memoryUsage().heapUsed), ((performance.now() - t0) / 1000).toFixed(1), 's');
    }
  };
  await Promise.all(Array.from({ length: Number(process.env.CONC ?? 256) }, worker));
}
global.gc?.();
await new Promise((r) => setTimeout(r, 500));
global.gc?.();
const m = process.memoryUsage();
console.log(
  'stats',
  JSON.stringify(await q.stats('big')),
  'rss',
  mb(m.rss),
  'heapTotal',
  mb(m.heapTotal),
  'heapUsed',
  mb(m.heapUsed),
  'external',
  mb(m.external),
  'arrayBuffers',
  mb(m.arrayBuffers),
  'peak rss',
  mb(peak),
  'elapsed',
  ((performance.now() - t0) / 1000).toFixed(1),
  's',
);
if (mode === 'read') {
  const t = performance.now();
  const first = await new Promise((resolve) => q.consume('big', { concurrency: 1, fifo: false, visibilityTimeoutMs: 30000 }, (d) => resolve(d)));
  console.log('first delivery', first.data.n, 'after', (performance.now() - t).toFixed(0), 'ms');
}
clearInterval(timer);
await q.close();
