/**
 * Calls forwarded between two engines on NATS and on Redis (the machine's servers): the calls one engine
 * forwards in one turn travel packed in one message (as many as fit), and each still gets its own
 * answer; a plain NATS request from any other client is answered plainly.
 */
import { type Engine, startEngine } from '@flint/engine';
import { EngineFunctions, type FunctionInfo } from '@flint/protocol';
import { registerWorker } from '@flint/sdk';
import { Redis } from 'ioredis';
import { JSONCodec, connect } from 'nats';
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { gateService, serviceAvailable } from '../support/services/services.js';
import { uid, waitFor } from '../support/util.js';

const NATS_URL = process.env.FLINT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runNats = gateService('cluster packing tests on NATS', await serviceAvailable('nats', NATS_URL));
const runRedis = gateService('cluster packing tests on Redis', await serviceAvailable('redis', REDIS_URL));
const quiet = { warn() {}, error() {}, debug() {} };

afterEach(cleanup);

type Transport = 'nats' | 'redis';

async function node(transport: Transport, name: string, id: string): Promise<Engine> {
  const cluster = { transport, url: transport === 'nats' ? NATS_URL : REDIS_URL, name, node_id: id, heartbeat_ms: 100, expire_ms: 800 };
  const engine = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, cluster } });
  track(() => engine.stop());
  return engine;
}

/** Engine b with a worker providing b::double, and engine a, which lists it. */
async function pair(transport: Transport, name: string): Promise<[Engine, Engine]> {
  const [a, b] = await Promise.all([node(transport, name, 'a'), node(transport, name, 'b')]);
  const w = registerWorker(b.bridgeUrl, { workerName: 'w-b', log: quiet });
  track(() => w.shutdown());
  w.registerFunction('b::double', async (input: { n: number }) => ({ n: input.n * 2 }));
  await w.waitConnected();
  await waitFor(
    async () => {
      const { functions } = (await a.invoke(EngineFunctions.LIST_FUNCTIONS, {})) as { functions: FunctionInfo[] };
      return functions.some((f) => f.function_id === 'b::double');
    },
    5000,
    'engine a to list b::double',
  );
  return [a, b];
}

/** A second subscriber on `subject` that counts the messages sent there (and answers none). */
async function countMessages(transport: Transport, subject: string): Promise<{ count: number; settle: () => Promise<void> }> {
  const counter = { count: 0, settle: async () => {} };
  if (transport === 'nats') {
    const nc = await connect({ servers: NATS_URL });
    track(() => nc.close());
    nc.subscribe(subject, { callback: () => counter.count++ });
    await nc.flush();
    counter.settle = () => nc.flush();
  } else {
    const sub = new Redis(REDIS_URL);
    track(() => sub.quit());
    sub.on('message', () => counter.count++);
    await sub.subscribe(subject);
    // A round trip on the subscriber's own connection: every message published before it has arrived.
    counter.settle = async () => void (await sub.ping());
  }
  return counter;
}

describe.each([
  { transport: 'nats' as const, run: runNats },
  { transport: 'redis' as const, run: runRedis },
])('cluster on $transport: packed calls', ({ transport, run }) => {
  test.skipIf(!run)('forty calls forwarded in one turn cross in a few messages, each with its own answer; large ones split', async () => {
    const name = uid('c');
    const [a] = await pair(transport, name);
    const messages = await countMessages(transport, `flint.${name}.node.b.invoke`);

    const results = await Promise.all(Array.from({ length: 40 }, (_, n) => a.invoke('b::double', { n })));
    expect(results).toEqual(Array.from({ length: 40 }, (_, n) => ({ n: n * 2 })));
    await messages.settle();
    expect(messages.count).toBeGreaterThan(0);
    expect(messages.count).toBeLessThanOrEqual(4);

    // Calls too large to travel together: as many messages as it takes to stay under 1 MiB (NATS's default max_payload).
    messages.count = 0;
    const big = 'x'.repeat(400_000);
    const echoed = await Promise.all([1, 2, 3, 4].map((n) => a.invoke('b::double', { n, big })));
    expect(echoed).toEqual([2, 4, 6, 8].map((n) => ({ n })));
    await messages.settle();
    expect(messages.count).toBeGreaterThanOrEqual(2);
    expect(messages.count).toBeLessThanOrEqual(4);

    // One at a time: one message each.
    messages.count = 0;
    for (let n = 0; n < 5; n++) expect(await a.invoke('b::double', { n })).toEqual({ n: n * 2 });
    await messages.settle();
    expect(messages.count).toBe(5);
  });
});

describe('cluster on nats: requests from other clients', () => {
  test.skipIf(!runNats)('a plain NATS request to an engine is answered plainly', async () => {
    const name = uid('c');
    await pair('nats', name);
    const nc = await connect({ servers: NATS_URL });
    track(() => nc.close());
    const json = JSONCodec();
    const call = (data: unknown) => nc.request(`flint.${name}.node.b.invoke`, json.encode(data), { timeout: 5000 });
    expect(json.decode((await call({ function_id: 'b::double', data: { n: 21 }, timeout_ms: 5000 })).data)).toEqual({ result: { n: 42 } });
    expect(json.decode((await call({ data: 1 })).data)).toMatchObject({ error: { code: 'invalid_frame' } });
  });
});
