/**
 * flint-state's listings for operators (the console's state browser): `state::list_groups` with
 * `counts: true`, and `state::list_entries` (sorted keys with their values, paged, filtered by `match`),
 * called through a real @flint/sdk worker, on the in_memory store and on Redis.
 *
 * The Redis run uses the real server at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379) with a
 * unique key prefix per test (deleted afterwards); without Redis it is skipped with a printed reason, or
 * fails when FLINT_REQUIRE_SERVICES=1.
 */
import { randomUUID } from 'node:crypto';
import { EngineFunctions, type FunctionInfo } from '@flint/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { type TestWorker, startWorker } from '../support/harness.js';
import { deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, serviceAvailable } from '../support/services/services.js';
import { startStateEngine } from '../support/state/helpers.js';
import { outcome, uid } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('state listings on Redis', await serviceAvailable('redis', REDIS_URL));

afterEach(cleanup);

interface Store {
  name: string;
  skip: boolean;
  /** The flint-state config for one test (a fresh, empty store). */
  config(): Record<string, unknown>;
}

const STORES: Store[] = [
  { name: 'in_memory', skip: false, config: () => ({}) },
  {
    name: 'redis',
    skip: !runRedis,
    config: () => {
      const key_prefix = `flint-test:listing:${randomUUID()}:`;
      track(() => deleteKeysWithPrefix(REDIS_URL, key_prefix));
      return { adapter: { name: 'redis', config: { redis_url: REDIS_URL, key_prefix } } };
    },
  },
];

type Entries = { entries: { key: string; value: unknown }[]; total: number };

