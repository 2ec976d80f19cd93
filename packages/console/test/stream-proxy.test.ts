/**
 * WS /_console/streams: a pipe to the engine's stream WebSocket. Joins go through it and the engine's
 * frames come back (for writes made by a worker); the Origin is checked; a stream port that does not
 * answer refuses the upgrade with 502.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, closedPort, consoleFlagsFor, startConsoleEnv, startTestConsole, uid, waitFor } from './support/console-env.js';
import { type WsTestClient, connectLive, refusedUpgrade } from './support/ws-client.js';

let env: ConsoleEnv;
let streamsUrl: string;
const open: WsTestClient[] = [];

beforeAll(async () => {
  env = await startConsoleEnv();
  streamsUrl = `${env.url.replace('http:', 'ws:')}/_console/streams`;
});
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});
afterAll(() => env?.close());

async function proxied(path = '', headers: Record<string, string> = {}): Promise<WsTestClient> {
  const client = await connectLive(`${streamsUrl}${path}`, { headers });
  open.push(client);
  return client;
}

const isFrame = (event: string, stream: string, group: string) => (f: { type?: string; streamName?: string; groupId?: string; event?: { type?: string } }) =>
  f.type === 'stream' && f.streamName === stream && f.groupId === group && f.event?.type === event;

describe('WS /_console/streams', () => {
  it('passes a join to the engine and its frames back: the sync, then a worker write', async () => {
    const client = await proxied('', { origin: env.url });
    const stream = uid('chat');
    const worker = await env.worker();
    await worker.stream.set(stream, 'room-1', 'm1', { text: 'first' });

    client.send({ type: 'join', data: { subscriptionId: 's1', streamName: stream, groupId: 'room-1' } });
    const sync = await client.waitMessage(isFrame('sync', stream, 'room-1'), 3000, 'the sync frame');
    expect(sync.event.data).toEqual([{ text: 'first' }]);

    await worker.stream.set(stream, 'room-1', 'm2', { text: 'second' });
    const created = await client.waitMessage(isFrame('create', stream, 'room-1'), 3000, 'the create frame');
    expect(created).toMatchObject({ id: 'm2', event: { data: { text: 'second' } } });

    await worker.trigger({ function_id: 'stream::set', payload: { stream_name: stream, group_id: 'room-1', item_id: 'm1', data: { text: 'edited' } } });
    const updated = await client.waitMessage(isFrame('update', stream, 'room-1'), 3000, 'the update frame');
    expect(updated).toMatchObject({ id: 'm1', event: { data: { text: 'edited' } } });
  });

  it('works without an Origin (clients that are not browsers) and passes the path on: /stream/<s>/<g> subscribes on connect', async () => {
    const stream = uid('feed');
    const client = await proxied(`/stream/${encodeURIComponent(stream)}/g1`);
    const sync = await client.waitMessage(isFrame('sync', stream, 'g1'), 3000, 'the sync frame of the path subscription');
    expect(sync.event.data).toEqual([]);
    const worker = await env.worker();
    await worker.stream.send(stream, 'g1', 'ping', { n: 1 });
    const event = await client.waitMessage((f) => f.streamName === stream && f.event?.type === 'event', 3000, 'the custom event');
    expect(event.event.event).toEqual({ type: 'ping', data: { n: 1 } });
  });

  it('closes the client when the engine closes its side', async () => {
    const client = await proxied('/stream/a/b');
    await client.waitMessage((f) => f.event?.type === 'sync');
    // A frame larger than the stream module's max_frame_bytes (64 KiB) makes the engine close with 1009.
    client.send({ type: 'join', data: { subscriptionId: 'x', streamName: 'a'.repeat(70_000), groupId: 'b' } });
    expect(await client.closed()).toBe(1009);
  });

  it("closes the engine's side when the client goes away", async () => {
    const connections = async () => ((await env.engine.invoke('engine::streams::stats', {})) as { totals: { connections: number } }).totals.connections;
    await waitFor(async () => (await connections()) === 0, 3000, 'no stream connections');
    const client = await proxied('/stream/c/d');
    await client.waitMessage((f) => f.event?.type === 'sync');
    expect(await connections()).toBe(1);
    client.ws.close();
    await waitFor(async () => (await connections()) === 0, 3000, "the engine's stream connection to close");
  });

  it('refuses another Origin with 403 origin_forbidden', async () => {
    const refused = await refusedUpgrade(streamsUrl, { headers: { origin: 'https://evil.example' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'origin_forbidden' });
  });

  it('answers the engine refusing the path as 502 engine_stream_unreachable', async () => {
    const refused = await refusedUpgrade(`${streamsUrl}/not-a-stream-path`);
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({ code: 'engine_stream_unreachable', error: expect.stringContaining('HTTP 404') });
  });

  it('refuses the upgrade with 502 engine_stream_unreachable when the stream port is closed', async () => {
    const server = await startTestConsole({ ...consoleFlagsFor(env.engine), wsPort: await closedPort() });
    try {
      const refused = await refusedUpgrade(`${server.url.replace('http:', 'ws:')}/_console/streams`);
      expect(refused.status).toBe(502);
      expect(refused.body).toMatchObject({ code: 'engine_stream_unreachable', error: expect.stringContaining('ECONNREFUSED') });
    } finally {
      await server.close();
    }
  });
});
