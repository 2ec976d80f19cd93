/**
 * The StreamStore contract (design.md §7: one contract suite per adapter interface, run against every
 * implementation), through the public `openAdapter('stream', …)`: `kv` in_memory, `kv` file_based and `redis`.
 *
 * Covered: item get/set/delete/update and what they return (existed / old_value), list of a group,
 * listGroups of a stream (sorted), listAll (streams sorted, their groups sorted), names holding `:` and `%`
 * (stream `a:b` group `c` and stream `a` group `b:c` are different groups), unsubscribe, close.
 *
 * A write and its frame are one step:
 * - `set` publishes `before + ('create' | 'update') + after` (create when the item did not exist);
 * - `delete` publishes `before + <old value's JSON text> + after`, and nothing when nothing was deleted;
 * - `update` publishes what its frame function returns, and nothing when the updater throws;
 * - `publish` (a frame announcing no write: a custom event) resolves once the frame is on its way.
 * A kv store hands a write's frame to its listeners synchronously, before the write's promise resolves. A
 * redis store hands every frame, its own writes' included, to its listeners only through its Redis
 * subscription, so that every store on one Redis and prefix sees the frames in the order the writes were
 * stored (and a listener's last frame of an item agrees with `get`).
 *
 * Absence ("nothing published", "exactly once") is checked with a sentinel: after the writes, the writer
 * publishes one more frame and the test waits for it; frames reach a listener in the order they were
 * published, so anything published before the sentinel has arrived by then.
 *
 * The redis run uses the real server at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379) with a unique
 * key prefix per test, deleted afterwards. Without a reachable Redis that run is skipped with a printed
 * reason, or fails when FLINT_REQUIRE_SERVICES=1.
 *
 * Types: `StreamStore` and `StreamFrame` come from `@flint/engine`; `FrameParts` and `UpdateFrame` are not
 * exported there, so they come from the built declarations (type-only: nothing of dist/ is loaded at run
 * time; the adapters are opened through the public `openAdapter`).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type StreamFrame, type StreamStore, openAdapter } from '@flint/engine';
import { FlintError } from '@flint/protocol';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { FrameParts, UpdateFrame } from '../../dist/adapters/stream/types.js';
import { captureLog } from '../support/log-capture.js';
import { deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, serviceAvailable } from '../support/services/services.js';
import { waitFor, within } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('stream adapter contract on Redis', await serviceAvailable('redis', REDIS_URL));

/** One test's place to keep streams: `open()` may be called again (after close, or alongside) on the same data. */
interface Location {
  open(): Promise<StreamStore>;
  cleanup(): Promise<void>;
}

interface Backend {
  kind: string;
  /** Whether data survives close() and reopening. */
  persistent: boolean;
  /** Whether two stores opened on the same location share items and frames (the `shared` flag). */
  shared: boolean;
  prepare(): Promise<Location>;
}

/** Adapter warnings go to memory, not the test output. */
const quiet = captureLog('error').logger;
const openStream = (ref: unknown, configDir: string): Promise<StreamStore> => openAdapter('stream', ref, { configDir, logger: quiet });

// ---------------------------------------------------------------------------------------------
// Frames as the module makes them (modules/stream/frames.ts): JSON text whose routing fields a redis
// store reads back when the frame comes over its subscription.

/** The frame text up to its event type (the module's frameHead). */
function head(stream: string, group: string, id: string | null): string {
  return `{"type":"stream","timestamp":${Date.now()},"streamName":${JSON.stringify(stream)},"groupId":${JSON.stringify(group)},"id":${JSON.stringify(id)},"event":{"type":"`;
}

/** A set's frame around its event type, with the new value's JSON (the module's changeParts). */
function setFrame(stream: string, group: string, item: string, value: unknown): FrameParts {
  return { before: head(stream, group, item), after: `","data":${JSON.stringify(value) ?? 'null'}}}` };
}

/** A delete's frame around the old value's JSON (the module's deleteParts). */
function deleteFrame(stream: string, group: string, item: string): FrameParts {
  return { before: `${head(stream, group, item)}delete","data":`, after: '}}' };
}

/** An update's frame, from whether the item existed and its new value (what StreamItems.update passes). */
function updateFrame(stream: string, group: string, item: string): UpdateFrame {
  const before = head(stream, group, item);
  return (existed, value) => `${before}${existed ? 'update' : 'create'}","data":${JSON.stringify(value) ?? 'null'}}}`;
}

/** A custom event's frame (what stream::send publishes); `id` null for a group-wide one. */
function eventFrame(stream: string, group: string, id: string | null, data: unknown = null): StreamFrame {
  const text = JSON.stringify({
    type: 'stream',
    timestamp: Date.now(),
    streamName: stream,
    groupId: group,
    id,
    event: { type: 'event', event: { type: 'ping', data } },
  });
  return { stream, group, id, text };
}

