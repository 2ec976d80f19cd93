/**
 * flint-stream on the redis adapter with two engines sharing one Redis (same redis_url and key_prefix):
 * items written through one engine are read, listed and synced through the other, and the frames of its
 * writes reach the other engine's WebSocket subscribers (Redis pub/sub).
 *
 * A write PUBLISHes its frame from inside its own Lua script and every engine, the writer included, takes
 * the frames from its Redis subscription only: the subscribers of every engine see the frames in the order
 * the writes were stored, so a subscriber ends with the value the store holds, whoever wrote last.
 *
 * Triggers are per engine: a `stream` trigger runs for the changes and custom events made through the
 * engine it is registered on (the engine that stores the change fires the triggers). A write through
 * another engine sharing the Redis reaches this engine's subscribers, but never its triggers, and no
 * trigger runs twice for one write.
 *
 * Outage: with a redis-server the test starts and kills (SpareRedisServer), writes and custom events
 * (stream::set, stream::send) fail fast with store_unavailable while it is down and announce nothing, the
 * engines and their clients stay up, and after the restart writes succeed again and their frames reach the
 * clients of both engines again, the writing engine's own included (the pub/sub subscriptions came back).
 *
 * Uses the real Redis at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379), a unique key prefix per
 * test (deleted afterwards). Without Redis (or without `redis-server` for the outage test): skipped with a
 * printed reason, or a failure when FLINT_REQUIRE_SERVICES=1.
 */
import { randomUUID } from 'node:crypto';
import type { Engine } from '@flint/engine';
import type { StreamMessage } from '@flint/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { findTrigger, startWorker } from '../support/harness.js';
import { LEVEL, type LogCapture, captureLog } from '../support/log-capture.js';
import { SpareRedisServer, deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, programAvailable, serviceAvailable } from '../support/services/services.js';
import { type StreamFrame, StreamTestClient, isFrame, startStreamEngine, streamUrl } from '../support/stream/helpers.js';
import { rejectsWith, sleep, uid, waitFor } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('stream module on Redis', await serviceAvailable('redis', REDIS_URL));
const runOutage = gateService('stream module Redis outage', programAvailable('redis-server'));

afterEach(cleanup);

/** A fresh key prefix, whose keys are deleted by cleanup(). */
function newPrefix(): string {
  const prefix = `flint-test:stream:${randomUUID()}:`;
  track(() => deleteKeysWithPrefix(REDIS_URL, prefix));
  return prefix;
}

const redisStream = (redis_url: string, key_prefix: string, extra: Record<string, unknown> = {}) => ({
  adapter: { name: 'redis', config: { redis_url, key_prefix, ...extra } },
});

// biome-ignore lint/suspicious/noExplicitAny: results are arbitrary JSON
const call = (engine: Engine, functionId: string, payload: unknown): Promise<any> => engine.invoke(functionId, payload);

/** Connects a raw client, joins `stream`/`group` as subscription `sub`, and waits for its sync frame. */
async function joined(engine: Engine, stream: string, group: string, sub = 'sub'): Promise<{ client: StreamTestClient; sync: StreamFrame }> {
  const client = await StreamTestClient.connect(streamUrl(engine));
  client.join(sub, stream, group);
  const sync = await client.waitFrame(isFrame('sync', stream, group), 3000, 'the sync of the join');
  return { client, sync };
}

/** Changes and custom events (anything but the sync) of `stream`/`group` a client got, as `[type, id, data]`. */
const changes = (client: StreamTestClient, stream: string, group: string) =>
  client.frames
    .filter((f) => f.streamName === stream && f.groupId === group && f.event?.type !== 'sync')
    .map((f) => [f.event.type, f.id, f.event.type === 'event' ? f.event.event : f.event.data]);

