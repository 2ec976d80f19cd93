/**
 * The Streams page's inspector store against a real WebSocket server (the `ws` package stands in for
 * the browser's WebSocket): a render reads counters and the frame list from one snapshot, so the
 * counters never run ahead of the frames listed.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { type InspectorSnapshot, StreamInspector } from '../../web/src/pages/streams/inspector.js';

describe('StreamInspector', () => {
  const servers: WebSocketServer[] = [];
  const inspectors: StreamInspector[] = [];
  beforeAll(() => {
    (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
  });
  afterEach(async () => {
    for (const i of inspectors.splice(0)) i.dispose();
    for (const s of servers.splice(0)) {
      for (const c of s.clients) c.terminate();
      await new Promise((r) => s.close(r));
    }
  });

  /** A server that answers each join with a sync, then sends `events` more frames one by one. */
  async function server(events: number): Promise<string> {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    servers.push(wss);
    await once(wss, 'listening');
    wss.on('connection', (ws) => {
      ws.on('message', async () => {
        ws.send(JSON.stringify({ streamName: 's', groupId: 'g', event: { type: 'sync', data: [] } }));
        for (let i = 0; i < events; i++) {
          await new Promise((r) => setTimeout(r, 5));
          ws.send(JSON.stringify({ streamName: 's', groupId: 'g', id: `m${i}`, event: { type: 'create', data: { i } } }));
        }
      });
    });
    return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
  }

  const listedIn = (s: InspectorSnapshot) => s.frames.filter((f) => f.dir === 'in').length;

  it('joins on open, lists what arrives newest first, and its counters always match the list it shows', async () => {
    const inspector = new StreamInspector('s', 'g', await server(20));
    inspectors.push(inspector);
    let notified = 0;
    inspector.subscribe(() => notified++);
    const mismatches: string[] = [];
    // Read the snapshot on every turn, as a render caused by anything else (a clock) would.
    while (inspector.getSnapshot().counters.inbound < 21 || listedIn(inspector.getSnapshot()) < 21) {
      const snap = inspector.getSnapshot();
      if (snap.counters.inbound !== listedIn(snap) && mismatches.length < 3) mismatches.push(`${snap.counters.inbound} counted, ${listedIn(snap)} listed`);
      await new Promise((r) => setImmediate(r));
    }
    expect(mismatches).toEqual([]);
    const snap = inspector.getSnapshot();
    expect(snap.status).toBe('open');
    expect(snap.counters.outbound).toBe(1);
    expect(snap.frames.at(-1)?.kind).toBe('join');
    expect(snap.frames[0]).toMatchObject({ dir: 'in', kind: 'create', id: 'm19' });
    // Twenty-two frames, fewer notifications: changes that come close together are flushed together.
    expect(notified).toBeGreaterThan(0);
    expect(notified).toBeLessThan(22);
  });

  it('while paused, counts what arrives and holds it aside; Resume lists it', async () => {
    const inspector = new StreamInspector('s', 'g', await server(0));
    inspectors.push(inspector);
    await expect.poll(() => listedIn(inspector.getSnapshot())).toBe(1);
    inspector.pause();
    await expect.poll(() => inspector.getSnapshot().paused).toBe(true);
    // The server pushes a change on its own.
    const [wss] = servers;
    for (const c of wss?.clients ?? []) c.send(JSON.stringify({ streamName: 's', groupId: 'g', id: 'x', event: { type: 'update', data: {} } }));
    await expect.poll(() => inspector.getSnapshot().held).toBe(1);
    expect(inspector.getSnapshot().counters.inbound).toBe(2);
    expect(listedIn(inspector.getSnapshot())).toBe(1);
    inspector.resume();
    expect(listedIn(inspector.getSnapshot())).toBe(2);
    expect(inspector.getSnapshot().held).toBe(0);
  });
});
