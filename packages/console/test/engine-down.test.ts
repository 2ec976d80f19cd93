/**
 * The engine going away while the console runs: the live socket is told at once, /_console/status says
 * the bridge is down, and API calls that need the engine answer 503 engine_unavailable without waiting.
 */
import { type Engine, startEngine } from '@flint/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, consoleFlagsFor, startConsoleEnv, uid, waitFor } from './support/console-env.js';
import { type WsTestClient, connectLive } from './support/ws-client.js';

let env: ConsoleEnv;
let client: WsTestClient;
let ports: { bridge: number; http: number; stream: number };
let restarted: Engine | undefined;

beforeAll(async () => {
  env = await startConsoleEnv();
  const flags = consoleFlagsFor(env.engine);
  ports = { bridge: flags.bridgePort as number, http: flags.enginePort as number, stream: flags.wsPort as number };
  client = await connectLive(`${env.url.replace('http:', 'ws:')}/_console/live`);
  expect(await client.next()).toEqual({ type: 'bridge', state: 'connected' });
  await env.stopEngine();
});

afterAll(async () => {
  client?.close();
  await env?.close();
  await restarted?.stop();
});

describe('when the engine stops', () => {
  it('pushes {type: bridge, state: disconnected} to the live socket, which stays open', async () => {
    await client.waitMessage((m) => m.type === 'bridge' && m.state === 'disconnected', 3000, 'the disconnected event');
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });

  it('says in /_console/status that the bridge is not connected, with no engine details', async () => {
    const res = await waitFor(
      async () => {
        const r = await env.api('GET', '/_console/status');
        return r.body.bridge !== 'connected' ? r : undefined;
      },
      3000,
      'the status to show the bridge down',
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ engine: null, health: null, http: { reachable: false }, stream: { reachable: false } });
    expect(['disconnected', 'connecting']).toContain(res.body.bridge);
  });

  it('answers calls that need the engine with 503 engine_unavailable in well under a second', async () => {
    await waitFor(() => env.console.link.bridgeState !== 'connected', 3000, 'the bridge to drop');
    const calls: [string, string, unknown?][] = [
      ['GET', '/_console/functions'],
      ['GET', '/_console/workers'],
      ['GET', '/_console/cluster'],
      ['GET', '/_console/triggers'],
      ['GET', '/_console/states'],
      ['GET', '/_console/queues'],
      ['PUT', '/_console/states/s/k', { value: 1 }],
      ['POST', '/_console/emit', { trigger_id: 'x', payload: {} }],
      ['POST', '/_console/queues/t/publish', { data: 1 }],
    ];
    for (const [method, path, body] of calls) {
      const started = Date.now();
      const res = await env.api(method, path, body);
      expect(Date.now() - started, `${method} ${path}`).toBeLessThan(1000);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.body.code).toBe('engine_unavailable');
    }
  });

  it("answers /_console/invoke with 503 engine_unavailable too (not as the function's error), at once", async () => {
    const started = Date.now();
    const res = await env.api('POST', '/_console/invoke', { function_id: 'anything' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('engine_unavailable');
  });

  it('still serves /_console/config', async () => {
    const res = await env.api('GET', '/_console/config');
    expect(res.status).toBe(200);
  });

  it('reconnects by itself when an engine is back on the same ports, and listens to changes again', async () => {
    restarted = await startEngine({
      config: {
        bridge: { port: ports.bridge },
        log: { level: 'silent' },
        modules: [{ name: 'flint-http', config: { port: ports.http } }, { name: 'flint-state' }, { name: 'flint-stream', config: { port: ports.stream } }],
      },
    });
    // The console retries with back-off (0.5 s, 1 s, 2 s, …).
    await client.waitMessage((m) => m.type === 'bridge' && m.state === 'connected' && client.messages.indexOf(m) > 0, 8000, 'the bridge to reconnect');
    const status = await env.api('GET', '/_console/status');
    expect(status.body).toMatchObject({ bridge: 'connected', http: { reachable: true }, stream: { reachable: true } });
    expect(status.body.engine.modules.map((m: { name: string }) => m.name)).toEqual(['flint-http', 'flint-state', 'flint-stream']);
    const scope = uid('after-restart');
    await waitFor(
      async () => {
        await env.api('PUT', `/_console/states/${scope}/k`, { value: 1 });
        return client.messages.some((m) => m.type === 'state' && m.scope === scope);
      },
      3000,
      'a state event after the reconnect',
    );
  }, 15_000);
});
