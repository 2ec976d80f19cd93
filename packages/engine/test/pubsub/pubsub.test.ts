/**
 * flint-pubsub: `publish {topic, data}` reaches every `subscribe` trigger of the topic listening at that
 * moment (every subscriber gets every message, none is kept), through both worker SDKs; conditions; bad
 * input; and with the redis adapter, subscribers on several engines, and a Redis outage (publish fails
 * fast with store_unavailable, and subscriptions come back with Redis).
 *
 * The Redis part uses the real Redis at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379) with a unique
 * channel prefix, and a throw-away redis-server for the outage; without Redis it is skipped with a
 * printed reason (a failure when FLINT_REQUIRE_SERVICES=1).
 */
import { randomUUID } from 'node:crypto';
import type { Engine } from '@flint/engine';
import { type Worker as FlintWorker, TriggerRegistrationError } from '@flint/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, type TestWorker, findTrigger, startTestEngine, startWorker } from '../support/harness.js';
import { SpareRedisServer } from '../support/services/redis-server.js';
import { gateService, programAvailable, serviceAvailable } from '../support/services/services.js';
import { outcome, sleep, uid, waitFor } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('pubsub on Redis', await serviceAvailable('redis', REDIS_URL));
const runSpare = runRedis && gateService('pubsub Redis outage (redis-server)', programAvailable('redis-server'));

afterEach(cleanup);

// biome-ignore lint/suspicious/noExplicitAny: payloads are JSON
type Json = any;

const startPubSub = (config: Record<string, unknown> = {}) => startTestEngine({ modules: [{ name: 'flint-pubsub', config }] });

/** A worker subscribed to `topic` with `count` functions; returns what each received. */
async function subscribers(
  kind: SdkKind,
  engine: Engine,
  topic: string,
  count: number,
  condition?: (data: Json) => unknown,
): Promise<{ worker: TestWorker; got: Json[][] }> {
  const got: Json[][] = Array.from({ length: count }, () => []);
  const prefix = uid('sub');
  const worker = await startWorker(kind, engine, (w) => {
    if (condition) w.registerFunction(`${prefix}::condition`, condition);
    for (let i = 0; i < count; i++) {
      w.registerFunction(`${prefix}::${i}`, (data: Json) => {
        got[i]?.push(data);
        return null;
      });
      w.registerTrigger({
        type: 'subscribe',
        function_id: `${prefix}::${i}`,
        config: condition ? { topic, condition_function_id: `${prefix}::condition` } : { topic },
      });
    }
  });
  for (let i = 0; i < count; i++) await waitFor(() => findTrigger(engine, (t) => t.function_id === `${prefix}::${i}`));
  return { worker, got };
}

describe.each(SDK_KINDS)('flint-pubsub (local) with %s workers', (kind: SdkKind) => {
  it('every subscriber of the topic gets every message, in order; other topics and later subscribers get nothing', async () => {
    const engine = await startPubSub();
    const topic = uid('news');
    const { got } = await subscribers(kind, engine, topic, 3);
    const other = await subscribers(kind, engine, uid('other'), 1);
    const publisher = await startWorker(kind, engine);
    for (let n = 0; n < 5; n++)
      expect(await publisher.trigger({ function_id: 'publish', payload: { topic, data: { n } } })).toBe(kind === 'iii' ? undefined : null);
    await waitFor(() => got.every((g) => g.length === 5));
    for (const g of got) expect(g).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    const late = await subscribers(kind, engine, topic, 1);
    await sleep(100);
    expect(late.got[0]).toEqual([]); // nothing is kept
    expect(other.got[0]).toEqual([]);
  });

  it('a condition answering false skips a message for that subscriber; bad input is refused', async () => {
    const engine = await startPubSub({ max_message_bytes: 200 });
    const topic = uid('cond');
    const { got } = await subscribers(kind, engine, topic, 1, (data: Json) => data.important === true);
    const publisher = await startWorker(kind, engine);
    await publisher.trigger({ function_id: 'publish', payload: { topic, data: { important: false, n: 1 } } });
    await publisher.trigger({ function_id: 'publish', payload: { topic, data: { important: true, n: 2 } } });
    await waitFor(() => got[0]?.length === 1);
    await sleep(50);
    expect(got[0]).toEqual([{ important: true, n: 2 }]);
    for (const [payload, text] of [
      [{ data: 1 }, 'topic is required'],
      [{ topic: '', data: 1 }, 'topic must be'],
      [{ topic: 7 }, 'topic must be'],
      [{ topic, data: 'x'.repeat(300) }, 'max_message_bytes'],
    ] as const) {
      const o = await outcome(publisher.trigger({ function_id: 'publish', payload }));
      expect(o.ok, JSON.stringify(payload)).toBe(false);
      if (!o.ok) expect(o.error).toMatchObject({ code: 'invalid_payload', message: expect.stringContaining(text) });
    }
  });
});

