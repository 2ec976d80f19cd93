/**
 * The KvStore contract (design.md §7: one contract suite per adapter interface, run against every
 * implementation), through the public `openAdapter`: in_memory, file_based and redis.
 *
 * The redis run uses the real server at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379) with a unique
 * key prefix per test, and deletes its keys afterwards. Without a reachable Redis that run is skipped with a
 * printed reason, or fails when FLINT_REQUIRE_SERVICES=1.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type KvStore, openAdapter } from '@flint/engine';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, serviceAvailable } from '../support/services/services.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('Redis tests', await serviceAvailable('redis', REDIS_URL));

/** One test's place to keep data: `open()` may be called again (after close) to reopen the same data. */
interface Location {
  open(): Promise<KvStore>;
  cleanup(): Promise<void>;
}

interface Backend {
  /** Whether data survives close() and reopening. */
  persistent: boolean;
  /** Prepares a fresh, empty location for one test. */
  prepare(): Promise<Location>;
}

function openConfig(input: unknown, configDir: string): Promise<KvStore> {
  return openAdapter('kv', input, { configDir });
}

const counter = (current: { exists: boolean; value: unknown }) => {
  const before = current.exists ? (current.value as number) : 0;
  return { value: before + 1, extra: { before } };
};

/** Values of every JSON type; each must come back deep-equal. */
const JSON_VALUES: Record<string, unknown> = {
  zero: 0,
  integer: 42,
  negative: -17,
  float: 0.1 + 0.2,
  huge: 1e300,
  tiny: 5e-324,
  true: true,
  false: false,
  empty_string: '',
  string: 'hello',
  unicode: 'ünïcödé – 日本語 – 🚀👩‍👩‍👧 – \u0000\u001f – "quotes" \\ back\\slash \n new line',
  empty_array: [],
  array: [1, 'two', null, true, { three: [3] }, [[[]]]],
  empty_object: {},
  object: { a: 1, b: 'x', c: null, d: [1, 2], e: { f: { g: { h: 'deep' } } }, 'key with spaces': 1, '🔑': 'emoji key' },
  large_string: 'abcdé€🚀'.repeat((512 * 1024) / 8), // 8 UTF-16 units per repetition
};

