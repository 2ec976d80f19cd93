/**
 * WS /_console/live: the bridge state on connect, then registry and state changes pushed as they happen
 * in the engine (made by other workers), and the Origin check on the upgrade.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, sleep, startConsoleEnv, uid } from './support/console-env.js';
import { type WsTestClient, connectLive, refusedUpgrade } from './support/ws-client.js';

let env: ConsoleEnv;
let liveUrl: string;
const open: WsTestClient[] = [];

beforeAll(async () => {
  env = await startConsoleEnv();
  liveUrl = `${env.url.replace('http:', 'ws:')}/_console/live`;
});
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});
afterAll(() => env?.close());

async function live(headers: Record<string, string> = {}): Promise<WsTestClient> {
  const client = await connectLive(liveUrl, { headers });
  open.push(client);
  expect(await client.next()).toEqual({ type: 'bridge', state: 'connected' });
  return client;
}

describe('WS /_console/live', () => {
  it('sends the bridge state first', async () => {
    const client = await live();
    expect(client.messages).toEqual([{ type: 'bridge', state: 'connected' }]);
  });

  it('pushes workers when a worker connects, functions when another worker registers one, triggers for a trigger', async () => {
    const client = await live();
    const worker = await env.worker();
    await client.waitMessage((m) => m.type === 'workers', 3000, 'a workers event');

    const fn = `${uid('live')}::fn`;
    const before = client.messages.length;
    worker.registerFunction(fn, () => null);
    await client.waitMessage((m) => m.type === 'functions' && client.messages.indexOf(m) >= before, 3000, 'a functions event');

    const afterFn = client.messages.length;
    await worker.registerTrigger({ type: 'subscribe', function_id: fn, config: { topic: uid('t') } }).ready;
    await client.waitMessage((m) => m.type === 'triggers' && client.messages.indexOf(m) >= afterFn, 3000, 'a triggers event');
  });

  it('pushes a state event with scope, key and event type when a worker sets a key', async () => {
    const client = await live();
    const worker = await env.worker();
    const scope = uid('scope');
    await worker.state.set(scope, 'k1', { n: 1 });
    expect(await client.waitMessage((m) => m.type === 'state' && m.scope === scope, 3000, 'a state event')).toEqual({
      type: 'state',
      scope,
      key: 'k1',
      event_type: 'state:created',
    });
  });

  it('merges a burst of changes to one scope into one event (the latest)', async () => {
    const client = await live();
    const worker = await env.worker();
    const scope = uid('burst');
    await Promise.all(Array.from({ length: 10 }, (_, i) => worker.state.set(scope, `k${i}`, i)));
    await client.waitMessage((m) => m.type === 'state' && m.scope === scope);
    await sleep(250);
    expect(client.messages.filter((m) => m.type === 'state' && m.scope === scope).length).toBeLessThan(10);
  });

  it('accepts its own Origin and refuses another site with 403 origin_forbidden', async () => {
    const host = new URL(env.url).host;
    await live({ origin: `http://${host}` });
    const refused = await refusedUpgrade(liveUrl, { headers: { origin: 'https://evil.example' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'origin_forbidden' });
    const otherPort = await refusedUpgrade(liveUrl, { headers: { origin: 'http://127.0.0.1:1' } });
    expect(otherPort.status).toBe(403);
    const notUrl = await refusedUpgrade(liveUrl, { headers: { origin: 'null' } });
    expect(notUrl.status).toBe(403);
  });

  it('answers an upgrade on an unknown path with 404', async () => {
    const refused = await refusedUpgrade(`${env.url.replace('http:', 'ws:')}/_console/nothing`);
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ code: 'not_found' });
  });
});
