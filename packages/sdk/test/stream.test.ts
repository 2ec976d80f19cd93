/**
 * `worker.stream` and `@flint/sdk/stream-client` against a real engine with flint-stream: the stream
 * functions, `stream`/`stream:join`/`stream:leave` triggers, and a subscriber that sees every change.
 */
import type { Engine } from '@flint/engine';
import type { StreamJoinLeaveEvent, StreamMessage } from '@flint/sdk';
import { type StreamConnection, type StreamTarget, connectStream } from '@flint/sdk/stream-client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cleanup, freePort, sleep, startTestEngine, startWorker, track, waitFor } from './support.js';

process.env.OTEL_ENABLED = 'false';

afterEach(cleanup);

async function streamEngine(port = 0): Promise<Engine> {
  return startTestEngine({ modules: [{ name: 'flint-stream', config: { port } }] });
}

function streamUrl(engine: Engine): string {
  const listener = engine.listeners().find((l) => l.name === 'stream');
  if (!listener) throw new Error('the engine has no stream listener');
  return listener.url;
}

function subscriber(url: string): StreamConnection {
  const c = connectStream(url, { WebSocket, backoff: { initialMs: 20, maxMs: 100 } });
  track(() => c.close());
  return c;
}

/** Joins `target` and collects what it receives. */
function collect(c: StreamConnection, target: StreamTarget): StreamMessage[] {
  const got: StreamMessage[] = [];
  c.join(target, (m) => got.push(m));
  return got;
}

const summary = (got: StreamMessage[]) =>
  got.map((m) => {
    const e = m.event;
    return e.type === 'event'
      ? `event:${m.id}:${e.event.type}=${JSON.stringify(e.event.data)}`
      : `${e.type}:${m.id}:${'data' in e ? JSON.stringify(e.data) : ''}`;
  });

