// bench/queue-disk: the builtin queue's file_based store holding many waiting messages. The engine (a
// child process, flint-queue with store_method: file_based in a temp folder) takes BENCH_QUEUE_DISK_MESSAGES
// (default 1,000,000) 1 KiB messages published through the bridge by a worker in this process (256 in
// flight) to a topic nobody subscribes to, so every message stays waiting (the topic's unrouted list,
// `unrouted_max` raised to fit). Then: the engine's RSS after a GC (target < 400 MiB: bodies stay on disk,
// only an index is in memory), a graceful restart on the same folder, and the time from the restart to the
// first delivery (engine start, a subscriber, `flint::queue::redrive` of the topic).
//
//   processes: this one (publisher, then subscriber worker) | engine child (twice: before and after the restart)
//
// Env: BENCH_QUEUE_DISK_MESSAGES (1000000), BENCH_QUEUE_DISK_IN_FLIGHT (256), BENCH_STRICT=1.
// The temp folder (about 1.1 GB for a million messages) is removed afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerWorker } from '@flint/sdk';
import { fixed, printTable } from './support/measure.mjs';
import { childExecArgv, request, startChild, stopChild } from './support/proc.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const TOTAL = Math.max(1, Number(process.env.BENCH_QUEUE_DISK_MESSAGES ?? 1_000_000));
const IN_FLIGHT = Math.max(1, Number(process.env.BENCH_QUEUE_DISK_IN_FLIGHT ?? 256));
const TOPIC = 'bench-disk';
const RSS_LIMIT_MIB = 400;
const mib = (bytes) => bytes / 1048576;

const dir = await mkdtemp(join(tmpdir(), 'flint-bench-queue-disk-'));
const engineConfig = {
  modules: [
    {
      name: 'flint-queue',
      config: { adapter: { name: 'builtin', config: { store_method: 'file_based', file_path: join(dir, 'queue') } }, unrouted_max: TOTAL + 1 },
    },
  ],
};
const startEngine = (name) =>
  startChild(here('./support/engine-process.mjs'), {
    name,
    env: { BENCH_ENGINE_CONFIG: JSON.stringify(engineConfig) },
    execArgv: childExecArgv(name, { exposeGc: true }),
    timeoutMs: 300_000,
  });

let engine;
let worker;
try {
  process.stderr.write(`  queue-disk: publishing ${TOTAL.toLocaleString('en-US')} messages of 1 KiB (${IN_FLIGHT} in flight)…`);
  engine = await startEngine('engine');
  worker = registerWorker(engine.info.url, { workerName: 'bench-disk-publisher', announce: false });
  await worker.waitConnected();
  const pad = 'z'.repeat(1000);
  const publishStart = performance.now();
  let next = 0;
  let peakRss = 0;
  const lane = async () => {
    while (next < TOTAL) {
      const i = next++;
      await worker.queue.publish(TOPIC, { n: i, pad });
      if (i % 100_000 === 0 && i > 0) {
        const { rss } = await request(engine.child, { type: 'mem' });
        peakRss = Math.max(peakRss, rss);
        process.stderr.write(` ${i / 1000}k`);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  const publishSeconds = (performance.now() - publishStart) / 1000;
  process.stderr.write(' done\n');
  const stats = await worker.queue.stats(TOPIC);
  if (stats.unrouted !== TOTAL) throw new Error(`expected ${TOTAL} waiting messages, the engine holds ${stats.unrouted}`);
  const held = await request(engine.child, { type: 'mem' });
  peakRss = Math.max(peakRss, held.rss);
  await worker.shutdown();
  worker = undefined;

  process.stderr.write('  queue-disk: restarting the engine on the same folder…\n');
  await stopChild(engine);
  const restartAt = performance.now();
  engine = await startEngine('engine-restarted');
  const openedMs = performance.now() - restartAt;
  const reopened = await request(engine.child, { type: 'mem' });
  worker = registerWorker(engine.info.url, { workerName: 'bench-disk-subscriber', announce: false });
  const first = new Promise((resolve) => {
    worker.queue.subscribe(
      TOPIC,
      () => {
        resolve(performance.now());
        return new Promise(() => {}); // holds the first message: the rest stay waiting
      },
      { function_id: 'bench::disk-sink', queue_config: { concurrency: 1 } },
    );
  });
  await worker.waitConnected();
  for (;;) {
    const s = await worker.queue.stats(TOPIC);
    if (s.consumer_count > 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  void worker.queue.redrive(TOPIC).catch(() => {}); // moves all of them; the first delivery comes long before it ends
  const firstAt = await first;

  console.log(`\nbench/queue-disk: ${TOTAL.toLocaleString('en-US')} waiting 1 KiB messages in a file_based builtin queue (engine in a child process)\n`);
  printTable(
    ['measure', 'value'],
    [
      ['publish rate (through the bridge, fsynced)', `${fixed(TOTAL / publishSeconds)} msgs/s`],
      ['engine RSS holding them (after GC)', `${fixed(mib(held.rss))} MiB (heap ${fixed(mib(held.heapUsed))} MiB)`],
      ['engine peak RSS while publishing (sampled)', `${fixed(mib(peakRss))} MiB`],
      ['restart: engine start on the folder', `${fixed(openedMs)} ms`],
      ['engine RSS after the restart (after GC)', `${fixed(mib(reopened.rss))} MiB`],
      ['restart to first delivery', `${fixed(firstAt - restartAt)} ms`],
    ],
  );
  const met = mib(held.rss) < RSS_LIMIT_MIB;
  console.log('\ntargets:');
  console.log(
    `  ${met ? 'MET   ' : 'MISSED'} engine RSS holding ${TOTAL.toLocaleString('en-US')} waiting 1 KiB messages < ${RSS_LIMIT_MIB} MiB: ${fixed(mib(held.rss))}`,
  );
  console.log(
    `\n${JSON.stringify({
      bench: 'queue-disk',
      messages: TOTAL,
      publishPerSec: Math.round(TOTAL / publishSeconds),
      rssMiB: Math.round(mib(held.rss)),
      peakRssMiB: Math.round(mib(peakRss)),
      restartOpenMs: Math.round(openedMs),
      restartToFirstDeliveryMs: Math.round(firstAt - restartAt),
      targets: [{ name: `engine RSS < ${RSS_LIMIT_MIB} MiB`, value: Math.round(mib(held.rss)), met }],
    })}`,
  );
  if (process.env.BENCH_STRICT === '1' && !met) process.exitCode = 1;
} catch (err) {
  console.error(`bench/queue-disk failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  await worker?.shutdown();
  if (engine) await stopChild(engine);
  await rm(dir, { recursive: true, force: true });
}