/** The frame a listener gets for `text` about stream/group/item. */
const framed = (stream: string, group: string, id: string | null, text: string): StreamFrame => ({ stream, group, id, text });

/** A frame's event type and data (`[type, data]`), read from its text. */
function eventOf(frame: StreamFrame): [string, unknown] {
  const { event } = JSON.parse(frame.text) as { event: { type: string; data?: unknown } };
  return [event.type, event.data];
}

const SENTINEL_STREAM = 'sentinel';

/**
 * Publishes a sentinel through `store` and waits until every list in `lists` got it, then removes it: every
 * frame published before it (by `store`, or stored before it on a shared backend) has been delivered by then.
 */
async function flush(store: StreamStore, ...lists: StreamFrame[][]): Promise<void> {
  const sentinel = eventFrame(SENTINEL_STREAM, 'g', randomUUID());
  await store.publish(sentinel);
  await waitFor(
    () => lists.every((list) => list.some((f) => f.text === sentinel.text)),
    3000,
    () => `the sentinel frame on every listener (got ${lists.map((l) => l.length).join(', ')} frames)`,
  );
  for (const list of lists) {
    for (let i = list.length - 1; i >= 0; i--) if (list[i]?.stream === SENTINEL_STREAM) list.splice(i, 1);
  }
}

const bump = (current: { exists: boolean; value: unknown }) => {
  const before = current.exists ? (current.value as { n: number }).n : 0;
  return { value: { n: before + 1 }, extra: { before } };
};

/** The promise's settled value, or the error it rejected with. */
const settled = <T>(promise: Promise<T>): Promise<T | unknown> =>
  promise.then(
    (value) => value,
    (err: unknown) => err,
  );

