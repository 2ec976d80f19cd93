// The consuming side of bench/queue, in its own process: handles every message of one queue and counts.
// argv[2]: the kind; $BENCH_QUEUE_CONSUMER: its config (JSON).
//   flint   {url, topic, function_id, concurrency}    a @flint/sdk worker with a durable:subscriber trigger
//   bullmq  {redis_url, prefix, queue, concurrency}   a BullMQ Worker
//   amqp    {amqp_url, queue, prefetch}               an amqplib channel, prefetch N, manual acks
// Prints {"ready":true} once it consumes (flint: once the trigger is registered; the bench then waits
// until the engine consumes for it). IPC: { type: 'count' } → { count } (messages handled so far);
// { type: 'wait', until } → { count } once `until` messages have been handled in all; plus 'cpu' (proc.mjs).
import { serveChild } from './proc.mjs';

const kind = process.argv[2];
const config = JSON.parse(process.env.BENCH_QUEUE_CONSUMER ?? '{}');

let count = 0;
const waiters = [];
/** The handler's work: check the message and count it (the bench measures the queue, not the handler). */
const handled = (data) => {
  if (typeof data?.n !== 'number') throw new Error(`unexpected message ${JSON.stringify(data)}`);
  count++;
  for (let i = waiters.length - 1; i >= 0; i--) {
    if (count >= waiters[i].until) waiters.splice(i, 1)[0].resolve({ count });
  }
};

let close;
if (kind === 'flint') {
  const { registerWorker } = await import('@flint/sdk');
  const worker = registerWorker(config.url, { workerName: 'bench-queue-subscriber', announce: false });
  worker.registerFunction(config.function_id, async (data) => {
    handled(data);
    return null;
  });
  const trigger = worker.registerTrigger({
    type: 'durable:subscriber',
    function_id: config.function_id,
    config: { topic: config.topic, queue_config: { concurrency: config.concurrency } },
  });
  await worker.waitConnected();
  await trigger.ready;
  close = () => worker.shutdown();
} else if (kind === 'bullmq') {
  const { Worker } = await import('bullmq');
  const worker = new Worker(config.queue, async (job) => handled(job.data), {
    connection: { url: config.redis_url, maxRetriesPerRequest: null },
    prefix: config.prefix,
    concurrency: config.concurrency,
  });
  worker.on('error', (err) => process.stderr.write(`bullmq worker: ${err.message}\n`));
  await worker.waitUntilReady();
  close = () => worker.close();
} else if (kind === 'amqp') {
  const { default: amqp } = await import('amqplib');
  const conn = await amqp.connect(config.amqp_url);
  const ch = await conn.createChannel();
  await ch.assertQueue(config.queue, { durable: true });
  await ch.prefetch(config.prefetch);
  await ch.consume(
    config.queue,
    (msg) => {
      if (!msg) return;
      handled(JSON.parse(msg.content.toString()));
      ch.ack(msg);
    },
    { noAck: false },
  );
  close = () => conn.close();
} else {
  throw new Error(`unknown consumer kind ${kind} (flint, bullmq, amqp)`);
}

serveChild(() => close(), {
  count: () => ({ count }),
  wait: ({ until }) => (count >= until ? { count } : new Promise((resolve) => waiters.push({ until, resolve }))),
});
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