describe.skipIf(!runRedis)('flint-stream on a shared Redis (two engines)', () => {
  it("a client on engine B gets create/update/delete/event frames for writes through engine A, and its join's sync shows A's items", async () => {
    const prefix = newPrefix();
    const a = await startStreamEngine(redisStream(REDIS_URL, prefix));
    const b = await startStreamEngine(redisStream(REDIS_URL, prefix));
    expect(streamUrl(a)).not.toBe(streamUrl(b));
    const stream = uid('chat');
    const group = 'room:1%'; // `:` and `%` in a name cross engines intact

    // Written through A before anyone joins on B: B's sync shows them.
    expect(await call(a, 'stream::set', { stream_name: stream, group_id: group, item_id: 'm1', data: { text: 'hello' } })).toEqual({
      old_value: null,
      new_value: { text: 'hello' },
    });
    await call(a, 'stream::set', { stream_name: stream, group_id: group, item_id: 'm2', data: { text: 'world' } });
    const { client, sync } = await joined(b, stream, group);
    expect((sync.event.data as unknown[]).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))).toEqual([{ text: 'hello' }, { text: 'world' }]);
    // An item subscription on B syncs with A's item too.
    const itemClient = await StreamTestClient.connect(streamUrl(b));
    itemClient.join('one', stream, group, 'm1');
    expect((await itemClient.waitFrame(isFrame('sync', stream, group, 'm1'))).event.data).toEqual({ text: 'hello' });

    // Changes through A reach B's subscribers.
    await call(a, 'stream::set', { stream_name: stream, group_id: group, item_id: 'm3', data: { text: 'new' } });
    expect(await call(a, 'stream::set', { stream_name: stream, group_id: group, item_id: 'm1', data: { text: 'hello!' } })).toEqual({
      old_value: { text: 'hello' },
      new_value: { text: 'hello!' },
    });
    await call(a, 'stream::update', { stream_name: stream, group_id: group, item_id: 'm2', ops: [{ type: 'set', path: 'likes', value: 1 }] });
    expect(await call(a, 'stream::delete', { stream_name: stream, group_id: group, item_id: 'm3' })).toEqual({ old_value: { text: 'new' } });
    await call(a, 'stream::send', { stream_name: stream, group_id: group, type: 'typing', data: { who: 'ada' } });
    await call(a, 'stream::delete', { stream_name: stream, group_id: group, item_id: 'never-there' }); // no frame: nothing was deleted

    const expected = [
      ['create', 'm3', { text: 'new' }],
      ['update', 'm1', { text: 'hello!' }],
      ['update', 'm2', { text: 'world', likes: 1 }],
      ['delete', 'm3', { text: 'new' }],
      ['event', null, { type: 'typing', data: { who: 'ada' } }],
    ];
    await waitFor(
      () => changes(client, stream, group).length >= expected.length,
      5000,
      () => `5 frames on B (got ${JSON.stringify(client.frames)})`,
    );
    await sleep(200); // room for a duplicate to (wrongly) arrive
    expect(changes(client, stream, group)).toEqual(expected);
    for (const f of client.frames) expect(f).toMatchObject({ type: 'stream', streamName: stream, groupId: group });
    // The item subscriber on B gets the changes of its item only (no group-wide custom event).
    await waitFor(() => changes(itemClient, stream, group).length >= 1, 3000, 'the update of m1 on the item subscription');
    expect(changes(itemClient, stream, group)).toEqual([['update', 'm1', { text: 'hello!' }]]);

    // Reads, lists and list_all through B show what A wrote.
    expect(await call(b, 'stream::get', { stream_name: stream, group_id: group, item_id: 'm1' })).toEqual({ text: 'hello!' });
    expect(((await call(b, 'stream::list', { stream_name: stream, group_id: group })) as unknown[]).length).toBe(2);
    await call(a, 'stream::set', { stream_name: stream, group_id: 'room:2', item_id: 'x', data: 1 });
    await call(a, 'stream::set', { stream_name: `${stream}:other`, group_id: 'g', item_id: 'x', data: 1 });
    expect(await call(b, 'stream::list_groups', { stream_name: stream })).toEqual(['room:1%', 'room:2']);
    expect(await call(b, 'stream::list_all', {})).toEqual({
      stream: [
        { id: stream, groups: ['room:1%', 'room:2'] },
        { id: `${stream}:other`, groups: ['g'] },
      ],
      count: 2,
    });
  });

  it('frames cross engines both ways, each exactly once, and not to engines on another key prefix', async () => {
    const prefix = newPrefix();
    const a = await startStreamEngine(redisStream(REDIS_URL, prefix));
    const b = await startStreamEngine(redisStream(REDIS_URL, prefix));
    const c = await startStreamEngine(redisStream(REDIS_URL, newPrefix()));
    const stream = uid('s');
    const onA = (await joined(a, stream, 'g')).client;
    const onB = (await joined(b, stream, 'g')).client;
    const onC = (await joined(c, stream, 'g')).client;
    for (let i = 0; i < 20; i++) {
      await call(i % 2 === 0 ? a : b, 'stream::set', { stream_name: stream, group_id: 'g', item_id: `i${i}`, data: i });
    }
    const want = Array.from({ length: 20 }, (_, i) => ['create', `i${i}`, i]);
    for (const [name, client] of [
      ['A', onA],
      ['B', onB],
    ] as const) {
      await waitFor(() => changes(client, stream, 'g').length >= 20, 5000, `20 frames on ${name}`);
    }
    await sleep(200); // room for a duplicate to (wrongly) arrive
    // Each engine's subscribers see every write once, in the order the writes were made (each call had
    // returned before the next one started), whichever engine made them.
    expect(changes(onA, stream, 'g')).toEqual(want);
    expect(changes(onB, stream, 'g')).toEqual(want);
    expect(changes(onC, stream, 'g')).toEqual([]);
    expect(await call(c, 'stream::list_all', {})).toEqual({ stream: [], count: 0 });
    // Every frame reached B through its subscription and counts as an event there, its own writes' too.
    const stats = await call(b, 'engine::streams::stats', {});
    expect(stats.totals.events).toBe(20);
  });

  // This failed before a write and its frame became one step: a frame went to the writing engine's own
  // subscribers at once but reached the others later, over pub/sub, so when B wrote an item and then A
  // did, a subscriber on A got A's frame first and B's older one last.
  it('a subscriber on A ends with the stored value when B and then A write the same item (sequential writes stay in order)', async () => {
    const prefix = newPrefix();
    const a = await startStreamEngine(redisStream(REDIS_URL, prefix));
    const b = await startStreamEngine(redisStream(REDIS_URL, prefix));
    const stream = uid('order');
    const { client } = await joined(a, stream, 'g');
    const { client: onB } = await joined(b, stream, 'g');
    const stale: string[] = [];
    const rounds = 50;
    for (let i = 0; i < rounds; i++) {
      // Strictly one after the other: B's call has returned before A's starts.
      await call(b, 'stream::set', { stream_name: stream, group_id: 'g', item_id: 'x', data: `b${i}` });
      await call(a, 'stream::set', { stream_name: stream, group_id: 'g', item_id: 'x', data: `a${i}` });
      await waitFor(() => changes(client, stream, 'g').length >= 2 * (i + 1), 3000, `the two frames of round ${i}`);
      const shown = changes(client, stream, 'g').at(-1)?.[2];
      if (shown !== `a${i}`) stale.push(`round ${i}: client shows ${JSON.stringify(shown)}, store holds "a${i}"`);
    }
    expect(await call(a, 'stream::get', { stream_name: stream, group_id: 'g', item_id: 'x' })).toBe(`a${rounds - 1}`);
    expect(stale, `${stale.length} of ${rounds} rounds left the subscriber on A with B's older value`).toEqual([]);
    // Both engines' subscribers got the same frames, in the order the writes were made.
    const made = Array.from({ length: rounds }, (_, i) => [`b${i}`, `a${i}`]).flat();
    await waitFor(() => changes(onB, stream, 'g').length >= 2 * rounds, 3000, `the ${2 * rounds} frames on B`);
    expect(changes(client, stream, 'g').map(([, , data]) => data)).toEqual(made);
    expect(changes(onB, stream, 'g').map(([, , data]) => data)).toEqual(made);
  });

  it('concurrent writes of one item through both engines: the subscribers of both see the same frames in the same order, ending with the stored value', async () => {
    const prefix = newPrefix();
    const a = await startStreamEngine(redisStream(REDIS_URL, prefix));
    const b = await startStreamEngine(redisStream(REDIS_URL, prefix));
    const stream = uid('race');
    const { client: onA } = await joined(a, stream, 'g');
    const { client: onB } = await joined(b, stream, 'g');
    const item = { stream_name: stream, group_id: 'g', item_id: 'x' };
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 60; i++) {
      const engine = i % 2 === 0 ? a : b;
      if (i % 3 === 2) writes.push(call(engine, 'stream::update', { ...item, ops: [{ type: 'set', path: 'by', value: `u${i}` }] }));
      else writes.push(call(engine, 'stream::set', { ...item, data: { by: `s${i}` } }));
    }
    await Promise.all(writes);
    for (const [name, client] of [
      ['A', onA],
      ['B', onB],
    ] as const) {
      await waitFor(
        () => changes(client, stream, 'g').length >= 60,
        5000,
        () => `60 frames on ${name} (got ${changes(client, stream, 'g').length})`,
      );
    }
    await sleep(200); // room for a duplicate to (wrongly) arrive
    expect(changes(onA, stream, 'g')).toHaveLength(60);
    expect(changes(onB, stream, 'g')).toEqual(changes(onA, stream, 'g'));
    expect(changes(onA, stream, 'g')[0]?.[0]).toBe('create');
    expect(
      changes(onA, stream, 'g')
        .slice(1)
        .every(([type]) => type === 'update'),
    ).toBe(true);
    expect(changes(onA, stream, 'g').at(-1)?.[2]).toEqual(await call(b, 'stream::get', item));
  });

  it('stream triggers are per engine: a trigger on B fires for writes through B only, once each', async () => {
    const prefix = newPrefix();
    const a = await startStreamEngine(redisStream(REDIS_URL, prefix));
    const b = await startStreamEngine(redisStream(REDIS_URL, prefix));
    const stream = uid('watched');
    const onB: StreamMessage[] = [];
    const onA: StreamMessage[] = [];
    await startWorker('flint', b, (w) => {
      w.registerFunction('watch::b', (m: StreamMessage) => void onB.push(m));
      w.registerTrigger({ type: 'stream', function_id: 'watch::b', config: { stream_name: stream } });
    });
    await startWorker('flint', a, (w) => {
      w.registerFunction('watch::a', (m: StreamMessage) => void onA.push(m));
      w.registerTrigger({ type: 'stream', function_id: 'watch::a', config: { stream_name: stream } });
    });
    await waitFor(() => findTrigger(b, (t) => t.function_id === 'watch::b'));
    await waitFor(() => findTrigger(a, (t) => t.function_id === 'watch::a'));
    // B has a subscriber, so A's frames certainly reach engine B (they must still not fire B's trigger).
    const { client: onBClient } = await joined(b, stream, 'g');

    await call(a, 'stream::set', { stream_name: stream, group_id: 'g', item_id: 'via-a', data: 1 });
    await call(b, 'stream::set', { stream_name: stream, group_id: 'g', item_id: 'via-b', data: 2 });
    await call(b, 'stream::set', { stream_name: stream, group_id: 'g', item_id: 'via-a', data: 3 }); // an update of A's item, through B
    await call(a, 'stream::send', { stream_name: stream, group_id: 'g', type: 'ping', data: 'from a' });
    await call(b, 'stream::delete', { stream_name: stream, group_id: 'g', item_id: 'via-b' });

    await waitFor(() => changes(onBClient, stream, 'g').length >= 5, 5000, 'the five frames on B');
    await waitFor(
      () => onB.length >= 3 && onA.length >= 2,
      3000,
      () => `the trigger calls (a: ${onA.length}, b: ${onB.length})`,
    );
    await sleep(300); // proving absence: give a cross-engine or duplicate call time to (wrongly) arrive
    const seen = (ms: StreamMessage[]) => ms.map((m) => [m.event.type, m.id, m.streamName, m.groupId]);
    expect(seen(onB)).toEqual([
      ['create', 'via-b', stream, 'g'],
      ['update', 'via-a', stream, 'g'],
      ['delete', 'via-b', stream, 'g'],
    ]);
    expect(seen(onA)).toEqual([
      ['create', 'via-a', stream, 'g'],
      ['event', null, stream, 'g'],
    ]);
  });
});