function kvContract(name: string, backend: Backend, options: { skip?: boolean } = {}): void {
  describe.skipIf(options.skip ?? false)(`KvStore contract: ${name}`, () => {
    let location: Location;
    const opened: KvStore[] = [];
    const open = async (): Promise<KvStore> => {
      const store = await location.open();
      opened.push(store);
      return store;
    };

    beforeEach(async () => {
      location = await backend.prepare();
    });

    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close().catch(() => {});
      await location.cleanup();
    });

    test('get of a missing key reports exists:false and value null', async () => {
      const store = await open();
      expect(await store.get('scope', 'missing')).toEqual({ exists: false, value: null });
      expect(await store.get('no-such-scope', 'missing')).toEqual({ exists: false, value: null });
    });

    test('set reports whether the key existed and its previous value', async () => {
      const store = await open();
      expect(await store.set('scope', 'k', { v: 1 })).toEqual({ existed: false, old_value: null });
      expect(await store.set('scope', 'k', { v: 2 })).toEqual({ existed: true, old_value: { v: 1 } });
      expect(await store.get('scope', 'k')).toEqual({ exists: true, value: { v: 2 } });
    });

    test('null is a value: a key holding null exists', async () => {
      const store = await open();
      expect(await store.set('scope', 'n', null)).toEqual({ existed: false, old_value: null });
      expect(await store.get('scope', 'n')).toEqual({ exists: true, value: null });
      expect(await store.set('scope', 'n', 1)).toEqual({ existed: true, old_value: null });
      expect(await store.set('scope', 'n', null)).toEqual({ existed: true, old_value: 1 });
      expect(await store.list('scope')).toEqual([null]);
      expect(await store.listGroups()).toEqual(['scope']);
      expect(await store.delete('scope', 'n')).toEqual({ existed: true, old_value: null });
      expect(await store.get('scope', 'n')).toEqual({ exists: false, value: null });
    });

    test('delete returns the old value; deleting a missing key reports existed:false', async () => {
      const store = await open();
      await store.set('scope', 'k', ['old']);
      expect(await store.delete('scope', 'k')).toEqual({ existed: true, old_value: ['old'] });
      expect(await store.get('scope', 'k')).toEqual({ exists: false, value: null });
      expect(await store.delete('scope', 'k')).toEqual({ existed: false, old_value: null });
      expect(await store.delete('never-existed', 'k')).toEqual({ existed: false, old_value: null });
    });

    test('values of every JSON type round-trip (nested, unicode, 512 KiB strings)', async () => {
      const store = await open();
      for (const [key, value] of Object.entries(JSON_VALUES)) {
        expect(await store.set('types', key, value)).toEqual({ existed: false, old_value: null });
      }
      for (const [key, value] of Object.entries(JSON_VALUES)) {
        expect(await store.get('types', key), key).toEqual({ exists: true, value });
        // The previous value comes back intact from a write too.
        expect(await store.set('types', key, 'replaced'), key).toEqual({ existed: true, old_value: value });
        expect(await store.delete('types', key), key).toEqual({ existed: true, old_value: 'replaced' });
      }
      const big = JSON_VALUES.large_string as string;
      expect(big.length).toBe(512 * 1024);
      const updated = await store.update('types', 'big', (current) => ({ value: `${current.exists}${big}`, extra: null }));
      expect(updated.new_value).toBe(`false${big}`);
      expect(await store.get('types', 'big')).toEqual({ exists: true, value: `false${big}` });
    });

    test('scope and key strings with unicode, spaces, ":" and glob characters', async () => {
      const store = await open();
      const scopes = ['plain', 'with space', 'a:b:c', 'star*', 'q?[x]\\y^', 'ünï 日本 🚀', ':', '*'];
      const keys = ['k', 'key with space', 'x:y', '*', '?', '[a-z]', 'back\\slash', 'ключ 🔑', ''];
      for (const scope of scopes) for (const key of keys) await store.set(scope, key, { scope, key });
      for (const scope of scopes) {
        for (const key of keys) expect(await store.get(scope, key)).toEqual({ exists: true, value: { scope, key } });
        const values = (await store.list(scope)) as Array<{ scope: string; key: string }>;
        expect(values.map((v) => v.key).sort()).toEqual([...keys].sort());
        expect(values.every((v) => v.scope === scope)).toBe(true);
      }
      expect(await store.listGroups()).toEqual([...scopes].sort());
      // A scope named like a glob pattern is not a pattern.
      expect(await store.get('star', 'k')).toEqual({ exists: false, value: null });
      expect(await store.list('st*')).toEqual([]);
    });

    test('update on a missing key sees exists:false and creates it', async () => {
      const store = await open();
      const seen: unknown[] = [];
      const result = await store.update('scope', 'fresh', (current) => {
        seen.push(current);
        return { value: { created: true }, extra: 'made' };
      });
      expect(seen.at(-1)).toEqual({ exists: false, value: null });
      expect(result).toEqual({ existed: false, old_value: null, new_value: { created: true }, extra: 'made' });
      expect(await store.get('scope', 'fresh')).toEqual({ exists: true, value: { created: true } });
      expect(await store.listGroups()).toEqual(['scope']);
    });

    test('update returns old value, new value and the extra', async () => {
      const store = await open();
      await store.set('scope', 'k', { n: 1, tags: ['a'] });
      const result = await store.update('scope', 'k', (current) => {
        const old = current.value as { n: number; tags: string[] };
        return { value: { n: old.n + 1, tags: [...old.tags, 'b'] }, extra: { errors: [] as string[], saw: current.exists } };
      });
      expect(result).toEqual({ existed: true, old_value: { n: 1, tags: ['a'] }, new_value: { n: 2, tags: ['a', 'b'] }, extra: { errors: [], saw: true } });
      expect(await store.get('scope', 'k')).toEqual({ exists: true, value: { n: 2, tags: ['a', 'b'] } });
      // A key holding null is seen as existing.
      await store.set('scope', 'nul', null);
      const onNull = await store.update('scope', 'nul', (current) => ({ value: current, extra: null }));
      expect(onNull).toMatchObject({ existed: true, old_value: null, new_value: { exists: true, value: null } });
    });

    test('an updater that throws rejects the update and changes nothing', async () => {
      const store = await open();
      await store.set('scope', 'k', 1);
      await expect(
        store.update('scope', 'k', () => {
          throw new Error('updater failed');
        }),
      ).rejects.toThrow('updater failed');
      expect(await store.get('scope', 'k')).toEqual({ exists: true, value: 1 });
      // Later updates of the same key are not blocked by the failed one.
      expect((await store.update('scope', 'k', counter)).new_value).toBe(2);
    });

    test('100 concurrent updates of one key are serialised', async () => {
      const store = await open();
      const results = await Promise.all(Array.from({ length: 100 }, () => store.update('scope', 'counter', counter)));
      expect(await store.get('scope', 'counter')).toEqual({ exists: true, value: 100 });
      // Every update saw a different value: none was lost or applied twice.
      expect(results.map((r) => r.extra.before).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    });

    test('list returns the values of a scope and [] for an unknown scope', async () => {
      const store = await open();
      await store.set('a', 'x', 1);
      await store.set('a', 'y', { two: 2 });
      await store.set('a', 'z', null);
      await store.set('b', 'x', 'other scope');
      const values = await store.list('a');
      expect(values).toHaveLength(3);
      expect(values).toEqual(expect.arrayContaining([1, { two: 2 }, null]));
      expect(await store.list('unknown')).toEqual([]);
    });

    test('listGroups lists the scopes holding keys, sorted, and drops a scope with its last key', async () => {
      const store = await open();
      expect(await store.listGroups()).toEqual([]);
      await store.set('zeta', 'k', 1);
      await store.set('alpha', 'k1', 1);
      await store.set('alpha', 'k2', 2);
      await store.set('mid', 'k', 1);
      await store.delete('never', 'k');
      expect(await store.listGroups()).toEqual(['alpha', 'mid', 'zeta']);
      await store.delete('alpha', 'k1');
      expect(await store.listGroups()).toEqual(['alpha', 'mid', 'zeta']);
      await store.delete('alpha', 'k2');
      expect(await store.listGroups()).toEqual(['mid', 'zeta']);
      expect(await store.list('alpha')).toEqual([]);
      await store.delete('mid', 'k');
      await store.delete('zeta', 'k');
      expect(await store.listGroups()).toEqual([]);
    });

    test('entries and size of an unknown or empty scope: [] and 0', async () => {
      const store = await open();
      expect(await store.entries('unknown')).toEqual([]);
      expect(await store.size('unknown')).toBe(0);
      await store.set('emptied', 'k', 1);
      await store.delete('emptied', 'k');
      expect(await store.entries('emptied')).toEqual([]);
      expect(await store.size('emptied')).toBe(0);
    });

    test('entries and size follow set and delete, and include no other scope', async () => {
      const store = await open();
      await store.set('a', 'x', 1);
      await store.set('a', 'y', { two: 2 });
      await store.set('a', 'z', null);
      await store.set('b', 'x', 'other scope');
      await store.set('ab', 'w', 'prefix of no scope');
      const sorted = async (scope: string) => (await store.entries(scope)).sort(([k1], [k2]) => (k1 < k2 ? -1 : 1));
      expect(await sorted('a')).toEqual([
        ['x', 1],
        ['y', { two: 2 }],
        ['z', null],
      ]);
      expect(await store.size('a')).toBe(3);
      expect(await store.entries('b')).toEqual([['x', 'other scope']]);
      expect(await store.size('b')).toBe(1);

      // An overwrite is no new key; an update creating one is; a delete takes one away.
      await store.set('a', 'x', 'replaced');
      await store.update('a', 'fresh', counter);
      await store.delete('a', 'y');
      await store.delete('a', 'missing');
      expect(await sorted('a')).toEqual([
        ['fresh', 1],
        ['x', 'replaced'],
        ['z', null],
      ]);
      expect(await store.size('a')).toBe(3);
      expect(await store.size('b')).toBe(1);
      expect(await store.size('ab')).toBe(1);
    });

    test('entries round-trip values of every JSON type with their keys (unicode and glob characters too)', async () => {
      const store = await open();
      for (const [key, value] of Object.entries(JSON_VALUES)) await store.set('types', key, value);
      const odd = ['key with space', 'x:y', '*', '?', '[a-z]', 'back\\slash', 'ключ 🔑', ''];
      for (const key of odd) await store.set('q?[x]*', key, { key });
      expect(new Map(await store.entries('types'))).toEqual(new Map(Object.entries(JSON_VALUES)));
      expect(await store.size('types')).toBe(Object.keys(JSON_VALUES).length);
      expect(new Map(await store.entries('q?[x]*'))).toEqual(new Map(odd.map((key) => [key, { key }])));
      expect(await store.size('q?[x]*')).toBe(odd.length);
      // A scope named like a glob pattern is not a pattern.
      expect(await store.entries('q*')).toEqual([]);
      expect(await store.size('q*')).toBe(0);
    });

    if (backend.persistent) {
      test('close() then reopen keeps the data', async () => {
        const first = await open();
        await first.set('scope', 'k', { kept: true });
        await first.set('scope', 'gone', 1);
        await first.delete('scope', 'gone');
        await first.update('other', 'c', counter);
        await first.close();
        const second = await open();
        expect(await second.get('scope', 'k')).toEqual({ exists: true, value: { kept: true } });
        expect(await second.get('scope', 'gone')).toEqual({ exists: false, value: null });
        expect(await second.get('other', 'c')).toEqual({ exists: true, value: 1 });
        expect(await second.listGroups()).toEqual(['other', 'scope']);
        expect(await second.entries('scope')).toEqual([['k', { kept: true }]]);
        expect(await second.size('other')).toBe(1);
      });
    } else {
      test('close() then reopen starts empty (not persistent by design)', async () => {
        const first = await open();
        await first.set('scope', 'k', 1);
        await first.close();
        const second = await open();
        expect(await second.get('scope', 'k')).toEqual({ exists: false, value: null });
        expect(await second.listGroups()).toEqual([]);
        expect(await second.size('scope')).toBe(0);
      });
    }
  });
}

kvContract('kv in_memory', {
  persistent: false,
  prepare: async () => ({
    open: () => openConfig({ name: 'kv', config: { store_method: 'in_memory' } }, tmpdir()),
    cleanup: async () => {},
  }),
});

kvContract('kv file_based', {
  persistent: true,
  prepare: async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'flint-kv-contract-'));
    return {
      open: () => openConfig({ name: 'kv', config: { store_method: 'file_based', file_path: path.join(dir, 'state') } }, dir),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  },
});

kvContract(
  'redis',
  {
    persistent: true,
    prepare: async () => {
      // Glob characters in the prefix check that listGroups matches it literally.
      const prefix = `flint-test:${randomUUID()}:[*?]:`;
      return {
        open: () => openConfig({ name: 'redis', config: { redis_url: REDIS_URL, key_prefix: prefix } }, tmpdir()),
        cleanup: () => deleteKeysWithPrefix(REDIS_URL, prefix),
      };
    },
  },
  { skip: !runRedis },
);
