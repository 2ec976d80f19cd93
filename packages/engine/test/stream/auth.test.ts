/**
 * flint-stream access: the listener's auth function (it sees headers, path, decoded query and address; it
 * can refuse the upgrade with 401/403 or attach a context; failing or slow, it refuses with 503), and
 * `stream:join` handlers refusing a join with `{unauthorized: true}` — through both worker SDKs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, startWorker } from '../support/harness.js';
import { StreamTestClient, isFrame, startStreamEngine, streamUrl } from '../support/stream/helpers.js';
import { sleep, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

// biome-ignore lint/suspicious/noExplicitAny: payloads are JSON
type Json = any;

describe.each(SDK_KINDS)('stream auth with a %s worker', (kind: SdkKind) => {
  it('the auth function sees the upgrade, refuses with 401 or 403, or lets in with a context that join and leave handlers get', async () => {
    const seen: Json[] = [];
    const joins: Json[] = [];
    const leaves: Json[] = [];
    const engine = await startStreamEngine({ auth_function: 'app::stream-auth' });
    await startWorker(kind, engine, (w) => {
      w.registerFunction('app::stream-auth', (input: Json) => {
        seen.push(input);
        const token = input.query_params.token?.[0];
        if (token === 'banned') return { allow: false, status: 403, reason: 'banned user' };
        if (token !== 'good token') return { allow: false };
        return { context: { user: 'ada', role: input.headers['x-role'] } };
      });
      w.registerFunction('app::on-join', (event: Json) => {
        joins.push(event);
        return {};
      });
      w.registerFunction('app::on-leave', (event: Json) => {
        leaves.push(event);
        return {};
      });
      w.registerTrigger({ type: 'stream:join', function_id: 'app::on-join', config: {} });
      w.registerTrigger({ type: 'stream:leave', function_id: 'app::on-leave', config: {} });
    });
    const url = streamUrl(engine);

    await expect(StreamTestClient.connect(`${url}/?token=nope`)).rejects.toMatchObject({ status: 401, body: { code: 'connection_unauthorized' } });
    await expect(StreamTestClient.connect(`${url}/?token=banned`)).rejects.toMatchObject({
      status: 403,
      body: { code: 'connection_forbidden', error: 'banned user' },
    });

    const client = await StreamTestClient.connect(`${url}/stream/room/lobby?token=good%20token&x=1&x=2`, { headers: { 'x-role': 'admin' } });
    const input = seen.at(-1);
    expect(input).toMatchObject({ path: '/stream/room/lobby', query_params: { token: ['good token'], x: ['1', '2'] } });
    expect(input.headers['x-role']).toBe('admin');
    expect(input.addr).toMatch(/^127\.0\.0\.1:\d+$/);

    await client.waitFrame(isFrame('sync', 'room', 'lobby'));
    client.join('item', 'room', 'lobby', 'm1');
    await client.waitFrame(isFrame('sync', 'room', 'lobby', 'm1'));
    const context = { user: 'ada', role: 'admin' };
    expect(joins).toEqual([
      { subscription_id: 'path', stream_name: 'room', group_id: 'lobby', id: null, item_id: null, context },
      { subscription_id: 'item', stream_name: 'room', group_id: 'lobby', id: 'm1', item_id: 'm1', context },
    ]);
    client.leave('item', 'room', 'lobby', 'm1');
    await waitFor(() => leaves.length === 1);
    expect(leaves[0]).toEqual({ subscription_id: 'item', stream_name: 'room', group_id: 'lobby', id: 'm1', item_id: 'm1', context });
    // A dropped connection leaves every subscription it still held.
    client.ws.terminate();
    await waitFor(() => leaves.length === 2);
    expect(leaves[1]).toMatchObject({ subscription_id: 'path', context });
  });

  it('an auth function that fails, is missing or is too slow refuses the upgrade with 503 auth_unavailable', async () => {
    const engine = await startStreamEngine({ auth_function: 'app::auth', auth_timeout_ms: 300 });
    const url = streamUrl(engine);
    await expect(StreamTestClient.connect(url)).rejects.toMatchObject({ status: 503, body: { code: 'auth_unavailable' } });
    await startWorker(kind, engine, (w) =>
      w.registerFunction('app::auth', async (input: Json) => {
        if (input.query_params.mode?.[0] === 'slow') await sleep(2000);
        if (input.query_params.mode?.[0] === 'throw') throw new Error('database down');
        return input.query_params.mode?.[0] === 'plain' ? 'yes' : { context: 1 };
      }),
    );
    const failed = await StreamTestClient.connect(`${url}/?mode=throw`).catch((err) => err);
    expect(failed).toMatchObject({ status: 503, body: { code: 'auth_unavailable' } });
    expect(failed.body.error).toContain('database down');
    await expect(StreamTestClient.connect(`${url}/?mode=slow`)).rejects.toMatchObject({ status: 503 });
    // Anything but {allow: false} lets the client in.
    await StreamTestClient.connect(`${url}/?mode=plain`);
    await StreamTestClient.connect(url);
  });

  it('a stream:join handler refuses a join with {unauthorized: true}: an unauthorized frame, no subscription', async () => {
    const engine = await startStreamEngine();
    const stream = uid('private');
    await startWorker(kind, engine, (w) => {
      w.registerFunction('app::gate', (event: Json) => ({ unauthorized: event.group_id === 'secret' }));
      w.registerTrigger({ type: 'stream:join', function_id: 'app::gate', config: { stream_name: stream } });
    });
    const client = await StreamTestClient.connect(streamUrl(engine));
    client.join('s1', stream, 'secret');
    client.join('s2', stream, 'public');
    client.join('s3', uid('other'), 'secret'); // another stream: the trigger's stream_name filter leaves it alone
    const refused = await client.waitFrame((f) => f.event?.type === 'unauthorized');
    expect(refused).toMatchObject({ type: 'stream', streamName: stream, groupId: 'secret', id: null, event: { type: 'unauthorized' } });
    await waitFor(() => client.ofType('sync').length === 2);
    await engine.invoke('stream::set', { stream_name: stream, group_id: 'secret', item_id: 'x', data: 1 });
    await engine.invoke('stream::set', { stream_name: stream, group_id: 'public', item_id: 'x', data: 2 });
    await client.waitFrame(isFrame('create', stream, 'public'));
    await sleep(50);
    expect(client.ofType('create').map((f) => f.groupId)).toEqual(['public']);
  });

  it('a join handler that fails refuses the join; a condition answering false skips the handler', async () => {
    const engine = await startStreamEngine();
    const stream = uid('cond');
    const handled: string[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('app::only-vip', (event: Json) => event.group_id.startsWith('vip'));
      w.registerFunction('app::refuse-all', (event: Json) => {
        handled.push(event.group_id);
        if (event.group_id === 'vip-broken') throw new Error('boom');
        return { unauthorized: true };
      });
      w.registerTrigger({ type: 'stream:join', function_id: 'app::refuse-all', config: { condition_function_id: 'app::only-vip' } });
    });
    const client = await StreamTestClient.connect(streamUrl(engine));
    client.join('a', stream, 'regular'); // condition false: handler skipped, join allowed
    client.join('b', stream, 'vip-1'); // handler refuses
    client.join('c', stream, 'vip-broken'); // handler fails: refused
    await waitFor(() => client.frames.length === 3);
    expect(client.frames.map((f) => [f.groupId, f.event.type])).toEqual([
      ['regular', 'sync'],
      ['vip-1', 'unauthorized'],
      ['vip-broken', 'unauthorized'],
    ]);
    expect(handled).toEqual(['vip-1', 'vip-broken']);
  });
});