function streamContract(name: string, backend: Backend, options: { skip?: boolean } = {}): void {
  describe.skipIf(options.skip ?? false)(`StreamStore contract: ${name}`, () => {
    let location: Location;
    const opened: StreamStore[] = [];
    const open = async (): Promise<StreamStore> => {
      const store = await location.open();
      opened.push(store);
      return store;
    };
    /** A store and the frames its one listener got. */
    const listening = async (): Promise<{ store: StreamStore; got: StreamFrame[] }> => {
      const store = await open();
      const got: StreamFrame[] = [];
      store.subscribe((f) => got.push(f));
      return { store, got };
    };
    /** Writes an item with the frame the module would give it. */
    const put = (store: StreamStore, stream: string, group: string, item: string, value: unknown) =>
      store.set(stream, group, item, value, setFrame(stream, group, item, value));
    const remove = (store: StreamStore, stream: string, group: string, item: string) => store.delete(stream, group, item, deleteFrame(stream, group, item));

    beforeEach(async () => {
      location = await backend.prepare();
    });

    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close().catch(() => {});
      await location.cleanup();
    });

    test(`kind is ${backend.kind}, shared is ${backend.shared}; a fresh store is empty`, async () => {
      const store = await open();
      expect(store.kind).toBe(backend.kind);
      expect(store.shared).toBe(backend.shared);
      expect(await store.listAll()).toEqual([]);
      expect(await store.listGroups('s')).toEqual([]);
      expect(await store.list('s', 'g')).toEqual([]);
      expect(await store.get('s', 'g', 'i')).toEqual({ exists: false, value: null });
    });

    test('set reports whether the item existed and its previous value; get reads it back', async () => {
      const store = await open();
      expect(await put(store, 'chat', 'room-1', 'msg-1', { text: 'hi' })).toEqual({ existed: false, old_value: null });
      expect(await store.get('chat', 'room-1', 'msg-1')).toEqual({ exists: true, value: { text: 'hi' } });
      expect(await put(store, 'chat', 'room-1', 'msg-1', { text: 'hi!' })).toEqual({ existed: true, old_value: { text: 'hi' } });
      expect(await store.get('chat', 'room-1', 'msg-1')).toEqual({ exists: true, value: { text: 'hi!' } });
      // The same item id in another group or another stream is another item.
      expect(await store.get('chat', 'room-2', 'msg-1')).toEqual({ exists: false, value: null });
      expect(await store.get('chat2', 'room-1', 'msg-1')).toEqual({ exists: false, value: null });
      // null is a value: an item holding null exists.
      expect(await put(store, 'chat', 'room-1', 'nul', null)).toEqual({ existed: false, old_value: null });
      expect(await store.get('chat', 'room-1', 'nul')).toEqual({ exists: true, value: null });
      expect(await put(store, 'chat', 'room-1', 'nul', [1, 'two', { three: 3 }])).toEqual({ existed: true, old_value: null });
      expect(await store.get('chat', 'room-1', 'nul')).toEqual({ exists: true, value: [1, 'two', { three: 3 }] });
    });

    test('delete returns the old value; deleting a missing item reports existed:false', async () => {
      const store = await open();
      await put(store, 's', 'g', 'i', { v: 'old' });
      expect(await remove(store, 's', 'g', 'i')).toEqual({ existed: true, old_value: { v: 'old' } });
      expect(await store.get('s', 'g', 'i')).toEqual({ exists: false, value: null });
      expect(await remove(store, 's', 'g', 'i')).toEqual({ existed: false, old_value: null });
      expect(await remove(store, 'never', 'was', 'there')).toEqual({ existed: false, old_value: null });
      await put(store, 's', 'g', 'n', null);
      expect(await remove(store, 's', 'g', 'n')).toEqual({ existed: true, old_value: null });
    });

    test('update returns existed, old value, new value and the extra; a throwing updater changes nothing', async () => {
      const store = await open();
      const frame = updateFrame('s', 'g', 'counter');
      const seen: unknown[] = [];
      const created = await store.update(
        's',
        'g',
        'counter',
        (current) => {
          seen.push(current);
          return bump(current);
        },
        frame,
      );
      expect(seen).toEqual([{ exists: false, value: null }]);
      expect(created).toEqual({ existed: false, old_value: null, new_value: { n: 1 }, extra: { before: 0 } });
      expect(await store.update('s', 'g', 'counter', bump, frame)).toEqual({ existed: true, old_value: { n: 1 }, new_value: { n: 2 }, extra: { before: 1 } });
      expect(await store.get('s', 'g', 'counter')).toEqual({ exists: true, value: { n: 2 } });
      await expect(
        store.update(
          's',
          'g',
          'counter',
          () => {
            throw new Error('updater failed');
          },
          frame,
        ),
      ).rejects.toThrow('updater failed');
      expect(await store.get('s', 'g', 'counter')).toEqual({ exists: true, value: { n: 2 } });
      // 50 concurrent updates of one item are serialised: none lost, none applied twice.
      const results = await Promise.all(Array.from({ length: 50 }, () => store.update('s', 'g', 'counter', bump, frame)));
      expect(results.map((r) => r.extra.before).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
      expect(await store.get('s', 'g', 'counter')).toEqual({ exists: true, value: { n: 52 } });
    });

    test('list returns the values of one group only, and [] for an unknown group', async () => {
      const store = await open();
      await put(store, 's', 'g', 'a', 1);
      await put(store, 's', 'g', 'b', { two: 2 });
      await put(store, 's', 'g', 'c', null);
      await put(store, 's', 'other', 'a', 'other group');
      await put(store, 's2', 'g', 'a', 'other stream');
      const values = await store.list('s', 'g');
      expect(values).toHaveLength(3);
      expect(values).toEqual(expect.arrayContaining([1, { two: 2 }, null]));
      expect(await store.list('s', 'other')).toEqual(['other group']);
      expect(await store.list('s2', 'g')).toEqual(['other stream']);
      expect(await store.list('s', 'unknown')).toEqual([]);
      expect(await store.list('unknown', 'g')).toEqual([]);
      await remove(store, 's', 'g', 'b');
      expect((await store.list('s', 'g')).sort()).toEqual([1, null].sort());
    });

    test('listGroups lists the groups of one stream holding items, sorted, and drops a group with its last item', async () => {
      const store = await open();
      expect(await store.listGroups('s')).toEqual([]);
      for (const group of ['zeta', 'alpha', 'Mid', 'beta', '10', '9']) await put(store, 's', group, 'i', group);
      await put(store, 's', 'alpha', 'j', 'second item');
      // Groups of other streams, even of streams whose names start alike, are not listed.
      await put(store, 's2', 'elsewhere', 'i', 1);
      await put(store, 'ss', 'elsewhere', 'i', 1);
      await put(store, 's:x', 'elsewhere', 'i', 1);
      await remove(store, 's', 'never', 'i');
      expect(await store.listGroups('s')).toEqual(['10', '9', 'Mid', 'alpha', 'beta', 'zeta']);
      expect(await store.listGroups('s2')).toEqual(['elsewhere']);
      await remove(store, 's', 'alpha', 'i');
      expect(await store.listGroups('s')).toContain('alpha');
      await remove(store, 's', 'alpha', 'j');
      expect(await store.listGroups('s')).toEqual(['10', '9', 'Mid', 'beta', 'zeta']);
      expect(await store.list('s', 'alpha')).toEqual([]);
    });

    test('listAll lists every stream sorted by name, each with its groups sorted', async () => {
      const store = await open();
      const writes: [string, string][] = [
        ['orders', 'z'],
        ['orders', 'a'],
        ['chat', 'room-2'],
        ['chat', 'room-10'],
        ['chat', 'room-1'],
        ['Zulu', 'g'],
        ['audit', 'only'],
      ];
      for (const [i, [stream, group]] of writes.entries()) await put(store, stream, group, `item-${i}`, i);
      expect(await store.listAll()).toEqual([
        { stream: 'Zulu', groups: ['g'] },
        { stream: 'audit', groups: ['only'] },
        { stream: 'chat', groups: ['room-1', 'room-10', 'room-2'] },
        { stream: 'orders', groups: ['a', 'z'] },
      ]);
      // A stream disappears with the last item of its last group.
      await remove(store, 'audit', 'only', 'item-6');
      await remove(store, 'orders', 'z', 'item-0');
      expect(await store.listAll()).toEqual([
        { stream: 'Zulu', groups: ['g'] },
        { stream: 'chat', groups: ['room-1', 'room-10', 'room-2'] },
        { stream: 'orders', groups: ['a'] },
      ]);
    });

    test('names holding ":" and "%" round-trip: stream a:b group c and stream a group b:c are different groups', async () => {
      const { store, got } = await listening();
      // Each pair would collide under a naive `<stream>:<group>` scope, or under an escaping that is not reversible.
      const groups: [string, string][] = [
        ['a:b', 'c'],
        ['a', 'b:c'],
        ['a', 'b'],
        ['a%3Ab', 'c'],
        ['a', 'b%3Ac'],
        ['%', '%25'],
        ['%25', '%'],
        ['::', ':'],
        [':', '::'],
        ['x%', ':y'],
        ['x', '%:y'],
        ['ünï 日本 🚀', 'with space/slash\\back'],
      ];
      for (const [stream, group] of groups) {
        expect(await put(store, stream, group, 'id:%', { stream, group }), `${stream} / ${group}`).toEqual({ existed: false, old_value: null });
      }
      for (const [stream, group] of groups) {
        expect(await store.get(stream, group, 'id:%'), `${stream} / ${group}`).toEqual({ exists: true, value: { stream, group } });
        expect(await store.list(stream, group), `${stream} / ${group}`).toEqual([{ stream, group }]);
      }
      const streams = [...new Set(groups.map(([stream]) => stream))].sort();
      const expected = streams.map((stream) => ({
        stream,
        groups: groups
          .filter(([s]) => s === stream)
          .map(([, g]) => g)
          .sort(),
      }));
      expect(await store.listAll()).toEqual(expected);
      for (const { stream, groups: ofStream } of expected) expect(await store.listGroups(stream), stream).toEqual(ofStream);
      expect(await store.listGroups('a')).toEqual(['b', 'b%3Ac', 'b:c']);
      // Deleting one leaves its look-alikes in place.
      expect(await remove(store, 'a', 'b:c', 'id:%')).toEqual({ existed: true, old_value: { stream: 'a', group: 'b:c' } });
      expect(await store.get('a:b', 'c', 'id:%')).toEqual({ exists: true, value: { stream: 'a:b', group: 'c' } });
      expect(await store.listGroups('a')).toEqual(['b', 'b%3Ac']);
      // Every write's frame names its own stream, group and item, whatever characters they hold.
      await flush(store, got);
      expect(got.map((f) => [f.stream, f.group, f.id])).toEqual([...groups.map(([stream, group]) => [stream, group, 'id:%']), ['a', 'b:c', 'id:%']]);
    });

    // ---- frames of writes ------------------------------------------------------------------

    test('set publishes before + "create" + after for a new item, before + "update" + after for an existing one', async () => {
      const { store, got } = await listening();
      const first = setFrame('chat', 'room:1%', 'm1', { text: 'hi' });
      const second = setFrame('chat', 'room:1%', 'm1', { text: 'hi!' });
      const nul = setFrame('chat', 'room:1%', 'nul', null);
      const overNul = setFrame('chat', 'room:1%', 'nul', 'not null');
      expect(await store.set('chat', 'room:1%', 'm1', { text: 'hi' }, first)).toEqual({ existed: false, old_value: null });
      expect(await store.set('chat', 'room:1%', 'm1', { text: 'hi!' }, second)).toEqual({ existed: true, old_value: { text: 'hi' } });
      // An item holding null exists: writing it again is an update.
      await store.set('chat', 'room:1%', 'nul', null, nul);
      await store.set('chat', 'room:1%', 'nul', 'not null', overNul);
      await flush(store, got);
      expect(got).toEqual([
        framed('chat', 'room:1%', 'm1', `${first.before}create${first.after}`),
        framed('chat', 'room:1%', 'm1', `${second.before}update${second.after}`),
        framed('chat', 'room:1%', 'nul', `${nul.before}create${nul.after}`),
        framed('chat', 'room:1%', 'nul', `${overNul.before}update${overNul.after}`),
      ]);
      expect(got.map(eventOf)).toEqual([
        ['create', { text: 'hi' }],
        ['update', { text: 'hi!' }],
        ['create', null],
        ['update', 'not null'],
      ]);
    });

    test("delete publishes before + the old value's JSON + after; deleting a missing item publishes nothing", async () => {
      const { store, got } = await listening();
      const old = { v: 'old', list: [1, 'two', null, { deep: true }], text: 'quote " and ünï' };
      await put(store, 's', 'g', 'i', old);
      await flush(store, got);
      got.length = 0;
      const gone = deleteFrame('s', 'g', 'i');
      expect(await store.delete('s', 'g', 'i', gone)).toEqual({ existed: true, old_value: old });
      expect(await store.delete('s', 'g', 'i', deleteFrame('s', 'g', 'i'))).toEqual({ existed: false, old_value: null });
      expect(await store.delete('never', 'was', 'there', deleteFrame('never', 'was', 'there'))).toEqual({ existed: false, old_value: null });
      const nul = setFrame('s', 'g', 'n', null);
      await store.set('s', 'g', 'n', null, nul);
      const goneNull = deleteFrame('s', 'g', 'n');
      await store.delete('s', 'g', 'n', goneNull);
      await flush(store, got);
      expect(got).toEqual([
        framed('s', 'g', 'i', `${gone.before}${JSON.stringify(old)}${gone.after}`),
        framed('s', 'g', 'n', `${nul.before}create${nul.after}`),
        framed('s', 'g', 'n', `${goneNull.before}null${goneNull.after}`),
      ]);
      expect(got.map(eventOf)).toEqual([
        ['delete', old],
        ['create', null],
        ['delete', null],
      ]);
    });

    test('update publishes what its frame function returns for the write it made; a throwing updater publishes nothing', async () => {
      const { store, got } = await listening();
      const calls: [boolean, unknown][] = [];
      const frame = updateFrame('s', 'g:1', 'counter');
      const recording: UpdateFrame = (existed, value) => {
        calls.push([existed, value]);
        return frame(existed, value);
      };
      await store.update('s', 'g:1', 'counter', bump, recording);
      await store.update('s', 'g:1', 'counter', bump, recording);
      await expect(
        store.update(
          's',
          'g:1',
          'counter',
          () => {
            throw new Error('updater failed');
          },
          recording,
        ),
      ).rejects.toThrow('updater failed');
      await flush(store, got);
      expect(calls).toEqual([
        [false, { n: 1 }],
        [true, { n: 2 }],
      ]);
      expect(got).toEqual([framed('s', 'g:1', 'counter', frame(false, { n: 1 })), framed('s', 'g:1', 'counter', frame(true, { n: 2 }))]);
      // Concurrent updates of one item publish one frame each, in the order they were stored.
      await Promise.all(Array.from({ length: 30 }, () => store.update('s', 'g:1', 'counter', bump, frame)));
      await flush(store, got);
      expect(got.map(eventOf)).toEqual([['create', { n: 1 }], ...Array.from({ length: 31 }, (_, i) => ['update', { n: i + 2 }])]);
    });

    test('publish resolves and hands the frame to every listener, each once', async () => {
      const store = await open();
      const first: StreamFrame[] = [];
      const second: StreamFrame[] = [];
      store.subscribe((f) => first.push(f));
      store.subscribe((f) => second.push(f));
      const sent = [eventFrame('s', 'g', 'i', { n: 1 }), eventFrame('s:x', 'g:y%', null, 'custom'), eventFrame('ünï 日本', '🚀', 'i', { n: 2 })];
      for (const f of sent) {
        const before = first.length;
        const published = store.publish(f);
        // kv: delivered before publish returned. redis: nothing is delivered locally; the frame comes back
        // over the subscription, like every other engine's.
        expect(first.length).toBe(backend.shared ? before : before + 1);
        await expect(published).resolves.toBeUndefined();
      }
      await flush(store, first, second);
      expect(first).toEqual(sent);
      expect(second).toEqual(sent);
    });

    if (backend.shared) {
      test("every frame, the writer's own included, arrives through the subscription, exactly once", async () => {
        const { store, got } = await listening();
        await put(store, 's', 'g', 'i', 1);
        await store.update('s', 'g', 'i', bump, updateFrame('s', 'g', 'i'));
        await remove(store, 's', 'g', 'i');
        const published = store.publish(eventFrame('s', 'g', null, 'custom'));
        // Not delivered on the spot, as a local shortcut would.
        expect(got.map((f) => eventOf(f)[0])).not.toContain('event');
        await published;
        await waitFor(
          () => got.length >= 4,
          3000,
          () => `the 4 frames (got ${got.length})`,
        );
        await flush(store, got);
        expect(got.map((f) => eventOf(f)[0])).toEqual(['create', 'update', 'delete', 'event']);
      });
    } else {
      test("a write's frame reaches the listeners synchronously, before the write's promise resolves", async () => {
        const { store, got } = await listening();
        const atResolve: number[] = [];
        const seen = () => atResolve.push(got.length);
        await put(store, 's', 'g', 'i', 1).then(seen);
        await store.update('s', 'g', 'i', bump, updateFrame('s', 'g', 'i')).then(seen);
        await remove(store, 's', 'g', 'i').then(seen);
        await remove(store, 's', 'g', 'i').then(seen); // nothing deleted: no frame
        expect(atResolve).toEqual([1, 2, 3, 3]);
        expect(got.map((f) => eventOf(f)[0])).toEqual(['create', 'update', 'delete']);
      });
    }

    test('unsubscribe stops delivery to that listener only', async () => {
      const store = await open();
      const kept: StreamFrame[] = [];
      const dropped: StreamFrame[] = [];
      store.subscribe((f) => kept.push(f));
      const unsubscribe = store.subscribe((f) => dropped.push(f));
      const one = eventFrame('s', 'g', 'one');
      const two = eventFrame('s', 'g', 'two');
      await store.publish(one);
      await flush(store, kept, dropped);
      unsubscribe();
      await store.publish(two);
      await put(store, 's', 'g', 'item', 1);
      await flush(store, kept);
      expect(kept.map((f) => f.id)).toEqual(['one', 'two', 'item']);
      expect(dropped).toEqual([one]);
      unsubscribe(); // twice is harmless
      await store.publish(eventFrame('s', 'g', 'three'));
      await flush(store, kept);
      expect(dropped).toEqual([one]);
      expect(kept).toHaveLength(4);
    });

    if (backend.shared) {
      test('a second store on the same backend shares the items; both stores get every frame once, the writer’s own included', async () => {
        const { store: a, got: onA } = await listening();
        const { store: b, got: onB } = await listening();
        const fromA = setFrame('a:b', 'c', 'i', 'from a');
        await a.set('a:b', 'c', 'i', 'from a', fromA);
        expect(await b.get('a:b', 'c', 'i')).toEqual({ exists: true, value: 'from a' });
        expect(await b.listAll()).toEqual([{ stream: 'a:b', groups: ['c'] }]);
        const fromB = setFrame('a:b', 'c', 'i', 'from b');
        await b.set('a:b', 'c', 'i', 'from b', fromB);
        const eventA = eventFrame('a:b', 'c', 'i', 'event from a');
        const eventB = eventFrame('a', 'b:c', null, 'event from b');
        await a.publish(eventA);
        await b.publish(eventB);
        await flush(a, onA, onB);
        await flush(b, onA, onB);
        const want = [
          framed('a:b', 'c', 'i', `${fromA.before}create${fromA.after}`),
          framed('a:b', 'c', 'i', `${fromB.before}update${fromB.after}`),
          eventA,
          eventB,
        ];
        // The other store's frames arrive whole, with their routing fields read from the text.
        expect(onA).toEqual(want);
        expect(onB).toEqual(want);
      });

      test('two stores writing the same item at once: both receive the frames in the same order, and the last one agrees with get', async () => {
        const { store: a, got: onA } = await listening();
        const { store: b, got: onB } = await listening();
        const counts = { frames: 0 };
        for (let round = 0; round < 5; round++) {
          const writes: Promise<unknown>[] = [];
          for (let i = 0; i < 40; i++) {
            const store = i % 2 === 0 ? a : b;
            const tag = `${i % 2 === 0 ? 'a' : 'b'}${round}.${i}`;
            if (i % 9 === 8) writes.push(remove(store, 's', 'g', 'x').then((r) => r.existed && counts.frames++));
            else if (i % 5 === 4)
              writes.push(
                store
                  .update('s', 'g', 'x', (current) => ({ value: { from: tag, was: current.value }, extra: null }), updateFrame('s', 'g', 'x'))
                  .then(() => counts.frames++),
              );
            else writes.push(put(store, 's', 'g', 'x', tag).then(() => counts.frames++));
          }
          await Promise.all(writes);
          await flush(a, onA, onB);
          expect(onA.length, `round ${round}`).toBe(counts.frames);
          expect(
            onB.map((f) => f.text),
            `round ${round}`,
          ).toEqual(onA.map((f) => f.text));
          // The frames tell a consistent story: create only for a missing item, update only for an existing
          // one, and a delete carries the value the previous frame left.
          let current: { exists: boolean; value: unknown } = { exists: false, value: null };
          for (const [i, f] of onA.entries()) {
            const [type, data] = eventOf(f);
            expect(type, `frame ${i}: ${f.text}`).toBe(type === 'delete' ? 'delete' : current.exists ? 'update' : 'create');
            if (type === 'delete') {
              expect(current.exists, `frame ${i}`).toBe(true);
              expect(data, `frame ${i}`).toEqual(current.value);
              current = { exists: false, value: null };
              continue;
            }
            // An update's new value holds the value it read: the one the previous frame left.
            if (typeof data === 'object' && data !== null && 'was' in data) expect(data.was, `frame ${i}`).toEqual(current.value);
            current = { exists: true, value: data };
          }
          expect(await a.get('s', 'g', 'x'), `round ${round}`).toEqual(current);
        }
      });

      test('sequential writes of one item through two stores reach both stores in the order they were made', async () => {
        const { store: a, got: onA } = await listening();
        const { store: b, got: onB } = await listening();
        const made: string[] = [];
        for (let i = 0; i < 30; i++) {
          // Strictly one after the other: each write has resolved before the next starts.
          const tag = `${i % 2 === 0 ? 'b' : 'a'}${i}`;
          await put(i % 2 === 0 ? b : a, 's', 'g', 'x', tag);
          made.push(tag);
        }
        await flush(a, onA, onB);
        for (const got of [onA, onB]) expect(got.map((f) => eventOf(f)[1])).toEqual(made);
        expect(await b.get('s', 'g', 'x')).toEqual({ exists: true, value: made.at(-1) });
      });
    } else {
      test('a second store opened alongside does not get this one’s frames (one engine only)', async () => {
        const { store: a, got: onA } = await listening();
        if (backend.persistent) {
          // One folder serves one engine; frames never leave the store that published them.
          const f = eventFrame('s', 'g', 'i');
          await a.publish(f);
          expect(onA).toEqual([f]);
          return;
        }
        const { store: b, got: onB } = await listening();
        await put(a, 's', 'g', 'i', 1);
        expect(await b.get('s', 'g', 'i')).toEqual({ exists: false, value: null });
        const f = eventFrame('s', 'g', 'i');
        await a.publish(f);
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(onA.map((x) => eventOf(x)[0])).toEqual(['create', 'event']);
        expect(onB).toEqual([]);
      });
    }

    test('close() resolves, and listeners get nothing afterwards', async () => {
      const { store, got } = await listening();
      await put(store, 's', 'g', 'i', 1);
      await flush(store, got);
      got.length = 0;
      await store.close();
      // publish after close does not hang; when it rejects, it is with store_unavailable.
      const outcome = await within(settled(store.publish(eventFrame('s', 'g', 'i'))), 3000, 'publish after close');
      if (outcome !== undefined) {
        expect(outcome).toBeInstanceOf(FlintError);
        expect((outcome as FlintError).code).toBe('store_unavailable');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(got).toEqual([]);
    });

    if (backend.persistent) {
      test('close() then reopen keeps the items, groups and streams', async () => {
        const first = await open();
        await put(first, 'a:b', 'c', 'kept', { kept: true });
        await put(first, 'a', 'b:c', 'gone', 1);
        await remove(first, 'a', 'b:c', 'gone');
        await first.update('orders', 'g', 'counter', bump, updateFrame('orders', 'g', 'counter'));
        await first.close();
        const second = await open();
        expect(await second.get('a:b', 'c', 'kept')).toEqual({ exists: true, value: { kept: true } });
        expect(await second.get('a', 'b:c', 'gone')).toEqual({ exists: false, value: null });
        expect(await second.get('orders', 'g', 'counter')).toEqual({ exists: true, value: { n: 1 } });
        expect(await second.listAll()).toEqual([
          { stream: 'a:b', groups: ['c'] },
          { stream: 'orders', groups: ['g'] },
        ]);
      });
    } else {
      test('close() then reopen starts empty (not persistent by design)', async () => {
        const first = await open();
        await put(first, 's', 'g', 'i', 1);
        await first.close();
        const second = await open();
        expect(await second.get('s', 'g', 'i')).toEqual({ exists: false, value: null });
        expect(await second.listAll()).toEqual([]);
      });
    }
  });
}

