/**
 * flint-queue on RabbitMQ while the broker restarts (`rabbitmqctl stop_app` / `start_app`) in the
 * middle of a run, on a RabbitMQ node of the test's own: publishes during the outage fail fast with
 * queue_unavailable, the adapter reconnects by itself, and every acknowledged publish is handled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { connectWorker, startTestEngine } from '../support/harness.js';
import { SpareRabbitNode, spareNodeStatus } from '../support/services/rabbitmq-node.js';
import { gateService } from '../support/services/services.js';
import { runPool } from '../support/state/helpers.js';
import { outcome, uid, waitFor } from '../support/util.js';

const runs = gateService('RabbitMQ restart test', spareNodeStatus());

describe.skipIf(!runs)('flint-queue on RabbitMQ across a broker restart', () => {
  let node: SpareRabbitNode;
  beforeAll(async () => {
    node = await SpareRabbitNode.start();
  }, 90_000);
  afterAll(async () => {
    await cleanup();
    await node?.stop();
  }, 60_000);

  it('nothing acknowledged is lost; publishes during the outage fail fast; consumers come back', { timeout: 120_000 }, async () => {
    const engine = await startTestEngine({
      modules: [{ name: 'flint-queue', config: { adapter: { name: 'rabbitmq', config: { amqp_url: node.url, reconnect_max_ms: 500 } } } }],
    });
    const topic = uid('restart');
    const w = connectWorker('flint', engine.bridgeUrl);
    const seen = new Set<number>();
    w.registerFunction('test::sink', (d: { i: number }) => {
      seen.add(d.i);
      return null;
    });
    w.registerTrigger({ type: 'durable:subscriber', function_id: 'test::sink', config: { topic } });
    await waitFor(async () => ((await engine.invoke('engine::queue::topic_stats', { topic })) as { consumer_count: number }).consumer_count > 0, 10_000);

    const acked = new Set<number>();
    const refused: { code?: string; ms: number }[] = [];
    let next = 0;
    const publishOne = async () => {
      const i = next++;
      const began = Date.now();
      const o = await outcome(w.trigger({ function_id: 'flint::durable::publish', payload: { topic, data: { i } } }));
      if (o.ok) acked.add(i);
      else refused.push({ code: o.error.code, ms: Date.now() - began });
    };
    // 16 publishers keep going; once 600 are acknowledged the broker's application stops under them.
    // They go on until the outage has refused 20 publishes, whatever the machine's speed.
    let stopping: Promise<void> | undefined;
    await runPool(16, 16, async () => {
      while (refused.length < 20) {
        if (acked.size >= 600 && !stopping) stopping = node.stopApp();
        await publishOne();
      }
    });
    await stopping;
    // Every refused publish said why, quickly.
    expect(new Set(refused.map((r) => r.code))).toEqual(new Set(['queue_unavailable']));
    expect(Math.max(...refused.map((r) => r.ms))).toBeLessThan(6000);
    await node.startApp();
    // After the restart publishing works again (once the adapter has reconnected, within its back-off),
    // and everything acknowledged is handled.
    await waitFor(
      async () => (await outcome(w.trigger({ function_id: 'flint::durable::publish', payload: { topic, data: { i: -1 } } }))).ok,
      20_000,
      'a publish to succeed after the restart',
    );
    acked.add(-1);
    await runPool(400, 16, publishOne);
    await waitFor(
      () => [...acked].every((i) => seen.has(i)),
      60_000,
      () => `every acknowledged message (${[...acked].filter((i) => !seen.has(i)).length} of ${acked.size} missing)`,
    );
  });
});