describe('subscribe trigger configs', () => {
  it('a config without topic, or with an unknown key, is refused and reported to the Flint SDK', async () => {
    const engine = await startPubSub();
    const native = (await startWorker('flint', engine)).native as FlintWorker;
    native.registerFunction('noop::fn', () => null);
    for (const config of [{}, { topic: '' }, { topic: 1 }, { topic: 't', topics: 'typo' }]) {
      const t = native.registerTrigger({ type: 'subscribe', function_id: 'noop::fn', config });
      expect(
        await t.ready.then(
          () => undefined,
          (err: unknown) => err,
        ),
        JSON.stringify(config),
      ).toBeInstanceOf(TriggerRegistrationError);
    }
  });
});

describe.skipIf(!runRedis)('flint-pubsub on a shared Redis', () => {
  const redisBus = (channel_prefix: string, redis_url = REDIS_URL) => ({
    adapter: { name: 'redis', config: { redis_url, channel_prefix, command_timeout_ms: 500 } },
  });

  it('subscribers on every engine get every message, whichever engine it was published through', async () => {
    const prefix = `flint-test:pubsub:${randomUUID()}:`;
    const a = await startPubSub(redisBus(prefix));
    const b = await startPubSub(redisBus(prefix));
    const isolated = await startPubSub(redisBus(`${prefix}other:`));
    const topic = uid('fanout');
    const onA = await subscribers('flint', a, topic, 1);
    const onB = await subscribers('iii', b, topic, 2);
    const onIsolated = await subscribers('flint', isolated, topic, 1);
    await a.invoke('publish', { topic, data: 'from A' });
    await b.invoke('publish', { topic, data: 'from B' });
    await waitFor(() => [...onA.got, ...onB.got].every((g) => g.length === 2));
    for (const g of [...onA.got, ...onB.got]) expect(g).toEqual(['from A', 'from B']);
    await sleep(100);
    expect(onIsolated.got[0]).toEqual([]);
  });

  describe.skipIf(!runSpare)('Redis outage', () => {
    let redis: SpareRedisServer;
    beforeAll(async () => {
      redis = await SpareRedisServer.start();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it('publish fails fast with store_unavailable while Redis is down; afterwards messages flow again', async () => {
      const prefix = `flint-test:pubsub:${randomUUID()}:`;
      const a = await startPubSub(redisBus(prefix, redis.url));
      const b = await startPubSub(redisBus(prefix, redis.url));
      const topic = uid('outage');
      const onB = await subscribers('flint', b, topic, 1);
      await a.invoke('publish', { topic, data: 1 });
      await waitFor(() => onB.got[0]?.length === 1);

      await redis.kill();
      const started = Date.now();
      await expect(a.invoke('publish', { topic, data: 'lost' })).rejects.toMatchObject({ code: 'store_unavailable' });
      expect(Date.now() - started).toBeLessThan(1500);

      await redis.restart();
      await waitFor(
        async () => {
          await a.invoke('publish', { topic, data: 'again' });
          return onB.got[0]?.includes('again');
        },
        10_000,
        'messages to flow again after the restart',
        200,
      );
      expect(onB.got[0]).not.toContain('lost');
    });
  });
});