describe.skipIf(!runOutage)('flint-stream while its Redis is down', () => {
  let server: SpareRedisServer;

  beforeAll(async () => {
    server = await SpareRedisServer.start('stream-outage-pw');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('stream::set and stream::send fail fast with store_unavailable and announce nothing, engines and clients stay up; after the restart frames reach both engines again', async () => {
    const prefix = `flint-test:stream:${randomUUID()}:`;
    const logA: LogCapture = captureLog('info');
    const a = await startStreamEngine(redisStream(server.url, prefix), { logger: logA.logger });
    const b = await startStreamEngine(redisStream(server.url, prefix));
    const stream = uid('outage');
    const onA = (await joined(a, stream, 'g')).client;
    const onB = (await joined(b, stream, 'g')).client;
    const set = (engine: Engine, item: string, data: unknown) => call(engine, 'stream::set', { stream_name: stream, group_id: 'g', item_id: item, data });
    const send = (engine: Engine, type: string) => call(engine, 'stream::send', { stream_name: stream, group_id: 'g', type, data: null });
    /** Whether `client` got a change frame of `item` or a custom event of `type` (the join's sync aside). */
    const got = (client: StreamTestClient, what: string) =>
      client.frames.some((f) => f.event?.type !== 'sync' && (f.id === what || (f.event?.type === 'event' && f.event.event?.type === what)));

    await set(a, 'before', 0);
    await onA.waitFrame(isFrame('create', stream, 'g', 'before'), 3000, 'the frame of the write before the outage on A (its own engine)');
    await onB.waitFrame(isFrame('create', stream, 'g', 'before'), 3000, 'the frame of the write before the outage on B');

    await server.kill();
    const failures: Record<'set' | 'send', number[]> = { set: [], send: [] };
    const timed = async (kind: 'set' | 'send', promise: Promise<unknown>) => {
      const started = Date.now();
      const error = await rejectsWith(promise, 'store_unavailable');
      failures[kind].push(Date.now() - started);
      expect(error.message).not.toContain(server.password);
      expect(error.message).toContain(`127.0.0.1:${server.port}`);
    };
    for (let round = 0; round < 3; round++) {
      for (const [engine, name] of [
        [a, 'a'],
        [b, 'b'],
      ] as const) {
        await timed('set', set(engine, `during-${name}`, round));
        await timed('send', send(engine, `during-${name}`));
      }
      await rejectsWith(call(a, 'stream::get', { stream_name: stream, group_id: 'g', item_id: 'before' }), 'store_unavailable');
      await sleep(200);
    }
    const range = (ms: number[]) => `${Math.min(...ms)}–${Math.max(...ms)} ms`;
    console.log(
      `while Redis is down: stream::set failed with store_unavailable in ${range(failures.set)}, stream::send in ${range(failures.send)} (${failures.set.length} calls each)`,
    );
    // Fast: a refused connection fails the call at once, far below the command time-out (2000 ms).
    expect(Math.max(...failures.set, ...failures.send)).toBeLessThan(1500);
    // A failed write or send announces nothing, not even to the clients of the engine that tried it.
    for (const client of [onA, onB]) for (const what of ['during-a', 'during-b']) expect(got(client, what), what).toBe(false);
    // The engines and their clients are still up.
    expect(onA.ws.readyState).toBe(onA.ws.OPEN);
    expect(onB.ws.readyState).toBe(onB.ws.OPEN);
    expect(onA.closeCode).toBeUndefined();
    expect(onB.closeCode).toBeUndefined();
    expect((await call(a, 'engine::streams::stats', {})).totals.connections).toBe(1);
    expect((await call(b, 'engine::streams::stats', {})).totals.connections).toBe(1);

    await server.restart();
    const restarted = Date.now();
    track(() => deleteKeysWithPrefix(server.url, prefix));
    // Writes succeed again without restarting anything.
    let attempt = 0;
    await waitFor(
      async () => {
        attempt++;
        return set(a, 'after', attempt).then(() => true);
      },
      15_000,
      'a write through A after the restart',
      200,
    );
    await waitFor(() => set(b, 'after-b', 1).then(() => true), 15_000, 'a write through B after the restart', 200);
    // The pub/sub subscriptions came back: a write through either engine reaches the clients of both,
    // the writing engine's own included (they get frames only through the subscription too).
    let n = 0;
    for (const [engine, name] of [
      [a, 'ping-a'],
      [b, 'ping-b'],
    ] as const) {
      await waitFor(
        async () => {
          await set(engine, name, ++n);
          return got(onA, name) && got(onB, name);
        },
        15_000,
        () => `the frame of a write through ${name.slice(-1).toUpperCase()} on both engines after the restart (A: ${got(onA, name)}, B: ${got(onB, name)})`,
        300,
      );
    }
    // And custom events again reach both engines.
    await send(b, 'after-restart');
    for (const client of [onA, onB]) {
      await client.waitFrame((f) => f.event?.type === 'event' && f.event.event?.type === 'after-restart', 3000, 'the custom event after the restart');
    }
    console.log(`after the restart: writes and their frames on both engines work again within ${Date.now() - restarted} ms`);
    expect(onA.ws.readyState).toBe(onA.ws.OPEN);
    expect(onB.ws.readyState).toBe(onB.ws.OPEN);
    // What failed during the outage never shows up later either, and was never stored.
    for (const client of [onA, onB]) for (const what of ['during-a', 'during-b']) expect(got(client, what), what).toBe(false);
    expect(await call(a, 'stream::get', { stream_name: stream, group_id: 'g', item_id: 'during-a' })).toBeNull();
    expect(await call(a, 'stream::get', { stream_name: stream, group_id: 'g', item_id: 'during-b' })).toBeNull();
    // The stream adapter's connections each logged the loss once (not once per failed call or retry) and
    // the recovery once; no log line holds the password.
    const adapterLog = logA.records.filter((r) => r.adapter === 'stream/redis').map((r) => ({ level: r.level as number, msg: String(r.msg) }));
    const lost = adapterLog.filter((r) => r.msg.includes('connection lost') && r.msg.includes('calls fail with store_unavailable until it is back'));
    const restored = adapterLog.filter((r) => r.msg.endsWith('connection restored'));
    expect(lost.length).toBeGreaterThanOrEqual(1);
    expect(lost.length).toBeLessThanOrEqual(2); // the command connection and the subscriber's
    expect(lost.every((r) => r.level === LEVEL.warn)).toBe(true);
    expect(restored.length).toBe(lost.length);
    expect(restored.every((r) => r.level === LEVEL.info)).toBe(true);
    expect(JSON.stringify(logA.records)).not.toContain(server.password);
  });

  it('while Redis hangs (SIGSTOP) writes fail with store_unavailable after command_timeout_ms, not later; once it answers again everything works', async () => {
    const prefix = `flint-test:stream:${randomUUID()}:`;
    track(() => deleteKeysWithPrefix(server.url, prefix));
    const config = redisStream(server.url, prefix, { command_timeout_ms: 500 });
    const a = await startStreamEngine(config);
    const b = await startStreamEngine(config);
    const stream = uid('hang');
    const onA = (await joined(a, stream, 'g')).client;
    const onB = (await joined(b, stream, 'g')).client;
    const set = (engine: Engine, item: string, data: unknown) => call(engine, 'stream::set', { stream_name: stream, group_id: 'g', item_id: item, data });
    await set(a, 'before', 0);
    await onB.waitFrame(isFrame('create', stream, 'g', 'before'));

    server.pause();
    try {
      const started = Date.now();
      const errors = await Promise.all([rejectsWith(set(a, 'hung-a', 1), 'store_unavailable'), rejectsWith(set(b, 'hung-b', 1), 'store_unavailable')]);
      const elapsed = Date.now() - started;
      console.log(`stream::set while Redis hangs (command_timeout_ms 500): failed after ${elapsed} ms`);
      expect(elapsed).toBeLessThan(2000);
      for (const error of errors) expect(error.message).toMatch(/no answer within 500 ms/);
      expect(onA.ws.readyState).toBe(onA.ws.OPEN);
      expect(onB.ws.readyState).toBe(onB.ws.OPEN);
    } finally {
      server.resume();
    }
    await waitFor(() => set(a, 'after', 1).then(() => true), 10_000, 'a write through A once Redis answers again', 100);
    let n = 0;
    await waitFor(
      async () => {
        await set(a, 'ping', ++n);
        return onA.frames.some((f) => f.id === 'ping') && onB.frames.some((f) => f.id === 'ping');
      },
      10_000,
      'a frame on A and on B for a write through A after the hang',
      200,
    );
    expect(await call(b, 'stream::get', { stream_name: stream, group_id: 'g', item_id: 'after' })).toBe(1);
    // A write that timed out is not taken back: Redis still runs the request it had received once it answers
    // again, and the script that stores the item PUBLISHes its frame with it. So the subscribers agree with
    // the store either way: a frame for a hung write that was stored, none for one that was not. (`ping` was
    // written after Redis came back; once its frame is in, a hung write's frame would be in too.)
    const outcomes: string[] = [];
    for (const item of ['hung-a', 'hung-b']) {
      const stored = await call(b, 'stream::get', { stream_name: stream, group_id: 'g', item_id: item });
      outcomes.push(`${item} ${stored === null ? 'not stored' : 'stored once Redis answered'}`);
      for (const [name, client] of [
        ['A', onA],
        ['B', onB],
      ] as const) {
        const frames = changes(client, stream, 'g').filter(([, id]) => id === item);
        expect(frames, `${item} on ${name} (${stored === null ? 'not stored' : 'stored'})`).toEqual(stored === null ? [] : [['create', item, stored]]);
      }
    }
    console.log(`after the hang: ${outcomes.join(', ')}; the subscribers of both engines agree`);
  });
});
