/**
 * flint-queue on every persistent backend with the engine in a child process: SIGKILL during a burst of
 * 5,000 publishes loses no acknowledged message, and messages whose handlers were running when the
 * engine died are delivered again after the restart.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type EngineProcess, spawnEngineScript } from '../support/child-engine.js';
import { cleanup } from '../support/cleanup.js';
import { type TestWorker, connectWorker } from '../support/harness.js';
import { QUEUE_BACKENDS, type QueueLocation } from '../support/queue/backends.js';
import { runPool } from '../support/state/helpers.js';
import { outcome, uid, waitFor } from '../support/util.js';

const SCRIPT = fileURLToPath(new URL('../support/module-engine-process.mjs', import.meta.url));
const BURST = 5000;

let location: QueueLocation | undefined;
afterEach(async () => {
  await cleanup();
  await location?.cleanup();
  location = undefined;
});

function spawnQueueEngine(config: Record<string, unknown>): Promise<EngineProcess> {
  return spawnEngineScript(SCRIPT, ['flint-queue', JSON.stringify({ adapter: (location as QueueLocation).ref, ...config })]);
}

/** A worker subscribed to `topic` with `handler`, once the engine consumes for it. */
async function subscriber(
  proc: EngineProcess,
  topic: string,
  handler: (data: { i: number }) => unknown,
  queueConfig: Record<string, unknown> = {},
): Promise<TestWorker> {
  const w = connectWorker('flint', proc.bridgeUrl, { reconnect: { maxRetries: 0 } });
  w.registerFunction('test::sink', handler);
  w.registerTrigger({ type: 'durable:subscriber', function_id: 'test::sink', config: { topic, queue_config: queueConfig } });
  await waitFor(
    async () => {
      const o = await outcome(w.trigger({ function_id: 'engine::queue::topic_stats', payload: { topic } }));
      return o.ok && (o.value as { consumer_count: number }).consumer_count > 0;
    },
    10_000,
    'the subscriber to be consumed for',
  );
  return w;
}

describe.each(QUEUE_BACKENDS.filter((b) => b.available && b.persistent))('flint-queue on $name, engine killed', (backend) => {
  it(`SIGKILL during a burst of ${BURST} publishes: every acknowledged publish is delivered after the restart`, { timeout: 120_000 }, async () => {
    location = await backend.prepare();
    const topic = uid('burst');
    let proc = await spawnQueueEngine({});
    const seen = new Set<number>();
    await subscriber(proc, topic, (d) => {
      seen.add(d.i);
      return null;
    });
    const publisher = connectWorker('flint', proc.bridgeUrl, { reconnect: { maxRetries: 0 } });
    const acked = new Set<number>();
    let killed = false;
    await runPool(BURST, 64, async (i) => {
      if (killed) return;
      const o = await outcome(publisher.trigger({ function_id: 'flint::durable::publish', payload: { topic, data: { i } } }));
      if (o.ok) acked.add(i);
      if (!killed && acked.size >= BURST / 2) {
        killed = true;
        proc.child.kill('SIGKILL');
      }
    });
    await proc.exited;
    expect(acked.size).toBeGreaterThanOrEqual(BURST / 2);

    proc = await spawnQueueEngine({});
    await subscriber(proc, topic, (d) => {
      seen.add(d.i);
      return null;
    });
    await waitFor(
      () => [...acked].every((i) => seen.has(i)),
      30_000,
      () => `every acknowledged message (${[...acked].filter((i) => !seen.has(i)).length} of ${acked.size} missing)`,
    );
  });

  it('SIGKILL while handlers run: their messages are delivered again after the restart', async () => {
    location = await backend.prepare();
    const topic = uid('hung');
    // A short visibility timeout: a lease held by the dead engine lapses quickly (shared backends).
    const queueConfig = { visibility_timeout_ms: 1500, concurrency: 10 };
    let proc = await spawnQueueEngine({});
    const started = new Set<number>();
    await subscriber(
      proc,
      topic,
      (d) => {
        started.add(d.i);
        return new Promise(() => {}); // never answers: the engine dies with these in hand
      },
      queueConfig,
    );
    const publisher = connectWorker('flint', proc.bridgeUrl, { reconnect: { maxRetries: 0 } });
    for (let i = 0; i < 5; i++) await publisher.trigger({ function_id: 'flint::durable::publish', payload: { topic, data: { i } } });
    await waitFor(() => started.size === 5, 5000, 'the five handlers to start');
    proc.child.kill('SIGKILL');
    await proc.exited;

    proc = await spawnQueueEngine({});
    const again = new Set<number>();
    await subscriber(
      proc,
      topic,
      (d) => {
        again.add(d.i);
        return null;
      },
      queueConfig,
    );
    await waitFor(
      () => again.size === 5,
      20_000,
      () => `the five messages again (got ${[...again].join(', ')})`,
    );
  });
});
