/**
 * The stream `bridge` adapter: an edge engine keeps no streams, forwards every stream call to a central
 * engine and gets the frames of the groups its clients joined from the central engine's listener.
 */
import { startEngine } from '@flint/engine';
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { StreamTestClient, isFrame, startStreamEngine, streamUrl } from '../support/stream/helpers.js';
import { freePort, sleep, waitFor } from '../support/util.js';

afterEach(cleanup);

describe('stream bridge adapter', () => {
  test("the edge's clients see every change of the central engine's streams, whoever made it; calls through the edge land there", async () => {
    const central = await startStreamEngine();
    const edge = await startStreamEngine({
      adapter: { name: 'bridge', config: { bridge_url: central.bridgeUrl, stream_url: streamUrl(central), connect_timeout_ms: 1000 } },
    });
    await central.invoke('stream::set', { stream_name: 'scores', group_id: 'match-7', item_id: 'home', data: { goals: 0 } });

    const onEdge = await StreamTestClient.connect(streamUrl(edge));
    onEdge.join('s1', 'scores', 'match-7');
    const sync = await onEdge.waitFrame(isFrame('sync', 'scores', 'match-7'));
    expect(sync.event.data).toEqual([{ goals: 0 }]);
    const onCentral = await StreamTestClient.connect(streamUrl(central));
    onCentral.join('s1', 'scores', 'match-7');
    await onCentral.waitFrame(isFrame('sync', 'scores', 'match-7'));
    await sleep(100); // the edge's join reached the central listener

    // A change made on the central engine reaches the edge's client.
    await central.invoke('stream::set', { stream_name: 'scores', group_id: 'match-7', item_id: 'home', data: { goals: 1 } });
    expect((await onEdge.waitFrame(isFrame('update', 'scores', 'match-7', 'home'))).event.data).toEqual({ goals: 1 });

    // Calls through the edge are stored by the central engine, and every client sees them.
    expect(
      await edge.invoke('stream::update', { stream_name: 'scores', group_id: 'match-7', item_id: 'home', ops: [{ type: 'increment', path: 'goals', by: 1 }] }),
    ).toEqual({
      old_value: { goals: 1 },
      new_value: { goals: 2 },
    });
    expect(await central.invoke('stream::get', { stream_name: 'scores', group_id: 'match-7', item_id: 'home' })).toEqual({ goals: 2 });
    await edge.invoke('stream::set', { stream_name: 'scores', group_id: 'match-7', item_id: 'away', data: { goals: 3 } });
    await onCentral.waitFrame(isFrame('create', 'scores', 'match-7', 'away'));
    await onEdge.waitFrame(isFrame('create', 'scores', 'match-7', 'away'));
    await edge.invoke('stream::send', { stream_name: 'scores', group_id: 'match-7', type: 'whistle', data: { minute: 90 } });
    expect((await onCentral.waitFrame(isFrame('event', 'scores', 'match-7'))).event.event).toEqual({ type: 'whistle', data: { minute: 90 } });
    await onEdge.waitFrame(isFrame('event', 'scores', 'match-7'));
    expect(await edge.invoke('stream::delete', { stream_name: 'scores', group_id: 'match-7', item_id: 'away' })).toEqual({ old_value: { goals: 3 } });
    await onEdge.waitFrame(isFrame('delete', 'scores', 'match-7', 'away'));
    expect(await edge.invoke('stream::list_groups', { stream_name: 'scores' })).toEqual(['match-7']);
    // Each change reached the edge's client once.
    expect(onEdge.frames.filter((f) => f.event?.type === 'update')).toHaveLength(2);

    // Once its clients left, the edge leaves the group on the central engine too.
    onEdge.leave('s1', 'scores', 'match-7');
    await sleep(100);
    const before = onEdge.frames.length;
    await central.invoke('stream::set', { stream_name: 'scores', group_id: 'match-7', item_id: 'home', data: { goals: 9 } });
    await sleep(200);
    expect(onEdge.frames.length).toBe(before);
  });

  test('after the central engine restarts, the edge joins its groups there again', async () => {
    const [bridgePort, streamPort] = [await freePort(), await freePort()];
    const startCentral = () =>
      startEngine({ config: { bridge: { port: bridgePort }, log: { level: 'silent' }, modules: [{ name: 'flint-stream', config: { port: streamPort } }] } });
    let central = await startCentral();
    track(() => central.stop());
    const edge = await startStreamEngine({
      adapter: {
        name: 'bridge',
        config: { bridge_url: central.bridgeUrl, stream_url: `ws://127.0.0.1:${streamPort}`, connect_timeout_ms: 1000, timeout_ms: 1000 },
      },
    });
    const onEdge = await StreamTestClient.connect(streamUrl(edge));
    onEdge.join('s1', 'chat', 'room');
    await onEdge.waitFrame(isFrame('sync', 'chat', 'room'));
    await central.stop();
    central = await startCentral();
    await waitFor(
      async () => {
        await central.invoke('stream::set', { stream_name: 'chat', group_id: 'room', item_id: 'm', data: Date.now() });
        // The first sets may come before the edge joined again: any change of the item will do.
        return onEdge.frames.some((f) => f.streamName === 'chat' && f.id === 'm' && (f.event?.type === 'create' || f.event?.type === 'update'));
      },
      8000,
      "a change on the restarted central engine to reach the edge's client",
    );
  });

  test('an unreachable central engine stops the edge from starting, naming it', async () => {
    const err = await startStreamEngine({
      adapter: { name: 'bridge', config: { bridge_url: 'ws://127.0.0.1:9', stream_url: 'ws://127.0.0.1:9', connect_timeout_ms: 500 } },
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toContain('the stream bridge: the engine at ws://127.0.0.1:9 cannot be reached');
  });
});
