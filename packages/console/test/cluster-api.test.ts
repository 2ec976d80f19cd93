/**
 * The console of one engine of a cluster on NATS: /_console/workers lists the workers of both engines,
 * each with its `engine`, and /_console/cluster passes `engine::cluster::members` through (the console's
 * engine first). Needs NATS (FLINT_TEST_NATS_URL, default nats://127.0.0.1:4222); skipped without it.
 */
import type { Engine } from '@flint/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, type Json, startConsoleEnv, startTestEngine, uid, waitFor } from './support/console-env.js';
import { NATS_URL, clusterConfig, gateService, natsAvailable } from './support/services.js';

const runNats = gateService('console cluster tests on NATS', await natsAvailable(NATS_URL));

describe.skipIf(!runNats)('the console of engine a, in a cluster with engine b', () => {
  const name = uid('console-api');
  let env: ConsoleEnv;
  let b: Engine;
  const onA = uid('on-a');
  const onB = uid('on-b');

  beforeAll(async () => {
    env = await startConsoleEnv({ cluster: clusterConfig(name, 'a') });
    b = await startTestEngine(undefined, { cluster: clusterConfig(name, 'b') });
    await env.worker((w) => w.registerFunction(`${onA}::hi`, () => 'a'), { workerName: onA });
    await env.worker((w) => w.registerFunction(`${onB}::hi`, () => 'b'), { workerName: onB }, b);
  });
  afterAll(async () => {
    await env?.close();
    await b?.stop();
  });

  it('GET /_console/workers lists the workers of both engines, each with its engine', async () => {
    const res = await env.api('GET', '/_console/workers');
    expect(res.status).toBe(200);
    const byName = new Map(res.body.workers.map((w: Json) => [w.name, w]));
    expect(byName.get(onA)).toMatchObject({ engine: 'a', functions: [`${onA}::hi`] });
    expect(byName.get(onB)).toMatchObject({ engine: 'b', functions: [`${onB}::hi`] });
    expect(res.body.workers.every((w: Json) => w.engine === 'a' || w.engine === 'b')).toBe(true);
  });

  it('GET /_console/cluster answers the members: engine a first, then b with its bridge and when it was heard from', async () => {
    const body = await waitFor(
      async () => {
        const res = await env.api('GET', '/_console/cluster');
        expect(res.status).toBe(200);
        return res.body.members.length === 2 ? res.body : undefined;
      },
      5000,
      'engine b in the member list',
    );
    expect(body).toMatchObject({ available: true, cluster: name, node_id: 'a' });
    const [self, other] = body.members;
    expect(self).toMatchObject({ node: 'a', bridge: env.engine.bridgeUrl, last_seen_ms: 0 });
    expect(other).toMatchObject({ node: 'b', bridge: b.bridgeUrl, version: expect.any(String), started_at: expect.any(Number) });
    expect(other.workers).toBeGreaterThanOrEqual(1);
    expect(other.functions).toBeGreaterThanOrEqual(1);
    // Heartbeats every 100 ms, dropped after 800 ms: a live engine was heard from moments ago.
    expect(other.last_seen_ms).toBeGreaterThanOrEqual(0);
    expect(other.last_seen_ms).toBeLessThan(800);
  });
});
