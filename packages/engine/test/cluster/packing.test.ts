/**
 * Calls forwarded between two engines on NATS (the machine's server): the calls one engine forwards in
 * one turn travel packed in one NATS message (as many as fit), and each still gets its own answer; a
 * plain NATS request from any other client is answered plainly.
 */
import { type Engine, startEngine } from '@flint/engine';
import { EngineFunctions, type FunctionInfo } from '@flint/protocol';
import { registerWorker } from '@flint/sdk';
import { JSONCodec, connect } from 'nats';
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { gateService, serviceAvailable } from '../support/services/services.js';
import { uid, waitFor } from '../support/util.js';

const NATS_URL = process.env.FLINT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const runNats = gateService('cluster packing tests on NATS', await serviceAvailable('nats', NATS_URL));
const quiet = { warn() {}, error() {}, debug() {} };

afterEach(cleanup);

async function node(name: string, id: string): Promise<Engine> {
  const cluster = { transport: 'nats', url: NATS_URL, name, node_id: id, heartbeat_ms: 100, expire_ms: 800 };
  const engine = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, cluster } });
  track(() => engine.stop());
  return engine;
}

describe('cluster on nats: packed calls', () => {
  test.skipIf(!runNats)('forty calls forwarded in one turn cross in a few NATS messages, each with its own answer; large ones split', async () => {
    const name = uid('c');
    const [a, b] = await Promise.all([node(name, 'a'), node(name, 'b')]);
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

    // A second subscriber on b's call subject sees every message sent there (and answers none).
    const nc = await connect({ servers: NATS_URL });
    track(() => nc.close());
    let messages = 0;
    nc.subscribe(`flint.${name}.node.b.invoke`, { callback: () => messages++ });
    await nc.flush();

    const results = await Promise.all(Array.from({ length: 40 }, (_, n) => a.invoke('b::double', { n })));
    expect(results).toEqual(Array.from({ length: 40 }, (_, n) => ({ n: n * 2 })));
    await nc.flush();
    expect(messages).toBeGreaterThan(0);
    expect(messages).toBeLessThanOrEqual(4);

    // Calls too large to travel together: as many messages as it takes to stay under max_payload (1 MiB).
    messages = 0;
    const big = 'x'.repeat(400_000);
    const echoed = await Promise.all([1, 2, 3, 4].map((n) => a.invoke('b::double', { n, big })));
    expect(echoed).toEqual([2, 4, 6, 8].map((n) => ({ n })));
    await nc.flush();
    expect(messages).toBeGreaterThanOrEqual(2);
    expect(messages).toBeLessThanOrEqual(4);

    // One at a time: one message each.
    messages = 0;
    for (let n = 0; n < 5; n++) expect(await a.invoke('b::double', { n })).toEqual({ n: n * 2 });
    await nc.flush();
    expect(messages).toBe(5);
  });

  test.skipIf(!runNats)('a plain NATS request to an engine is answered plainly', async () => {
    const name = uid('c');
    const b = await node(name, 'b');
    const w = registerWorker(b.bridgeUrl, { workerName: 'w-b', log: quiet });
    track(() => w.shutdown());
    w.registerFunction('b::double', async (input: { n: number }) => ({ n: input.n * 2 }));
    await w.waitConnected();

    const nc = await connect({ servers: NATS_URL });
    track(() => nc.close());
    const json = JSONCodec();
    const call = (data: unknown) => nc.request(`flint.${name}.node.b.invoke`, json.encode(data), { timeout: 5000 });
    expect(json.decode((await call({ function_id: 'b::double', data: { n: 21 }, timeout_ms: 5000 })).data)).toEqual({ result: { n: 42 } });
    expect(json.decode((await call({ data: 1 })).data)).toMatchObject({ error: { code: 'invalid_frame' } });
  });
});
