/**
 * flint-stream functions through real workers (@flint/sdk and iii-sdk@0.11.6): result shapes, bad input
 * (invalid_payload naming the field), value size cap, and custom implementations (`stream::<op>(<name>)`,
 * what iii-sdk's `createStream` registers) taking over from the adapter while the engine still sends frames.
 */
import type { Engine } from '@flint/engine';
import { registerWorker as registerIiiWorker } from 'iii-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, type TestWorker, startWorker, whenAnnounced } from '../support/harness.js';
import { StreamTestClient, isFrame, startStreamEngine, streamUrl } from '../support/stream/helpers.js';
import { outcome, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

// biome-ignore lint/suspicious/noExplicitAny: results are arbitrary JSON
type Json = any;

describe.each(SDK_KINDS)('stream functions through a %s worker', (kind: SdkKind) => {
  let engine: Engine;
  let worker: TestWorker;
  const call = (function_id: string, payload: unknown): Promise<Json> => worker.trigger({ function_id, payload });
  const missing = kind === 'iii' ? undefined : null;
  const bad = async (function_id: string, payload: unknown) => {
    const o = await outcome(call(function_id, payload));
    if (o.ok) throw new Error(`${function_id} accepted ${JSON.stringify(payload)}: ${JSON.stringify(o.value)}`);
    return o.error;
  };

  beforeEach(async () => {
    engine = await startStreamEngine({ max_value_bytes: 1024 });
    worker = await startWorker(kind, engine);
  });

  it('set, get, update, list, list_groups, list_all, send and delete return the documented shapes', async () => {
    const s = uid('orders');
    const item = { stream_name: s, group_id: 'eu', item_id: 'o1' };
    expect(await call('stream::get', item)).toBe(missing);
    expect(await call('stream::set', { ...item, data: { total: 10 } })).toEqual({ old_value: null, new_value: { total: 10 } });
    expect(await call('stream::set', { ...item, data: { total: 12 } })).toEqual({ old_value: { total: 10 }, new_value: { total: 12 } });
    expect(await call('stream::get', item)).toEqual({ total: 12 });
    const updated = await call('stream::update', {
      ...item,
      ops: [
        { type: 'increment', path: 'total', by: 3 },
        { type: 'append', path: 'total', value: 'x' },
      ],
    });
    expect(updated).toMatchObject({ old_value: { total: 12 }, new_value: { total: 15 } });
    expect(updated.errors).toEqual([expect.objectContaining({ op_index: 1, code: 'append.type_mismatch' })]);
    await call('stream::set', { stream_name: s, group_id: 'us', item_id: 'o2', data: 'two' });
    expect(await call('stream::list', { stream_name: s, group_id: 'eu' })).toEqual([{ total: 15 }]);
    expect(await call('stream::list', { stream_name: s, group_id: 'none' })).toEqual([]);
    expect(await call('stream::list_groups', { stream_name: s })).toEqual(['eu', 'us']);
    const all = await call('stream::list_all', {});
    expect(all.stream).toContainEqual({ id: s, groups: ['eu', 'us'] });
    expect(all.count).toBe(all.stream.length);
    expect(await call('stream::send', { stream_name: s, group_id: 'eu', type: 'ping', data: { n: 1 } })).toBe(kind === 'iii' ? undefined : null);
    expect(await call('stream::delete', item)).toEqual({ old_value: { total: 15 } });
    expect(await call('stream::delete', item)).toEqual({ old_value: null });
    expect(await call('stream::list_groups', { stream_name: s })).toEqual(['us']);
  });

  it('refuses bad input with invalid_payload naming the field', async () => {
    const s = uid('bad');
    expect(await bad('stream::set', { group_id: 'g', item_id: 'i', data: 1 })).toMatchObject({
      code: 'invalid_payload',
      message: expect.stringContaining('stream_name'),
    });
    expect(await bad('stream::set', { stream_name: s, group_id: 7, item_id: 'i', data: 1 })).toMatchObject({
      code: 'invalid_payload',
      message: expect.stringContaining('group_id must be a string'),
    });
    expect(await bad('stream::set', { stream_name: s, group_id: 'g', item_id: '', data: 1 })).toMatchObject({
      message: expect.stringContaining('item_id must not be empty'),
    });
    expect(await bad('stream::set', { stream_name: s, group_id: 'g', item_id: 'i' })).toMatchObject({ message: expect.stringContaining('data is required') });
    expect(await bad('stream::set', { stream_name: s, group_id: 'g', item_id: 'i', data: 'x'.repeat(2000) })).toMatchObject({
      message: expect.stringContaining('max_value_bytes'),
    });
    expect(await bad('stream::update', { stream_name: s, group_id: 'g', item_id: 'i', ops: 'nope' })).toMatchObject({
      code: 'invalid_payload',
      message: expect.stringContaining('ops'),
    });
    expect(await bad('stream::send', { stream_name: s, group_id: 'g', data: 1 })).toMatchObject({ message: expect.stringContaining('type is required') });
    expect(await bad('stream::send', { stream_name: s, group_id: 'g', type: 't', id: 5 })).toMatchObject({ message: expect.stringContaining('id must be') });
    expect(await bad('stream::list', { stream_name: s })).toMatchObject({ message: expect.stringContaining('group_id is required') });
    expect(await bad('stream::list_groups', [])).toMatchObject({ code: 'invalid_payload' });
    expect(await bad('stream::delete', { stream_name: 'flint:streams:stats', group_id: 'engine', item_id: 'stats' })).toMatchObject({
      message: expect.stringContaining('reserved'),
    });
    // Nothing was stored by the refused calls.
    expect(await call('stream::list_groups', { stream_name: s })).toEqual([]);
  });

  it('a worker’s own implementation (stream::<op>(<name>)) takes over, and subscribers still get the frames', async () => {
    const s = uid('custom');
    const rows = new Map<string, unknown>();
    const custom = await startWorker(kind, engine, (w) => {
      w.registerFunction(`stream::get(${s})`, (input: Json) => rows.get(input.item_id) ?? null);
      w.registerFunction(`stream::set(${s})`, (input: Json) => {
        const old_value = rows.get(input.item_id) ?? null;
        rows.set(input.item_id, input.data);
        return { old_value, new_value: input.data };
      });
      w.registerFunction(`stream::delete(${s})`, (input: Json) => {
        const old_value = rows.get(input.item_id) ?? null;
        rows.delete(input.item_id);
        return { old_value };
      });
      w.registerFunction(`stream::list(${s})`, () => [...rows.values()]);
      w.registerFunction(`stream::list_groups(${s})`, () => ['from-worker']);
      w.registerFunction(`stream::update(${s})`, () => 'not an object');
    });
    const client = await StreamTestClient.connect(streamUrl(engine));
    rows.set('seed', 's');
    client.join('g', s, 'room');
    expect((await client.waitFrame(isFrame('sync', s, 'room'))).event.data).toEqual(['s']);

    expect(await call('stream::set', { stream_name: s, group_id: 'room', item_id: 'a', data: 1 })).toEqual({ old_value: null, new_value: 1 });
    expect(await call('stream::set', { stream_name: s, group_id: 'room', item_id: 'a', data: 2 })).toEqual({ old_value: 1, new_value: 2 });
    expect(await call('stream::get', { stream_name: s, group_id: 'room', item_id: 'a' })).toBe(2);
    expect(await call('stream::list_groups', { stream_name: s })).toEqual(['from-worker']);
    expect(await call('stream::delete', { stream_name: s, group_id: 'room', item_id: 'a' })).toEqual({ old_value: 2 });
    const badResult = await bad('stream::update', { stream_name: s, group_id: 'room', item_id: 'a', ops: [] });
    expect(badResult.message).toContain(`stream::update(${s}) returned`);
    await client.waitFrame(isFrame('delete', s, 'room', 'a'));
    expect(client.frames.slice(1).map((f) => [f.event.type, f.event.data])).toEqual([
      ['create', 1],
      ['update', 2],
      ['delete', 2],
    ]);
    // The adapter was not used.
    await custom.shutdown();
    await waitFor(async () => (await call('stream::list', { stream_name: s, group_id: 'room' })).length === 0);
  });
});

describe('iii-sdk createStream', () => {
  it('a stream implemented with iii-sdk createStream serves reads, writes and joins through the engine', async () => {
    const engine = await startStreamEngine();
    const s = uid('iii-stream');
    const store = new Map<string, unknown>([['a', { v: 1 }]]);
    const sdk = registerIiiWorker(engine.bridgeUrl, { workerName: uid('iii'), otel: { enabled: false }, enableMetricsReporting: false });
    track(() => sdk.shutdown());
    sdk.createStream(s, {
      get: async (input: Json) => store.get(input.item_id) ?? null,
      set: async (input: Json) => {
        const old_value = store.get(input.item_id) ?? null;
        store.set(input.item_id, input.data);
        return { old_value, new_value: input.data };
      },
      delete: async (input: Json) => {
        const old_value = store.get(input.item_id) ?? null;
        store.delete(input.item_id);
        return { old_value };
      },
      list: async () => [...store.values()],
      listGroups: async () => ['g'],
      update: async () => null,
    } as Json);
    await whenAnnounced(engine, { name: (sdk as Json).workerName } as TestWorker).catch(() => {});
    await waitFor(() => engine.listFunctions(true).some((f) => f.function_id === `stream::list_groups(${s})`));

    const client = await StreamTestClient.connect(streamUrl(engine));
    client.join('item', s, 'g', 'a');
    expect((await client.waitFrame(isFrame('sync', s, 'g', 'a'))).event.data).toEqual({ v: 1 });
    const result = await sdk.trigger({ function_id: 'stream::set', payload: { stream_name: s, group_id: 'g', item_id: 'a', data: { v: 2 } } });
    expect(result).toEqual({ old_value: { v: 1 }, new_value: { v: 2 } });
    expect((await client.waitFrame(isFrame('update', s, 'g', 'a'))).event.data).toEqual({ v: 2 });
    expect(await sdk.trigger({ function_id: 'stream::list_groups', payload: { stream_name: s } })).toEqual(['g']);
  });
});