describe('worker.stream against flint-stream', () => {
  it('set, get, update, list, listGroups, listAll, send and delete', async () => {
    const engine = await streamEngine();
    const w = startWorker(engine.bridgeUrl);
    const s = w.stream;

    expect(await s.set('todo', 'ada', 't1', { title: 'milk', done: false })).toEqual({ old_value: null, new_value: { title: 'milk', done: false } });
    expect(await s.set('todo', 'ada', 't1', { title: 'milk', done: true })).toEqual({
      old_value: { title: 'milk', done: false },
      new_value: { title: 'milk', done: true },
    });
    expect(await s.get('todo', 'ada', 't1')).toEqual({ title: 'milk', done: true });
    expect(await s.get('todo', 'ada', 'missing')).toBeNull();

    const updated = await s.update<{ n: number; tags?: string[] }>('todo', 'ada', 'count', [
      { type: 'set', path: 'n', value: 1 },
      { type: 'increment', path: 'n', by: 4 },
      { type: 'set', path: 'tags', value: [] },
      { type: 'append', path: 'tags', value: 'x' },
      { type: 'increment', path: 'tags', by: 1 }, // fails, and the others still apply
    ]);
    expect(updated.old_value).toBeNull();
    expect(updated.new_value).toEqual({ n: 5, tags: ['x'] });
    expect(updated.errors).toEqual([{ op_index: 4, code: expect.any(String), message: expect.any(String) }]);

    await s.set('todo', 'bob', 't9', 'bread');
    expect(await s.list('todo', 'ada')).toEqual(
      expect.arrayContaining([
        { title: 'milk', done: true },
        { n: 5, tags: ['x'] },
      ]),
    );
    expect(await s.list('todo', 'ada')).toHaveLength(2);
    expect((await s.listGroups('todo')).sort()).toEqual(['ada', 'bob']);
    const all = await s.listAll();
    expect(all.stream).toContainEqual({ id: 'todo', groups: ['ada', 'bob'] });
    expect(all.count).toBe(all.stream.length);

    expect(await s.send('todo', 'ada', 'ping', { at: 1 })).toBeNull();
    expect(await s.send('todo', 'ada', 'ping', null, { id: 't1' })).toBeNull();
    expect(await s.list('todo', 'ada')).toHaveLength(2); // nothing stored

    expect(await s.delete('todo', 'ada', 't1')).toEqual({ old_value: { title: 'milk', done: true } });
    expect(await s.delete('todo', 'ada', 't1')).toEqual({ old_value: null });
    expect(await s.get('todo', 'ada', 't1')).toBeNull();
  });

  it('a stream-client subscriber gets sync, create, update, delete and event messages of its group or item only', async () => {
    const engine = await streamEngine();
    const w = startWorker(engine.bridgeUrl);
    await w.stream.set('chat', 'room-1', 'm1', { text: 'hi' });

    const c = subscriber(streamUrl(engine));
    const room = collect(c, { stream_name: 'chat', group_id: 'room-1' });
    const m1 = collect(c, { stream_name: 'chat', group_id: 'room-1', item_id: 'm1' });
    const otherRoom = collect(c, { stream_name: 'chat', group_id: 'room-2' });
    await waitFor(() => room.length === 1 && m1.length === 1 && otherRoom.length === 1, 3000, 'the three syncs');
    expect(room[0]).toMatchObject({ type: 'stream', streamName: 'chat', groupId: 'room-1', id: null, event: { type: 'sync', data: [{ text: 'hi' }] } });
    expect(typeof room[0]?.timestamp).toBe('number');
    expect(summary(m1)).toEqual(['sync:m1:{"text":"hi"}']);
    expect(summary(otherRoom)).toEqual(['sync:null:[]']);

    await w.stream.set('chat', 'room-1', 'm2', { text: 'hello' });
    await w.stream.update('chat', 'room-1', 'm1', [{ type: 'set', path: 'text', value: 'hi!' }]);
    await w.stream.send('chat', 'room-1', 'typing', { who: 'ada' });
    await w.stream.send('chat', 'room-1', 'seen', 2, { id: 'm1' });
    await w.stream.delete('chat', 'room-1', 'm2');
    await w.stream.set('chat', 'room-3', 'x', 'elsewhere');
    await waitFor(() => room.length === 6, 3000, 'the room messages');
    await sleep(50);

    expect(summary(room)).toEqual([
      'sync:null:[{"text":"hi"}]',
      'create:m2:{"text":"hello"}',
      'update:m1:{"text":"hi!"}',
      'event:null:typing={"who":"ada"}',
      'event:m1:seen=2',
      'delete:m2:{"text":"hello"}',
    ]);
    expect(summary(m1)).toEqual(['sync:m1:{"text":"hi"}', 'update:m1:{"text":"hi!"}', 'event:m1:seen=2']);
    expect(otherRoom).toHaveLength(1);
  });

  it('onChange gets every change and event of its stream, filtered by group', async () => {
    const engine = await streamEngine();
    const w = startWorker(engine.bridgeUrl);
    const got: StreamMessage[] = [];
    const all: StreamMessage[] = [];
    const filtered = w.stream.onChange('orders', (m) => void got.push(m), { group_id: 'eu' });
    const everything = w.stream.onChange('orders', (m) => void all.push(m));
    await Promise.all([filtered.trigger.ready, everything.trigger.ready]);
    expect(filtered.fn.id).toMatch(/^on-stream-change::[0-9a-f-]{36}$/);

    await w.stream.set('orders', 'eu', 'o1', { total: 10 });
    await w.stream.update('orders', 'eu', 'o1', [{ type: 'increment', path: 'total', by: 5 }]);
    await w.stream.send('orders', 'eu', 'shipped', { carrier: 'dhl' }, { id: 'o1' });
    await w.stream.delete('orders', 'eu', 'o1');
    await w.stream.set('orders', 'us', 'o2', { total: 1 });
    await w.stream.set('other', 'eu', 'o3', 'not orders');
    await waitFor(() => got.length === 4 && all.length === 5, 3000, 'the trigger calls');
    await sleep(50);

    expect(summary(got)).toEqual(['create:o1:{"total":10}', 'update:o1:{"total":15}', 'event:o1:shipped={"carrier":"dhl"}', 'delete:o1:{"total":15}']);
    expect(got[0]).toMatchObject({ type: 'stream', streamName: 'orders', groupId: 'eu', id: 'o1' });
    expect(all.map((m) => m.groupId)).toEqual(['eu', 'eu', 'eu', 'eu', 'us']);

    filtered.unregister();
    await waitFor(() => !engine.listFunctions().some((f) => f.function_id === filtered.fn.id), 2000, 'the unregister');
    await w.stream.set('orders', 'eu', 'o4', 1);
    await waitFor(() => all.length === 6, 3000, 'the last change');
    expect(got).toHaveLength(4);
  });

  it('onJoin can refuse a join (the client is told) and onLeave sees the leave of each subscription', async () => {
    const engine = await streamEngine();
    const w = startWorker(engine.bridgeUrl);
    const joins: StreamJoinLeaveEvent[] = [];
    const leaves: StreamJoinLeaveEvent[] = [];
    const onJoin = w.stream.onJoin((e) => {
      joins.push(e);
      return e.group_id === 'secret' ? { unauthorized: true } : undefined;
    });
    const onLeave = w.stream.onLeave((e) => void leaves.push(e));
    await Promise.all([onJoin.trigger.ready, onLeave.trigger.ready]);

    const c = subscriber(streamUrl(engine));
    let refused = 0;
    const secret: StreamMessage[] = [];
    const denied = c.join({ stream_name: 'docs', group_id: 'secret' }, (m) => secret.push(m), { onUnauthorized: () => refused++ });
    const open: StreamMessage[] = [];
    const allowed = c.join({ stream_name: 'docs', group_id: 'public', item_id: 'readme' }, (m) => open.push(m));
    await waitFor(() => refused === 1 && open.length === 1, 3000, 'the refusal and the sync');
    expect(denied.active).toBe(false);
    expect(summary(secret)).toEqual(['unauthorized:null:']);
    expect(summary(open)).toEqual(['sync:readme:null']);

    const publicJoin = joins.find((e) => e.group_id === 'public');
    expect(publicJoin).toEqual({
      subscription_id: expect.any(String),
      stream_name: 'docs',
      group_id: 'public',
      id: 'readme',
      item_id: 'readme',
      context: null,
    });
    await w.stream.set('docs', 'secret', 'plan', 'hidden');
    allowed.leave();
    await waitFor(() => leaves.length === 1, 3000, 'the leave trigger');
    expect(leaves[0]).toEqual(publicJoin);
    expect(secret).toHaveLength(1);
  });

  it('a subscriber re-joins after the engine restarts and gets a fresh sync', async () => {
    const port = await freePort();
    const first = await streamEngine(port);
    const url = streamUrl(first);
    await startWorker(first.bridgeUrl).stream.set('live', 'g', 'a', 1);
    const c = subscriber(url);
    const got = collect(c, { stream_name: 'live', group_id: 'g' });
    await waitFor(() => got.length === 1, 3000, 'the first sync');
    expect(summary(got)).toEqual(['sync:null:[1]']);

    await first.stop();
    await waitFor(() => c.status !== 'open', 3000, 'the client to see the engine go');
    const second = await streamEngine(port); // in-memory store: the item is gone
    await waitFor(() => got.length === 2, 5000, 'the sync after the reconnect');
    expect(summary(got)[1]).toBe('sync:null:[]');
    await startWorker(second.bridgeUrl).stream.set('live', 'g', 'b', 2);
    await waitFor(() => got.length === 3, 3000, 'a change after the reconnect');
    expect(summary(got)[2]).toBe('create:b:2');
  });
});
