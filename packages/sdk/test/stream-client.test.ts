/**
 * The stream client (`@flint/sdk/stream-client`) against a small stream server written here with `ws`:
 * the frames it sends, how it hands pushed messages to its subscriptions, leaving, reconnecting and
 * re-joining, close(), refused joins and frames that are not messages. (stream.test.ts runs it against
 * the engine's flint-stream module.)
 */
import type { AddressInfo } from 'node:net';
import type { StreamMessage } from '@flint/sdk';
import { type StreamClientStatus, type StreamConnection, type StreamTarget, connectStream } from '@flint/sdk/stream-client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { cleanup, sleep, track, waitFor } from './support.js';

afterEach(cleanup);

interface ClientFrame {
  type: 'join' | 'leave';
  data: { subscriptionId: string; streamName: string; groupId: string; id?: string };
}

/** A stream server that records what clients send and pushes what a test tells it to. */
class FakeStreamServer {
  readonly frames: ClientFrame[] = [];
  readonly raw: string[] = [];
  readonly sockets = new Set<WebSocket>();
  connections = 0;
  /** Answers each join (default: nothing). */
  onJoin: ((frame: ClientFrame['data'], socket: WebSocket) => void) | undefined;

  private constructor(private readonly wss: WebSocketServer) {
    wss.on('connection', (socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('message', (data) => {
        const text = data.toString();
        this.raw.push(text);
        const frame = JSON.parse(text) as ClientFrame;
        this.frames.push(frame);
        if (frame.type === 'join') this.onJoin?.(frame.data, socket);
      });
    });
  }