for (const store of STORES) {
  describe.skipIf(store.skip)(`state listings (${store.name})`, () => {
    /** A worker on a fresh engine whose only module is flint-state on this store. */
    async function start(): Promise<TestWorker> {
      const engine = await startStateEngine(store.config());
      return startWorker('flint', engine);
    }
    // biome-ignore lint/suspicious/noExplicitAny: results are arbitrary JSON
    const call = (worker: TestWorker, function_id: string, payload: unknown): Promise<any> => worker.trigger({ function_id, payload });
    const entries = (worker: TestWorker, payload: Record<string, unknown>): Promise<Entries> => call(worker, 'state::list_entries', payload);
    const keysOf = (page: Entries) => page.entries.map((e) => e.key);

    it('list_groups with counts: true also says how many keys each scope holds; without it, only the groups', async () => {
      const worker = await start();
      expect(await call(worker, 'state::list_groups', { counts: true })).toEqual({ groups: [], counts: {} });
      for (const key of ['a', 'b', 'c']) await call(worker, 'state::set', { scope: 'users', key, value: key });
      await call(worker, 'state::set', { scope: 'orders', key: 'o1', value: { n: 1 } });
      await call(worker, 'state::set', { scope: 'users', key: 'a', value: 'overwritten' }); // not a new key
      await call(worker, 'state::set', { scope: 'nulls', key: 'n', value: null }); // a key holding null counts

      expect(await call(worker, 'state::list_groups', { counts: true })).toEqual({
        groups: ['nulls', 'orders', 'users'],
        counts: { nulls: 1, orders: 1, users: 3 },
      });
      expect(await call(worker, 'state::list_groups', {})).toEqual({ groups: ['nulls', 'orders', 'users'] });
      expect(await call(worker, 'state::list_groups', { counts: false })).toEqual({ groups: ['nulls', 'orders', 'users'] });
      expect(await call(worker, 'state::list_groups', null)).toEqual({ groups: ['nulls', 'orders', 'users'] });

      // A delete lowers the count; a scope's last delete drops it from both.
      await call(worker, 'state::delete', { scope: 'users', key: 'b' });
      await call(worker, 'state::delete', { scope: 'orders', key: 'o1' });
      expect(await call(worker, 'state::list_groups', { counts: true })).toEqual({ groups: ['nulls', 'users'], counts: { nulls: 1, users: 2 } });
    });

    it('list_entries returns keys with their values sorted by key, and the total', async () => {
      const worker = await start();
      const scope = uid('items');
      const values: Record<string, unknown> = { b: { nested: [1, { x: null }] }, a: 1, 'B-upper': 'text', c: null, 'é-accent': true, '10': [], '9': {} };
      for (const [key, value] of Object.entries(values)) await call(worker, 'state::set', { scope, key, value });
      await call(worker, 'state::set', { scope: `${scope}-other`, key: 'a', value: 'another scope' });

      const page = await entries(worker, { scope });
      expect(page.total).toBe(7);
      // Sorted by key in code-unit order: digits, upper case, lower case, then non-ASCII.
      expect(keysOf(page)).toEqual(['10', '9', 'B-upper', 'a', 'b', 'c', 'é-accent']);
      expect(page.entries).toEqual(keysOf(page).map((key) => ({ key, value: values[key] })));

      expect(await entries(worker, { scope: uid('empty') })).toEqual({ entries: [], total: 0 });
    });

    it('list_entries pages with offset and limit (default 100, at most 1000); total counts every match', async () => {
      const worker = await start();
      const scope = uid('paged');
      const keys = Array.from({ length: 150 }, (_, i) => `k${String(i).padStart(3, '0')}`);
      for (const key of keys) await call(worker, 'state::set', { scope, key, value: { key } });

      const first = await entries(worker, { scope });
      expect(first.total).toBe(150);
      expect(keysOf(first)).toEqual(keys.slice(0, 100));
      expect(first.entries[0]).toEqual({ key: 'k000', value: { key: 'k000' } });

      expect(keysOf(await entries(worker, { scope, offset: 100 }))).toEqual(keys.slice(100));
      expect(keysOf(await entries(worker, { scope, offset: 20, limit: 5 }))).toEqual(keys.slice(20, 25));
      expect(keysOf(await entries(worker, { scope, offset: 148, limit: 10 }))).toEqual(['k148', 'k149']);
      expect(await entries(worker, { scope, offset: 150 })).toEqual({ entries: [], total: 150 });
      expect(await entries(worker, { scope, offset: 10_000, limit: 1 })).toEqual({ entries: [], total: 150 });
      const all = await entries(worker, { scope, limit: 1000 });
      expect(keysOf(all)).toEqual(keys);
      expect((await entries(worker, { scope, limit: 1 })).entries).toEqual([{ key: 'k000', value: { key: 'k000' } }]);
    });

    it('list_entries with match keeps the keys containing it (ignoring case); total counts the matches', async () => {
      const worker = await start();
      const scope = uid('matched');
      for (const key of ['user:ada', 'user:bob', 'USER:CY', 'order:1', 'order:2', 'admin-user']) await call(worker, 'state::set', { scope, key, value: key });

      const users = await entries(worker, { scope, match: 'user' });
      expect(users.total).toBe(4);
      expect(keysOf(users)).toEqual(['USER:CY', 'admin-user', 'user:ada', 'user:bob']);
      expect(users.entries.every((e) => e.value === e.key)).toBe(true);

      expect(await entries(worker, { scope, match: 'ORDER:' })).toEqual({
        entries: [
          { key: 'order:1', value: 'order:1' },
          { key: 'order:2', value: 'order:2' },
        ],
        total: 2,
      });
      // A match is a substring, not a pattern.
      expect(await entries(worker, { scope, match: 'user*' })).toEqual({ entries: [], total: 0 });
      expect(await entries(worker, { scope, match: 'nothing' })).toEqual({ entries: [], total: 0 });
      // The empty match keeps every key; paging applies after matching.
      expect((await entries(worker, { scope, match: '' })).total).toBe(6);
      expect(await entries(worker, { scope, match: 'user', offset: 1, limit: 2 })).toEqual({
        entries: [
          { key: 'admin-user', value: 'admin-user' },
          { key: 'user:ada', value: 'user:ada' },
        ],
        total: 4,
      });
    });

    it('bad input is answered with invalid_payload naming the field, and the engine keeps serving', async () => {
      const worker = await start();
      const scope = uid('bad');
      await call(worker, 'state::set', { scope, key: 'k', value: 1 });
      const cases: [payload: unknown, field: RegExp][] = [
        [{}, /scope/],
        [{ scope: '' }, /scope/],
        [{ scope: 5 }, /scope/],
        [{ scope, match: 5 }, /match/],
        [{ scope, match: ['k'] }, /match/],
        [{ scope, limit: 1001 }, /limit/],
        [{ scope, limit: 0 }, /limit/],
        [{ scope, limit: 2.5 }, /limit/],
        [{ scope, limit: '10' }, /limit/],
        [{ scope, offset: -1 }, /offset/],
        [{ scope, offset: 'x' }, /offset/],
        [[scope], /payload/],
        ['scope', /payload/],
      ];
      for (const [payload, field] of cases) {
        const o = await outcome(call(worker, 'state::list_entries', payload));
        expect(o.ok, JSON.stringify(payload)).toBe(false);
        if (o.ok) continue;
        expect(o.error.code, JSON.stringify(payload)).toBe('invalid_payload');
        expect(o.error.message, JSON.stringify(payload)).toMatch(field);
      }
      for (const payload of [{ counts: 'yes' }, { counts: 1 }, 5]) {
        const o = await outcome(call(worker, 'state::list_groups', payload));
        expect(!o.ok && o.error.code, JSON.stringify(payload)).toBe('invalid_payload');
      }
      expect(await entries(worker, { scope, limit: 1000 })).toEqual({ entries: [{ key: 'k', value: 1 }], total: 1 });
    });

    it('discovery: list_entries and list_groups describe their request and response formats', async () => {
      const worker = await start();
      const { functions } = (await call(worker, EngineFunctions.LIST_FUNCTIONS, {})) as { functions: FunctionInfo[] };
      const byId = new Map(functions.map((f) => [f.function_id, f]));
      expect(byId.get('state::list_entries')).toMatchObject({
        description: expect.any(String),
        request_format: { type: 'object', required: ['scope'], properties: { limit: { maximum: 1000 } } },
        response_format: { required: ['entries', 'total'] },
      });
      expect(byId.get('state::list_groups')?.request_format).toMatchObject({ properties: { counts: { type: 'boolean' } } });
    });
  });
}
