/**
 * GET /_console/streams through flint-stream: the streams a worker wrote to with their groups and type
 * (user or system), merged with the streams the live counters know (one that only carries custom
 * events), and the engine-wide counters of `engine::streams::stats`, which move when a client joins
 * through the console's stream proxy and a worker writes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleEnv,
  type Json,
  consoleTestModules,
  startConsoleEnv,
  startTestConsole,
  startTestEngine,
  uid,
  waitFor,
  whenConsoleReady,
} from './support/console-env.js';
import { connectLive } from './support/ws-client.js';

describe('GET /_console/streams', () => {
  let env: ConsoleEnv;
  const stream = uid('scores');
  const eventsOnly = uid('pings');

  const streams = async () => {
    const res = await env.api('GET', '/_console/streams');
    expect(res.status).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    env = await startConsoleEnv();
    const worker = await env.worker();
    await worker.stream.set(stream, 'match-7', 'home', { goals: 1 });
    await worker.stream.set(stream, 'match-2', 'away', { goals: 0 });
    await worker.stream.send(eventsOnly, 'lobby', 'ping', { n: 1 });
  });
  afterAll(() => env?.close());

  it('lists a stream a worker wrote to with its groups, as a user stream, and the engine counters', async () => {
    const body = await streams();
    expect(body.available).toBe(true);
    const entry = body.streams.find((s: Json) => s.name === stream);
    expect(entry).toMatchObject({ name: stream, groups: ['match-2', 'match-7'], type: 'user' });
    expect(entry.stats).toMatchObject({ events: 2 });
    expect(body.stats.totals).toEqual(
      expect.objectContaining({ connections: expect.any(Number), subscriptions: expect.any(Number), messages_out: expect.any(Number), buffered_bytes: 0 }),
    );
    const names = body.streams.map((s: Json) => s.name);
    expect(names).toEqual([...names].sort());
  });

  it('includes a stream known only from the counters (custom events, nothing stored), without groups', async () => {
    const body = await streams();
    expect(body.streams.find((s: Json) => s.name === eventsOnly)).toMatchObject({ groups: [], type: 'user', stats: { events: 1 } });
  });

  it("marks the engine's own streams as system", async () => {
    // Joining flint:streams:stats makes the engine publish its counters there, so the stream is counted.
    const client = await connectLive(`${env.url.replace('http:', 'ws:')}/_console/streams/stream/${encodeURIComponent('flint:streams:stats')}/engine`);
    try {
      await client.waitMessage((f) => f.streamName === 'flint:streams:stats', 3000, 'the stats sync');
      const body = await waitFor(async () => {
        const b = await streams();
        return b.streams.some((s: Json) => s.name === 'flint:streams:stats') ? b : undefined;
      });
      expect(body.streams.find((s: Json) => s.name === 'flint:streams:stats').type).toBe('system');
    } finally {
      client.close();
    }
  });

  it('counts a client joined through the proxy and the frames a worker write sends it', async () => {
    // The previous test's socket may still be closing on the engine's side.
    const before = await waitFor(async () => {
      const totals = (await streams()).stats.totals;
      return totals.connections === 0 ? totals : undefined;
    });
    const client = await connectLive(`${env.url.replace('http:', 'ws:')}/_console/streams`, { headers: { origin: env.url } });
    try {
      client.send({ type: 'join', data: { subscriptionId: 'inspector', streamName: stream, groupId: 'match-7' } });
      await client.waitMessage((f) => f.event?.type === 'sync', 3000, 'the sync');
      const worker = await env.worker();
      await worker.stream.set(stream, 'match-7', 'home', { goals: 2 });
      await client.waitMessage((f) => f.event?.type === 'update', 3000, 'the update');
      const after = (await streams()).stats.totals;
      expect(after.connections).toBe(before.connections + 1);
      expect(after.subscriptions).toBe(before.subscriptions + 1);
      expect(after.messages_in).toBeGreaterThanOrEqual(before.messages_in + 1);
      expect(after.messages_out).toBeGreaterThanOrEqual(before.messages_out + 2);
      const line = (await streams()).streams.find((s: Json) => s.name === stream);
      expect(line.stats.subscriptions).toBe(1);
    } finally {
      client.close();
    }
  });
});

describe('GET /_console/streams without flint-stream', () => {
  it('answers available: false', async () => {
    // The standard env always loads flint-stream: this engine is started without it.
    const engine = await startTestEngine(consoleTestModules().filter((m) => m.name !== 'flint-stream'));
    const port = (name: string) => Number(new URL(engine.listeners().find((l) => l.name === name)?.url ?? 'ws://x:1').port);
    const server = await startTestConsole({
      port: 0,
      host: '127.0.0.1',
      engineHost: '127.0.0.1',
      bridgePort: port('bridge'),
      enginePort: port('http'),
      wsPort: 1,
      noOtel: true,
    });
    try {
      await whenConsoleReady(engine, server);
      const res = await fetch(`${server.url}/_console/streams`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ available: false, streams: [], stats: null });
    } finally {
      await server.close();
      await engine.stop();
    }
  });
});