  static async start(): Promise<FakeStreamServer> {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const server = new FakeStreamServer(wss);
    track(() => server.close());
    return server;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}`;
  }

  joins(): ClientFrame['data'][] {
    return this.frames.filter((f) => f.type === 'join').map((f) => f.data);
  }

  /** Sends `frame` (an object is sent as JSON) to every connected client. */
  push(frame: unknown): void {
    const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
    for (const socket of this.sockets) socket.send(text);
  }

  /** Drops every connection without a close handshake. */
  drop(): void {
    for (const socket of this.sockets) socket.terminate();
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }
}

function message(streamName: string, groupId: string, id: string | null, event: StreamMessage['event']): StreamMessage {
  return { type: 'stream', timestamp: Date.now(), streamName, groupId, id, event };
}

function client(url: string, options: Parameters<typeof connectStream>[1] = {}): StreamConnection {
  const c = connectStream(url, { WebSocket, backoff: { initialMs: 20, maxMs: 50 }, ...options });
  track(() => c.close());
  return c;
}

/** Joins `target` and collects what it receives. */
function collect(c: StreamConnection, target: StreamTarget): StreamMessage[] {
  const got: StreamMessage[] = [];
  c.join(target, (m) => got.push(m));
  return got;
}

describe('@flint/sdk/stream-client', () => {
  it('sends a join for a group (no id) and for an item (with id), each with a subscription id of its own, once open', async () => {
    const server = await FakeStreamServer.start();
    const c = client(server.url);
    // Joined before the connection is open: sent when it opens.
    c.join({ stream_name: 'chat', group_id: 'room-1' }, () => {});
    await c.opened();
    c.join({ stream_name: 'chat', group_id: 'room-1', item_id: 'msg-1' }, () => {});
    await waitFor(() => server.joins().length === 2, 2000, 'two joins');
    const [group, item] = server.joins();
    expect(group).toEqual({ subscriptionId: expect.any(String), streamName: 'chat', groupId: 'room-1' });
    expect(group).not.toHaveProperty('id');
    expect(item).toEqual({ subscriptionId: expect.any(String), streamName: 'chat', groupId: 'room-1', id: 'msg-1' });
    expect(group?.subscriptionId).not.toBe(item?.subscriptionId);
    expect(group?.subscriptionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.raw[0]).toBe(JSON.stringify({ type: 'join', data: group }));
    expect(() => c.join({ stream_name: 'chat', group_id: '' }, () => {})).toThrow(/non-empty/);
    expect(() => c.join({ stream_name: 'chat', group_id: 'room-1', item_id: '' }, () => {})).toThrow(/non-empty/);
  });

  it('hands a message to the group subscription and to the subscription of its item, never across streams or groups', async () => {
    const server = await FakeStreamServer.start();
    const c = client(server.url);
    const group = collect(c, { stream_name: 's', group_id: 'g' });
    const item1 = collect(c, { stream_name: 's', group_id: 'g', item_id: 'i1' });
    const otherGroup = collect(c, { stream_name: 's', group_id: 'g2' });
    const otherStream = collect(c, { stream_name: 's2', group_id: 'g' });
    await waitFor(() => server.joins().length === 4, 2000, 'four joins');

    server.push(message('s', 'g', null, { type: 'sync', data: [{ n: 1 }] }));
    server.push(message('s', 'g', 'i1', { type: 'sync', data: { n: 1 } }));
    server.push(message('s', 'g', 'i1', { type: 'update', data: { n: 2 } }));
    server.push(message('s', 'g', 'i2', { type: 'create', data: { n: 3 } }));
    server.push(message('s', 'g', null, { type: 'event', event: { type: 'typing', data: 'ada' } }));
    server.push(message('s', 'g2', 'i1', { type: 'delete', data: { n: 9 } }));
    server.push(message('s2', 'g', 'x', { type: 'create', data: 'other' }));
    server.push(message('s', 'g', 'end', { type: 'event', event: { type: 'end', data: null } })); // marks the end
    await waitFor(() => group.length === 5, 2000, 'the group messages');
    await sleep(20);

    const kinds = (got: StreamMessage[]) => got.map((m) => `${m.event.type}:${m.id}`);
    expect(kinds(group)).toEqual(['sync:null', 'update:i1', 'create:i2', 'event:null', 'event:end']);
    expect(kinds(item1)).toEqual(['sync:i1', 'update:i1']);
    expect(item1[1]?.event).toEqual({ type: 'update', data: { n: 2 } });
    expect(kinds(otherGroup)).toEqual(['delete:i1']);
    expect(kinds(otherStream)).toEqual(['create:x']);
    expect(group[0]).toMatchObject({ type: 'stream', streamName: 's', groupId: 'g', id: null, event: { type: 'sync', data: [{ n: 1 }] } });
  });

  it('leave sends a leave with the join’s fields and stops the callbacks', async () => {
    const server = await FakeStreamServer.start();
    const c = client(server.url);
    const got: StreamMessage[] = [];
    const sub = c.join({ stream_name: 's', group_id: 'g', item_id: 'i' }, (m) => got.push(m));
    await waitFor(() => server.joins().length === 1, 2000, 'the join');
    server.push(message('s', 'g', 'i', { type: 'create', data: 1 }));
    await waitFor(() => got.length === 1, 2000, 'the first message');

    expect(sub.active).toBe(true);
    sub.leave();
    sub.leave(); // once only
    expect(sub.active).toBe(false);
    await waitFor(() => server.frames.length === 2, 2000, 'the leave');
    expect(server.frames[1]).toEqual({ type: 'leave', data: server.joins()[0] });
    server.push(message('s', 'g', 'i', { type: 'update', data: 2 }));
    await sleep(50);
    expect(got).toHaveLength(1);
    expect(server.frames).toHaveLength(2);
  });

  it('joins of the same target share one subscription: the newcomer gets a sync of its own, the last leave sends the leave', async () => {
    const server = await FakeStreamServer.start();
    server.onJoin = (data, socket) => socket.send(JSON.stringify(message(data.streamName, data.groupId, null, { type: 'sync', data: [] })));
    const c = client(server.url);
    const first: StreamMessage[] = [];
    const second: StreamMessage[] = [];
    const a = c.join({ stream_name: 's', group_id: 'g' }, (m) => first.push(m));
    await waitFor(() => first.length === 1, 2000, 'the first sync');
    const b = c.join({ stream_name: 's', group_id: 'g' }, (m) => second.push(m));
    await waitFor(() => second.length === 1, 2000, 'the second sync');
    const [join1, join2] = server.joins();
    expect(join2?.subscriptionId).toBe(join1?.subscriptionId);

    server.push(message('s', 'g', 'i', { type: 'create', data: 1 }));
    await waitFor(() => first.length === 2 && second.length === 2, 2000, 'the create on both');
    expect(first.map((m) => m.event.type)).toEqual(['sync', 'create']);
    a.leave();
    await sleep(30);
    expect(server.frames.filter((f) => f.type === 'leave')).toHaveLength(0);
    b.leave();
    await waitFor(() => server.frames.some((f) => f.type === 'leave'), 2000, 'the leave');
  });

  it('reconnects after the server drops the connection and re-joins every live subscription', async () => {
    const server = await FakeStreamServer.start();
    const statuses: StreamClientStatus[] = [];
    const c = client(server.url, { onStatus: (s) => statuses.push(s) });
    const kept = collect(c, { stream_name: 's', group_id: 'g' });
    const left = c.join({ stream_name: 's', group_id: 'g', item_id: 'gone' }, () => {});
    await waitFor(() => server.joins().length === 2, 2000, 'two joins');
    const before = server.joins()[0];
    left.leave();
    await waitFor(() => server.frames.length === 3, 2000, 'the leave');

    server.drop();
    await waitFor(() => server.connections === 2 && server.joins().length === 3, 3000, 'a reconnect with its join');
    expect(server.joins()[2]).toEqual(before); // the same subscription id; the left one is not re-joined
    expect(c.status).toBe('open');
    expect(statuses).toEqual(['connecting', 'open', 'closed', 'connecting', 'open']);
    server.push(message('s', 'g', 'i', { type: 'create', data: 'after' }));
    await waitFor(() => kept.length === 1, 2000, 'a message after the reconnect');
    await sleep(50);
    expect(server.joins()).toHaveLength(3);
  });

  it('keeps trying while the server is away, with a back-off', async () => {
    const server = await FakeStreamServer.start();
    const url = server.url;
    await server.close();
    const closes: number[] = [];
    const c = client(url, { backoff: { initialMs: 10, maxMs: 40 }, onStatus: (s, close) => (s === 'closed' ? closes.push(close?.code ?? 0) : undefined) });
    await waitFor(() => closes.length >= 3, 3000, 'three failed attempts');
    expect(closes[0]).toBe(1006);
    expect(c.status).not.toBe('open');
  });

  it('close() closes the connection for good: no reconnect, opened() rejects, join throws', async () => {
    const server = await FakeStreamServer.start();
    const statuses: StreamClientStatus[] = [];
    const c = client(server.url, { onStatus: (s) => statuses.push(s) });
    const got = collect(c, { stream_name: 's', group_id: 'g' });
    await c.opened();
    await waitFor(() => server.joins().length === 1, 2000, 'the join');
    c.close();
    expect(c.status).toBe('closed');
    await waitFor(() => server.sockets.size === 0, 2000, 'the server to see the close');
    server.push(message('s', 'g', 'i', { type: 'create', data: 1 }));
    await sleep(150); // many back-off delays
    expect(server.connections).toBe(1);
    expect(got).toEqual([]);
    expect(statuses.at(-1)).toBe('closed');
    await expect(c.opened()).rejects.toThrow(/closed/);
    expect(() => c.join({ stream_name: 's', group_id: 'g' }, () => {})).toThrow(/closed/);
  });

  it('close() during the back-off cancels the reconnect', async () => {
    const server = await FakeStreamServer.start();
    const c = client(server.url, { backoff: { initialMs: 100, maxMs: 100 } });
    await c.opened();
    server.drop();
    await waitFor(() => c.status === 'closed', 2000, 'the drop');
    c.close();
    await sleep(250);
    expect(server.connections).toBe(1);
  });

  it('does not reconnect with reconnect: false', async () => {
    const server = await FakeStreamServer.start();
    const c = client(server.url, { reconnect: false });
    await c.opened();
    server.drop();
    await sleep(150);
    expect(server.connections).toBe(1);
    expect(c.status).toBe('closed');
  });

  it('a refused join calls onUnauthorized, ends the subscription and is not re-joined after a reconnect', async () => {
    const server = await FakeStreamServer.start();
    server.onJoin = (data, socket) => {
      const id = data.id ?? null;
      const event: StreamMessage['event'] = data.groupId === 'secret' ? { type: 'unauthorized' } : { type: 'sync', data: null };
      socket.send(JSON.stringify(message(data.streamName, data.groupId, id, event)));
    };
    const c = client(server.url);
    let refused = 0;
    const got: StreamMessage[] = [];
    const open = collect(c, { stream_name: 's', group_id: 'public', item_id: 'i' });
    const sub = c.join({ stream_name: 's', group_id: 'secret', item_id: 'i' }, (m) => got.push(m), { onUnauthorized: () => refused++ });
    await waitFor(() => refused === 1, 2000, 'the refusal');
    expect(sub.active).toBe(false);
    expect(got.map((m) => m.event)).toEqual([{ type: 'unauthorized' }]);
    expect(open.map((m) => m.event.type)).toEqual(['sync']);

    server.push(message('s', 'secret', 'i', { type: 'update', data: 'leak' }));
    server.drop();
    await waitFor(() => server.connections === 2 && server.joins().length === 3, 3000, 'the re-join');
    await sleep(50);
    expect(server.joins().map((j) => j.groupId)).toEqual(['public', 'secret', 'public']);
    expect(refused).toBe(1);
    expect(got).toHaveLength(1);
  });

  it('ignores frames that are not stream messages', async () => {
    const server = await FakeStreamServer.start();
    const errors: unknown[] = [];
    const c = client(server.url, { onError: (e) => errors.push(e) });
    const got = collect(c, { stream_name: 's', group_id: 'g' });
    await waitFor(() => server.joins().length === 1, 2000, 'the join');
    server.push('not json {');
    server.push('null');
    server.push('42');
    server.push({ type: 'pong' });
    server.push({ type: 'stream', streamName: 's', groupId: 'g', id: null }); // no event
    server.push({ type: 'stream', streamName: 's', groupId: 'g', id: 7, event: { type: 'create', data: 1 } });
    server.push({ type: 'stream', streamName: 's', groupId: 'g', id: null, event: { data: 1 } });
    for (const socket of server.sockets) socket.send(Buffer.from(JSON.stringify(message('s', 'g', 'b', { type: 'create', data: 'binary' }))));
    server.push(message('s', 'g', 'ok', { type: 'create', data: 'good' }));
    await waitFor(() => got.length === 1, 2000, 'the good message');
    await sleep(20);
    expect(got.map((m) => m.id)).toEqual(['ok']);
    expect(errors).toEqual([]);
    expect(c.status).toBe('open');
  });

  it('a callback that throws is reported to onError and breaks nothing', async () => {
    const server = await FakeStreamServer.start();
    const errors: unknown[] = [];
    const c = client(server.url, {
      onError: (e) => errors.push(e),
      onStatus: () => {
        throw new Error('status boom');
      },
    });
    let calls = 0;
    c.join({ stream_name: 's', group_id: 'g' }, () => {
      calls++;
      throw new Error('handler boom');
    });
    const other = collect(c, { stream_name: 's', group_id: 'g', item_id: 'i' });
    await waitFor(() => server.joins().length === 2, 2000, 'the joins');
    server.push(message('s', 'g', 'i', { type: 'create', data: 1 }));
    server.push(message('s', 'g', 'i', { type: 'update', data: 2 }));
    await waitFor(() => other.length === 2, 2000, 'both messages');
    expect(calls).toBe(2);
    expect(errors.map((e) => (e as Error).message)).toEqual(['status boom', 'status boom', 'handler boom', 'handler boom']);
    expect(c.status).toBe('open');
  });

  it('uses globalThis.WebSocket when no WebSocket is passed, and says what to do when there is none', async () => {
    const server = await FakeStreamServer.start();
    const g = globalThis as { WebSocket?: unknown };
    const saved = Object.getOwnPropertyDescriptor(g, 'WebSocket');
    track(() => (saved ? Object.defineProperty(g, 'WebSocket', saved) : delete g.WebSocket));
    Object.defineProperty(g, 'WebSocket', { value: undefined, configurable: true, writable: true });
    expect(() => connectStream(server.url)).toThrow('no WebSocket available: on Node 20 pass { WebSocket } from the ws package');

    g.WebSocket = WebSocket;
    const c = connectStream(server.url);
    track(() => c.close());
    await c.opened();
    expect(server.connections).toBe(1);
  });
});
