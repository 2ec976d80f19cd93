/**
 * The stream listener's client protocol with a raw `ws` client: join/leave, the sync on join (item and
 * group), create/update/delete/event frames, the `/stream/<stream>/<group>[/<item>]` URL form,
 * overlapping subscriptions without duplicate frames, malformed frames ignored, oversize frames closed
 * with 1009, and the engine's live counters (engine::streams::stats, the flint:streams:stats stream).
 */
import type { Engine } from '@flint/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { StreamTestClient, isFrame, startStreamEngine, streamUrl } from '../support/stream/helpers.js';
import { sleep, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

describe('stream listener protocol', () => {
  let engine: Engine;
  let url: string;
  const set = (stream_name: string, group_id: string, item_id: string, data: unknown) => engine.invoke('stream::set', { stream_name, group_id, item_id, data });

  beforeEach(async () => {
    engine = await startStreamEngine({ max_frame_bytes: 4096 });
    url = streamUrl(engine);
  });

  it('a group join gets a sync of the group, then create, update, delete and custom event frames', async () => {
    const stream = uid('chat');
    await set(stream, 'room', 'm0', { text: 'before' });
    const client = await StreamTestClient.connect(url);
    client.join('sub-1', stream, 'room');
    const sync = await client.waitFrame(isFrame('sync', stream, 'room'));
    expect(sync).toMatchObject({ type: 'stream', streamName: stream, groupId: 'room', id: null, event: { type: 'sync', data: [{ text: 'before' }] } });
    expect(typeof sync.timestamp).toBe('number');
    expect(sync).not.toHaveProperty('subscriptionId');

    await set(stream, 'room', 'm1', { text: 'hi' });
    await engine.invoke('stream::update', { stream_name: stream, group_id: 'room', item_id: 'm1', ops: [{ type: 'set', path: 'text', value: 'hey' }] });
    await engine.invoke('stream::send', { stream_name: stream, group_id: 'room', type: 'typing', data: { who: 'ada' } });
    await engine.invoke('stream::delete', { stream_name: stream, group_id: 'room', item_id: 'm1' });
    await client.waitFrame(isFrame('delete', stream, 'room'));
    expect(client.frames.slice(1).map((f) => [f.event.type, f.id, f.event.data ?? f.event.event])).toEqual([
      ['create', 'm1', { text: 'hi' }],
      ['update', 'm1', { text: 'hey' }],
      ['event', null, { type: 'typing', data: { who: 'ada' } }],
      ['delete', 'm1', { text: 'hey' }],
    ]);
  });

  it('an item join gets a sync of the item (null when missing) and only that item’s frames', async () => {
    const stream = uid('docs');
    await set(stream, 'g', 'a', 1);
    const client = await StreamTestClient.connect(url);
    client.join('item-a', stream, 'g', 'a');
    client.join('item-z', stream, 'g', 'z');
    expect((await client.waitFrame(isFrame('sync', stream, 'g', 'a'))).event.data).toBe(1);
    expect((await client.waitFrame(isFrame('sync', stream, 'g', 'z'))).event.data).toBeNull();

    await set(stream, 'g', 'b', 2); // another item: not for this client
    await engine.invoke('stream::send', { stream_name: stream, group_id: 'g', id: 'a', type: 'ping', data: 1 }); // item event: delivered
    await engine.invoke('stream::send', { stream_name: stream, group_id: 'g', type: 'all', data: 2 }); // group event: not for item subscriptions
    await set(stream, 'g', 'a', 3);
    await client.waitFrame(isFrame('update', stream, 'g', 'a'));
    await sleep(50);
    expect(client.frames.filter((f) => f.event.type !== 'sync').map((f) => [f.event.type, f.id])).toEqual([
      ['event', 'a'],
      ['update', 'a'],
    ]);
  });

  it('overlapping subscriptions of one connection get each frame once; leaving one keeps the other', async () => {
    const stream = uid('live');
    const client = await StreamTestClient.connect(url);
    client.join('group', stream, 'g');
    client.join('item', stream, 'g', 'x');
    client.join('group-again', stream, 'g');
    await waitFor(() => client.ofType('sync').length === 3);
    await set(stream, 'g', 'x', 1);
    await client.waitFrame(isFrame('create', stream, 'g', 'x'));
    await sleep(50);
    expect(client.ofType('create')).toHaveLength(1);

    client.leave('group', stream, 'g');
    client.leave('group-again', stream, 'g');
    await sleep(50);
    await set(stream, 'g', 'y', 2); // the item subscription does not see y
    await set(stream, 'g', 'x', 3); // … but sees x
    await client.waitFrame(isFrame('update', stream, 'g', 'x'));
    await sleep(50);
    expect(client.frames.filter((f) => f.event.type !== 'sync').map((f) => f.id)).toEqual(['x', 'x']);

    client.leave('item', stream, 'g', 'x');
    await sleep(50);
    await set(stream, 'g', 'x', 4);
    await sleep(100);
    expect(client.ofType('update')).toHaveLength(1);
  });

  it('re-using a subscription id replaces the subscription', async () => {
    const stream = uid('re');
    const client = await StreamTestClient.connect(url);
    client.join('s', stream, 'one');
    client.join('s', stream, 'two');
    await waitFor(() => client.ofType('sync').length === 2);
    await set(stream, 'one', 'i', 1);
    await set(stream, 'two', 'i', 2);
    await client.waitFrame(isFrame('create', stream, 'two'));
    await sleep(50);
    expect(client.ofType('create').map((f) => f.groupId)).toEqual(['two']);
  });

  it('frames of other streams and groups never reach a subscription; names may hold ":"', async () => {
    const client = await StreamTestClient.connect(url);
    client.join('s', 'a:b', 'c');
    await client.waitFrame(isFrame('sync', 'a:b', 'c'));
    await set('a', 'b:c', 'i', 'wrong');
    await set('a:b', 'other', 'i', 'wrong');
    await set('a:b', 'c', 'i', 'right');
    await client.waitFrame(isFrame('create', 'a:b', 'c'));
    await sleep(50);
    expect(client.ofType('create').map((f) => f.event.data)).toEqual(['right']);
    const all = (await engine.invoke('stream::list_all', {})) as { stream: { id: string; groups: string[] }[] };
    expect(all.stream.filter((s) => s.id.startsWith('a'))).toEqual([
      { id: 'a', groups: ['b:c'] },
      { id: 'a:b', groups: ['c', 'other'] },
    ]);
  });

  it('the URL form /stream/<stream>/<group>[/<item>] subscribes on connect (names percent-encoded)', async () => {
    const stream = uid('path');
    await set(stream, 'room 1', 'a', { n: 1 });
    const group = await StreamTestClient.connect(`${url}/stream/${stream}/${encodeURIComponent('room 1')}`);
    const item = await StreamTestClient.connect(`${url}/stream/${stream}/${encodeURIComponent('room 1')}/a/`);
    expect((await group.waitFrame(isFrame('sync', stream, 'room 1'))).event.data).toEqual([{ n: 1 }]);
    expect((await item.waitFrame(isFrame('sync', stream, 'room 1', 'a'))).event.data).toEqual({ n: 1 });
    await set(stream, 'room 1', 'b', 2);
    await group.waitFrame(isFrame('create', stream, 'room 1', 'b'));
    await set(stream, 'room 1', 'a', 3);
    await item.waitFrame(isFrame('update', stream, 'room 1', 'a'));
    expect(item.ofType('create')).toHaveLength(0);
    // The path subscription is an ordinary one: the client can leave it (id "path") and join others.
    item.leave('path', stream, 'room 1', 'a');
    await sleep(50);
    await set(stream, 'room 1', 'a', 4);
    await sleep(100);
    expect(item.ofType('update')).toHaveLength(1);
  });

  it('answers other paths with 404 and plain HTTP with 426, in JSON', async () => {
    await expect(StreamTestClient.connect(`${url}/nope`)).rejects.toMatchObject({ status: 404, body: { code: 'not_found' } });
    await expect(StreamTestClient.connect(`${url}/stream/only-stream`)).rejects.toMatchObject({ status: 404 });
    const res = await fetch(url.replace('ws://', 'http://'));
    expect(res.status).toBe(426);
    expect(await res.json()).toMatchObject({ code: 'upgrade_required' });
  });

  it('ignores malformed frames and keeps the connection; an oversize frame closes it with 1009', async () => {
    const stream = uid('bad');
    const client = await StreamTestClient.connect(url);
    for (const frame of [
      'not json',
      '   ',
      '[1,2]',
      '{"type":"join"}',
      '{"type":"join","data":{"streamName":"s","groupId":"g"}}',
      '{"type":"dance","data":{}}',
      '{"type":"join","data":{"subscriptionId":"s","streamName":"","groupId":"g"}}',
    ])
      client.send(frame);
    client.ws.send(Buffer.from(JSON.stringify({ type: 'join', data: { subscriptionId: 'bin', streamName: stream, groupId: 'g' } })), { binary: true });
    // The binary join (same JSON) works, and the connection is still open.
    await client.waitFrame(isFrame('sync', stream, 'g'));
    expect(client.frames).toHaveLength(1);

    client.send('x'.repeat(5000)); // over max_frame_bytes (4096)
    await client.whenClosed();
    expect(client.closeCode).toBe(1009);
    expect(client.closeReason).toContain('max_frame_bytes');
    // The engine goes on serving others.
    const other = await StreamTestClient.connect(url);
    other.join('s', stream, 'g');
    await other.waitFrame(isFrame('sync', stream, 'g'));
  });

  it('counts connections, subscriptions and messages in engine::streams::stats and on flint:streams:stats', async () => {
    const stream = uid('stats');
    const client = await StreamTestClient.connect(url);
    client.join('s', stream, 'g');
    await client.waitFrame(isFrame('sync', stream, 'g'));
    await set(stream, 'g', 'i', 'x');
    await client.waitFrame(isFrame('create', stream, 'g'));
    // biome-ignore lint/suspicious/noExplicitAny: the snapshot is JSON
    const stats = (await engine.invoke('engine::streams::stats', {})) as any;
    expect(stats.totals).toMatchObject({ connections: 1, subscriptions: 1, messages_in: 1, messages_out: 2, events: 1, slow_disconnects: 0 });
    expect(stats.totals.bytes_out).toBeGreaterThan(100);
    expect(stats.streams).toEqual([expect.objectContaining({ name: stream, subscriptions: 1, messages_in: 1, messages_out: 2, events: 1 })]);

    const watcher = await StreamTestClient.connect(url);
    watcher.join('w', 'flint:streams:stats', 'engine');
    const first = await watcher.waitFrame(isFrame('sync', 'flint:streams:stats', 'engine'));
    expect(first.event.data[0].totals.connections).toBe(2);
    const live = await watcher.waitFrame(isFrame('update', 'flint:streams:stats', 'engine', 'stats'), 3000);
    expect(live.event.data.streams.map((s: { name: string }) => s.name)).toContain(stream);

    client.ws.terminate();
    await waitFor(async () => ((await engine.invoke('engine::streams::stats', {})) as { totals: { connections: number } }).totals.connections === 1);
    // Workers cannot write the engine's own streams.
    await expect(engine.invoke('stream::set', { stream_name: 'flint:streams:stats', group_id: 'engine', item_id: 'x', data: 1 })).rejects.toMatchObject({
      code: 'invalid_payload',
    });
  });
});
