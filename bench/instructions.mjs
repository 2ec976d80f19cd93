// bench/instructions: user-space instructions per operation of the engine and of the SDK worker, counted
// by valgrind's callgrind, beside the same count for the bare baseline of each, one operation in flight.
// Wall-clock ratios on a small shared machine swing by 15-30% from run to run; instruction counts repeat
// within about 1% (on a machine not overloaded several times over: bench/README.md), so one run tells
// whether a change made the hot path cheaper, and by how much.
//
//   invoke: this one (caller, @flint/sdk)   | engine child under callgrind (modules: [])        | echo-worker child
//           this one (raw ws client)        | ws relay child under callgrind                    | ws echo child
//   worker: this one (caller, @flint/sdk)   | engine child                                      | echo-worker child under callgrind
//           this one (raw ws client)        | ws echo child under callgrind
//   http:   this one (keep-alive client)    | engine child under callgrind (flint-http)         | http-worker child
//           this one (keep-alive client)    | engine child under callgrind (flint-http + flint-observability,
//                                             every call traced, memory exporter)              | http-worker child
//           this one (keep-alive client)    | bare node:http server child under callgrind
//   queue:  this one (publisher and subscriber, @flint/sdk) | engine child under callgrind (flint-queue, redis)
//           this one (BullMQ Queue.add, QueueEvents)         | BullMQ Worker child under callgrind     (+ redis-server)
//
// Method, per process measured: BENCH_IR_WARMUP operations (V8 compiles the hot path by then), then
// BENCH_IR_WINDOWS windows of BENCH_IR_OPS operations, each between `callgrind_control --zero` and
// `--dump`; the median window is printed, with the lowest and highest. The measured node runs with
// --single-threaded and --predictable-gc-schedule, so V8's compilers and garbage collector work on its
// main thread, where they are counted, at points set by the work done; a window with a full garbage
// collection in it shows as the highest. What the counts leave out: the kernel's share (a write to a
// socket costs more there than most of the JavaScript around it), and waiting. They are the CPU work
// of the process itself.
//
// Without valgrind (or callgrind_control) the bench prints why it is skipped and exits 0 (1 with
// BENCH_STRICT=1). Under valgrind a process runs some 50 times slower; the processes of a case are
// counted at once, one per core: about 5 minutes in all.
//
// queue: one message at a time, from its publish until its handler started and its publish was answered
// (Flint) or it was finished (BullMQ): the engine stores it, delivers it and settles it; a BullMQ Worker
// takes it, runs the handler and settles it. Without Redis (or the bullmq package) the case is skipped
// with the reason (a failure with BENCH_STRICT=1). Its Redis keys live under `flint-bench:<random>:` and
// are deleted afterwards.
//
// Env: BENCH_IR_CASES (invoke,worker,http; queue runs when named), BENCH_IR_WARMUP (10000), BENCH_IR_OPS (2000),
//      BENCH_IR_WINDOWS (5), BENCH_REDIS_URL (redis://127.0.0.1:6379), BENCH_STRICT=1.
import { deepStrictEqual } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { Agent, get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { registerWorker } from '@flint/sdk';
import { callgrindMissing, callgrindSession, dumpCounts, startUnderCallgrind, zeroCounts } from './support/callgrind.mjs';
import { HELLO, HELLO_PATH } from './support/http-shared.mjs';
import { RawEchoClient, fixed, printTable } from './support/measure.mjs';
import { startChild, stopChild } from './support/proc.mjs';
import { waitConsuming } from './support/queue-wait.mjs';
import { deleteKeysUnder, openRedis } from './support/redis.mjs';
import { OBSERVABILITY, expectTracing } from './support/tracing.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const intEnv = (name, fallback) => Math.max(1, Math.floor(Number(process.env[name] ?? fallback)) || fallback);
const WARMUP = intEnv('BENCH_IR_WARMUP', 10_000);
const OPS = intEnv('BENCH_IR_OPS', 2000);
const WINDOWS = intEnv('BENCH_IR_WINDOWS', 5);
const CASES = (process.env.BENCH_IR_CASES ?? 'invoke,worker,http').split(',').map((c) => c.trim());
const STRICT = process.env.BENCH_STRICT === '1';
const payload = { text: 'hello flint', n: 42, ok: true, tags: ['a', 'b'] };
const HTTP_MODULES = [{ name: 'flint-http', config: { port: 0 } }];
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Cases that could not run here, with the reason. */
const skipped = [];

const children = [];
const start = async (file, opts) => {
  const handle = await startChild(here(file), opts);
  children.push(handle);
  return handle;
};

/** Stops every child started so far, the last started first. */
const stopAll = () =>
  Promise.all(
    children
      .splice(0)
      .reverse()
      .map((c) => stopChild(c)),
  );

/** Counts of `handle` for `op` (one operation, awaited): warm-up, then the windows; the median and spread per operation. */
async function count(session, handle, op) {
  process.stderr.write(`  ${handle.name}: ${WARMUP} operations of warm-up\n`);
  for (let i = 0; i < WARMUP; i++) await op();
  const perOp = [];
  for (let w = 0; w < WINDOWS; w++) {
    await zeroCounts(handle);
    for (let i = 0; i < OPS; i++) await op();
    perOp.push((await dumpCounts(session, handle)) / OPS);
    process.stderr.write(`  ${handle.name}: window ${w + 1} of ${WINDOWS}\n`);
  }
  perOp.sort((a, b) => a - b);
  return { median: perOp[perOp.length >> 1], low: perOp[0], high: perOp[perOp.length - 1] };
}

/** A child under callgrind, remembered for the stop at the end. */
async function measured(session, file, opts) {
  process.stderr.write(`  ${opts.name}: starting under callgrind …\n`);
  const handle = await startUnderCallgrind(session, here(file), opts);
  children.push(handle);
  return handle;
}

const engineEnv = (modules) => ({ BENCH_ENGINE_CONFIG: JSON.stringify({ modules }) });

/**
 * Counts `flint` (an engine or an echo worker, called by a caller worker of this process through the engine
 * at `engineUrl`) and `bare` (called by a raw ws client) at once, each process on its own core: the
 * counts do not depend on each other's speed.
 */
async function countEchoes(session, engineUrl, flint, bare) {
  const caller = registerWorker(engineUrl, { workerName: 'bench-caller', announce: false });
  const client = new RawEchoClient(bare.info.url);
  try {
    await caller.waitConnected();
    await client.opened;
    const call = () => caller.trigger({ function_id: 'bench::echo', payload });
    // The echo worker registers once connected: wait until the engine routes to it.
    for (let tries = 0; ; tries++) {
      try {
        deepStrictEqual(await call(), payload);
        break;
      } catch (err) {
        if (tries > 600) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    deepStrictEqual(await client.call(payload), payload);
    return await Promise.all([count(session, flint, call), count(session, bare, () => client.call(payload))]);
  } finally {
    client.close();
    await caller.shutdown();
  }
}

async function invokeCase(session) {
  const echo = await start('./support/ws-echo-server.mjs', { name: 'ws-echo' });
  const [engine, relay] = await Promise.all([
    measured(session, './support/engine-process.mjs', { name: 'engine', env: engineEnv([]) }),
    measured(session, './support/ws-relay.mjs', { name: 'ws-relay', args: [echo.info.url] }),
  ]);
  await start('./support/echo-worker.mjs', { name: 'echo-worker', args: [engine.info.url] });
  const [flint, bare] = await countEchoes(session, engine.info.url, engine, relay);
  return { name: 'invoke', what: 'engine per call (caller → engine → echo worker)', flint, bareLabel: 'bare ws relay', bare };
}

async function workerCase(session) {
  const engine = await start('./support/engine-process.mjs', { name: 'engine', env: engineEnv([]) });
  const [worker, echo] = await Promise.all([
    measured(session, './support/echo-worker.mjs', { name: 'echo-worker', args: [engine.info.url] }),
    measured(session, './support/ws-echo-server.mjs', { name: 'ws-echo' }),
  ]);
  const [flint, bare] = await countEchoes(session, engine.info.url, worker, echo);
  return { name: 'worker', what: 'SDK echo worker per call', flint, bareLabel: 'bare ws echo server', bare };
}

/** GET `url` with `agent` (one keep-alive connection); resolves with the body of a 200 answer. */
function getJson(agent, url) {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${url}: ${res.statusCode} ${body}`))));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function httpCase(session) {
  // One keep-alive connection per system, so that each system's requests are one at a time.
  const agents = [];
  const client = () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    return (url) => getJson(agent, url);
  };
  const flintEngine = async (name, modules) => {
    const engine = await measured(session, './support/engine-process.mjs', { name, env: engineEnv(modules) });
    await start('./support/http-worker.mjs', { name: `http-worker-${name}`, args: [engine.info.url, '1'] });
    return { handle: engine, url: `${engine.info.listeners.find((l) => l.name === 'http').url}${HELLO_PATH}` };
  };
  const bareServer = async () => {
    const server = await measured(session, './support/bare-http-server.mjs', { name: 'bare-http' });
    return { handle: server, url: `${server.info.url}${HELLO_PATH}` };
  };
  try {
    const [flint, traced, bare] = await Promise.all([
      flintEngine('engine-http', HTTP_MODULES),
      flintEngine('engine-http-traced', [...HTTP_MODULES, OBSERVABILITY]),
      bareServer(),
    ]);
    await expectTracing(flint.handle, false);
    await expectTracing(traced.handle, true);
    const counts = await Promise.all(
      [flint, traced, bare].map(async ({ handle, url }) => {
        const get = client();
        deepStrictEqual(JSON.parse(await get(url)), HELLO);
        return count(session, handle, () => get(url));
      }),
    );
    return [
      { name: 'http', what: 'engine per request (client → flint-http → worker)', flint: counts[0], bareLabel: 'bare node:http', bare: counts[2] },
      { name: 'http-traced', what: 'the same engine, every request traced', flint: counts[1], bareLabel: 'untraced engine', bare: counts[0] },
    ];
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

async function queueCase(session) {
  const opened = await openRedis(REDIS_URL);
  if (!opened.redis) {
    skipped.push({ name: 'queue', reason: opened.reason });
    return [];
  }
  const redis = opened.redis;
  let bullmq;
  try {
    bullmq = await import('bullmq');
  } catch (err) {
    redis.disconnect();
    skipped.push({ name: 'queue', reason: `bullmq cannot be loaded (${err instanceof Error ? err.message : err})` });
    return [];
  }
  const prefix = `flint-bench:${randomBytes(6).toString('hex')}:`;
  const connection = { url: REDIS_URL, maxRetriesPerRequest: null };
  const bull = { connection, prefix: `${prefix}bull` };
  const topic = 'bench-ir-queue';
  // As bench/queue's messages (its consumer checks `n`).
  const message = { n: 0, kind: 'order.placed', text: 'hello flint, a queued message', ok: true, tags: ['a', 'b', 'c'], total: 42.5 };
  let sdk;
  let queue;
  let events;
  try {
    const adapter = { name: 'redis', config: { redis_url: REDIS_URL, prefix: `${prefix}flint` } };
    const [engine, worker] = await Promise.all([
      measured(session, './support/engine-process.mjs', { name: 'engine-queue', env: engineEnv([{ name: 'flint-queue', config: { adapter } }]) }),
      measured(session, './support/queue-consumer.mjs', {
        name: 'bullmq-worker',
        args: ['bullmq'],
        env: { BENCH_QUEUE_CONSUMER: JSON.stringify({ redis_url: REDIS_URL, prefix: bull.prefix, queue: 'bench', concurrency: 64 }) },
      }),
    ]);
    sdk = registerWorker(engine.info.url, { workerName: 'bench-queue', announce: false });
    await sdk.waitConnected();
    let handled;
    sdk.queue.subscribe(
      topic,
      (data) => {
        handled?.(data);
        return null;
      },
      { function_id: 'bench::queue', queue_config: { concurrency: 64 } },
    );
    await waitConsuming(sdk, topic, 'bench::queue', 60_000);
    const flintOp = async () => {
      const started = new Promise((resolve) => {
        handled = resolve;
      });
      await sdk.queue.publish(topic, message);
      deepStrictEqual(await started, message);
    };
    // Completed jobs are removed, as in bench/queue (Flint keeps no acked message).
    queue = new bullmq.Queue('bench', { ...bull, defaultJobOptions: { removeOnComplete: true } });
    events = new bullmq.QueueEvents('bench', bull);
    await events.waitUntilReady();
    // Finished jobs by id, told by QueueEvents (job.waitUntilFinished looks the job up again, and a removed one is an error).
    const finished = new Map();
    const finish = (jobId, outcome) => {
      const waiter = finished.get(jobId);
      if (typeof waiter === 'function') {
        finished.delete(jobId);
        waiter(outcome);
      } else finished.set(jobId, outcome);
    };
    events.on('completed', ({ jobId }) => finish(jobId, undefined));
    events.on('failed', ({ jobId, failedReason }) => finish(jobId, new Error(`BullMQ job ${jobId} failed: ${failedReason}`)));
    const bullOp = async () => {
      const job = await queue.add('m', message);
      const outcome = finished.has(job.id) ? finished.get(job.id) : await new Promise((resolve) => finished.set(job.id, resolve));
      finished.delete(job.id);
      if (outcome instanceof Error) throw outcome;
    };
    const [flint, bare] = await Promise.all([count(session, engine, flintOp), count(session, worker, bullOp)]);
    return { name: 'queue', what: 'engine per message (flint-queue, redis: publish → deliver → settle)', flint, bareLabel: 'BullMQ Worker', bare };
  } finally {
    await sdk?.shutdown();
    await events?.close();
    await queue?.close();
    await stopAll();
    await deleteKeysUnder(redis, prefix).catch((err) => console.error(`could not delete the bench's Redis keys (${prefix}*): ${err.message}`));
    redis.disconnect();
  }
}

const missing = await callgrindMissing();
if (missing) {
  console.log(`bench/instructions: skipped: ${missing}`);
  console.log(JSON.stringify({ bench: 'instructions', skipped: missing }));
  if (STRICT) process.exitCode = 1;
} else {
  const session = await callgrindSession();
  const results = [];
  try {
    const cases = { invoke: invokeCase, worker: workerCase, http: httpCase, queue: queueCase };
    for (const name of CASES) {
      const run = cases[name];
      if (!run) throw new Error(`unknown case ${name} in BENCH_IR_CASES (cases: ${Object.keys(cases).join(', ')})`);
      process.stderr.write(`instructions: ${name}\n`);
      results.push(...[await run(session)].flat());
      await stopAll();
    }
  } catch (err) {
    console.error(`bench/instructions failed: ${err instanceof Error ? err.stack : err}`);
    process.exitCode = 1;
  } finally {
    await stopAll();
    await session.dispose();
  }
  for (const s of skipped) {
    console.log(`bench/instructions: ${s.name}: skipped: ${s.reason}`);
    if (STRICT) process.exitCode = 1;
  }
  if (results.length > 0) {
    console.log(
      `\nbench/instructions: user-space instructions per operation (valgrind callgrind, node --single-threaded --predictable-gc-schedule), 1 in flight; ${WARMUP} operations of warm-up, then the median of ${WINDOWS} windows of ${OPS} (lowest–highest)\n`,
    );
    const k = (n) => `${fixed(n / 1000, 1)} k`;
    printTable(
      ['case', 'measured', 'Flint', 'spread', 'baseline', 'baseline instr.', 'spread', 'Flint ÷ baseline'],
      results.map((r) => [
        r.name,
        r.what,
        k(r.flint.median),
        `${k(r.flint.low)}–${k(r.flint.high)}`,
        r.bareLabel,
        k(r.bare.median),
        `${k(r.bare.low)}–${k(r.bare.high)}`,
        fixed(r.flint.median / r.bare.median, 2),
      ]),
    );
  }
  console.log(
    JSON.stringify({
      bench: 'instructions',
      warmup: WARMUP,
      ops: OPS,
      windows: WINDOWS,
      cases: results.map((r) => ({
        name: r.name,
        flint: r.flint,
        baseline: r.bareLabel,
        bare: r.bare,
        ratio: Number((r.flint.median / r.bare.median).toFixed(3)),
      })),
      ...(skipped.length > 0 ? { skipped } : {}),
    }),
  );
}