streamContract('kv in_memory', {
  kind: 'in_memory',
  persistent: false,
  shared: false,
  prepare: async () => ({
    open: () => openStream({ name: 'kv', config: { store_method: 'in_memory' } }, tmpdir()),
    cleanup: async () => {},
  }),
});

streamContract('kv file_based', {
  kind: 'file_based',
  persistent: true,
  shared: false,
  prepare: async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'flint-stream-contract-'));
    return {
      // A relative file_path resolves against the config folder.
      open: () => openStream({ name: 'kv', config: { store_method: 'file_based', file_path: 'streams' } }, dir),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  },
});

streamContract(
  'redis',
  {
    kind: 'redis',
    persistent: true,
    shared: true,
    prepare: async () => {
      // Glob characters in the prefix check that listing matches it literally.
      const prefix = `flint-test:stream:${randomUUID()}:[*?]:`;
      return {
        open: () => openStream({ name: 'redis', config: { redis_url: REDIS_URL, key_prefix: prefix } }, tmpdir()),
        cleanup: () => deleteKeysWithPrefix(REDIS_URL, prefix),
      };
    },
  },
  { skip: !runRedis },
);

describe.skipIf(!runRedis)('redis StreamStore layout', () => {
  const prefixes: string[] = [];
  const stores: StreamStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close().catch(() => {});
    for (const prefix of prefixes.splice(0)) await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  test('a group is the hash `<key_prefix><stream>:<group>` (names escaped); each frame is its bare text on `<key_prefix>events`; other prefixes see nothing', async () => {
    const prefix = `flint-test:stream:${randomUUID()}:`;
    const other = `flint-test:stream:${randomUUID()}:`;
    prefixes.push(prefix, other);
    const store = await openStream({ name: 'redis', config: { redis_url: REDIS_URL, key_prefix: prefix } }, tmpdir());
    const elsewhere = await openStream({ name: 'redis', config: { redis_url: REDIS_URL, key_prefix: other } }, tmpdir());
    stores.push(store, elsewhere);
    const seen: StreamFrame[] = [];
    const seenElsewhere: StreamFrame[] = [];
    store.subscribe((f) => seen.push(f));
    elsewhere.subscribe((f) => seenElsewhere.push(f));

    const raw = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
    const listener = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await raw.connect();
      await listener.connect();
      const messages: string[] = [];
      listener.on('message', (_channel: string, message: string) => messages.push(message));
      await listener.subscribe(`${prefix}events`);

      const set = setFrame('a:b', 'c%', 'item', { v: 1 });
      await store.set('a:b', 'c%', 'item', { v: 1 }, set);
      expect(await raw.hget(`${prefix}a%3Ab:c%25`, 'item')).toBe('{"v":1}');
      const update = updateFrame('a:b', 'c%', 'item');
      await store.update('a:b', 'c%', 'item', () => ({ value: { v: 2 }, extra: null }), update);
      const gone = deleteFrame('a:b', 'c%', 'item');
      await store.delete('a:b', 'c%', 'item', gone);
      expect(await raw.exists(`${prefix}a%3Ab:c%25`)).toBe(0);
      const f = eventFrame('a:b', 'c%', null, 'custom');
      await store.publish(f);
      await waitFor(
        () => messages.length === 4 && seen.length === 4,
        3000,
        () => `the 4 frames on the events channel (got ${messages.length})`,
      );
      // Exactly the frame texts, in order: no engine id or other envelope.
      const texts = [`${set.before}create${set.after}`, update(true, { v: 2 }), `${gone.before}{"v":2}${gone.after}`, f.text];
      expect(messages).toEqual(texts);
      expect(seen.map((x) => x.text)).toEqual(texts);
      expect(await elsewhere.listAll()).toEqual([]);
      await flush(elsewhere, seenElsewhere);
      expect(seenElsewhere).toEqual([]);
    } finally {
      raw.disconnect();
      listener.disconnect();
    }
  });

  test('a message on the channel that is not a frame (not JSON, not an object, or without streamName/groupId) is ignored', async () => {
    const prefix = `flint-test:stream:${randomUUID()}:`;
    prefixes.push(prefix);
    const store = await openStream({ name: 'redis', config: { redis_url: REDIS_URL, key_prefix: prefix } }, tmpdir());
    stores.push(store);
    const seen: StreamFrame[] = [];
    store.subscribe((f) => seen.push(f));
    const raw = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await raw.connect();
      for (const junk of ['not json', '{"streamName":"s"}', '{"groupId":"g"}', '[1,2]', '42', '"text"', '{"streamName":1,"groupId":"g"}']) {
        await raw.publish(`${prefix}events`, junk);
      }
      await raw.publish(`${prefix}events`, '{"streamName":"s","groupId":"g"}');
      await flush(store, seen);
      // Only the last one names its stream and group (no id: a group-wide frame).
      expect(seen).toEqual([{ stream: 's', group: 'g', id: null, text: '{"streamName":"s","groupId":"g"}' }]);
    } finally {
      raw.disconnect();
    }
  });

  // Anything may be published on the channel: `null` (which once threw inside ioredis's handler, an
  // uncaught exception) and other JSON that is not an object are ignored.
  test('the message `null` on the channel is ignored like any other non-frame', async () => {
    const prefix = `flint-test:stream:${randomUUID()}:`;
    prefixes.push(prefix);
    const store = await openStream({ name: 'redis', config: { redis_url: REDIS_URL, key_prefix: prefix } }, tmpdir());
    stores.push(store);
    const seen: StreamFrame[] = [];
    store.subscribe((f) => seen.push(f));
    const raw = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await raw.connect();
      for (const junk of ['null', '7', '"text"', '[1]', 'true']) await raw.publish(`${prefix}events`, junk);
      await flush(store, seen);
      expect(seen).toEqual([]);
    } finally {
      raw.disconnect();
    }
  });
});
