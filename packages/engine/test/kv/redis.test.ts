/**
 * What the `redis` KvStore promises beyond the shared contract: engines sharing one Redis share state,
 * `update` is atomic across clients, and a Redis outage makes calls fail fast with store_unavailable and
 * recovers by itself.
 *
 * Uses the real Redis at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379) and, for the outage tests, a
 * throw-away `redis-server` child process on a free port. Missing either: skipped with a printed reason, or a
 * failure when FLINT_REQUIRE_SERVICES=1.
 */
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { type KvStore, openAdapter } from '@flint/engine';
import type { FlintError } from '@flint/protocol';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { SpareRedisServer, deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, programAvailable, serviceAvailable } from '../support/services/services.js';
import { freePort, rejectsWith } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('Redis tests', await serviceAvailable('redis', REDIS_URL));
const runOutage = gateService('Redis outage tests', programAvailable('redis-server'));

function openRedis(config: { redis_url: string; key_prefix: string; command_timeout_ms?: number }): Promise<KvStore> {
  return openAdapter('kv', { name: 'redis', config }, { configDir: tmpdir() });
}

/** Awaits `promise`, expecting a store_unavailable rejection; returns the error and how long it took. */
async function expectUnavailable(promise: Promise<unknown>): Promise<{ error: FlintError; ms: number }> {
  const started = Date.now();
  const error = await rejectsWith(promise, 'store_unavailable');
  const ms = Date.now() - started;
  return { error, ms };
}

const counter = (current: { exists: boolean; value: unknown }) => {
  const before = current.exists ? (current.value as number) : 0;
  return { value: before + 1, extra: before };
};

describe.skipIf(!runRedis)('redis KvStore on a shared Redis', () => {
  const prefixes: string[] = [];
  const stores: KvStore[] = [];
  const newPrefix = (tag = ''): string => {
    const prefix = `flint-test:${randomUUID()}:${tag}`;
    prefixes.push(prefix);
    return prefix;
  };
  const open = async (prefix: string): Promise<KvStore> => {
    const store = await openRedis({ redis_url: REDIS_URL, key_prefix: prefix });
    stores.push(store);
    return store;
  };

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const prefix of prefixes.splice(0)) await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  test('two stores (two clients, as two engines) see each other’s writes', async () => {
    const prefix = newPrefix();
    const a = await open(prefix);
    const b = await open(prefix);
    expect(a.kind).toBe('redis');
    await a.set('orders', 'o1', { total: 10 });
    expect(await b.get('orders', 'o1')).toEqual({ exists: true, value: { total: 10 } });
    expect(await b.set('orders', 'o1', { total: 11 })).toEqual({ existed: true, old_value: { total: 10 } });
    expect(await a.update('orders', 'o1', (c) => ({ value: { total: (c.value as { total: number }).total + 1 }, extra: null }))).toMatchObject({
      old_value: { total: 11 },
      new_value: { total: 12 },
    });
    await b.set('users', 'u1', 'ann');
    expect(await a.listGroups()).toEqual(['orders', 'users']);
    expect(await a.list('users')).toEqual(['ann']);
    expect(await b.delete('orders', 'o1')).toEqual({ existed: true, old_value: { total: 12 } });
    expect(await a.get('orders', 'o1')).toEqual({ exists: false, value: null });
    expect(await a.listGroups()).toEqual(['users']);
  });

  test('200 concurrent updates of one counter from two clients end at exactly 200', async () => {
    const prefix = newPrefix();
    const a = await open(prefix);
    const b = await open(prefix);
    const calls = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).update('counters', 'hits', counter));
    const results = await Promise.all(calls);
    expect(await a.get('counters', 'hits')).toEqual({ exists: true, value: 200 });
    // Each update saw a distinct value 0…199: none lost, none applied twice.
    expect(results.map((r) => r.extra).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    // Plain sets of other keys in the same scope do not disturb updates.
    const mixed = await Promise.all([
      ...Array.from({ length: 50 }, (_, i) => a.set('counters', `other-${i}`, i)),
      ...Array.from({ length: 50 }, () => b.update('counters', 'hits', counter)),
    ]);
    expect(mixed).toHaveLength(100);
    expect(await b.get('counters', 'hits')).toEqual({ exists: true, value: 250 });
  });

  test('an update starts from what the field holds now, also after another client changed or deleted it since this store wrote it', async () => {
    const prefix = newPrefix();
    const a = await open(prefix);
    const b = await open(prefix);
    const append = (tag: string) => (c: { exists: boolean; value: unknown }) => ({
      value: [...((c.value as string[] | null) ?? []), tag],
      extra: c.exists,
    });
    await a.update('log', 'k', append('a1'));
    await b.update('log', 'k', append('b1'));
    // `a` last wrote ['a1']; the field now holds ['a1', 'b1'].
    expect(await a.update('log', 'k', append('a2'))).toEqual({ existed: true, old_value: ['a1', 'b1'], new_value: ['a1', 'b1', 'a2'], extra: true });
    const raw = new Redis(REDIS_URL);
    try {
      await raw.hdel(`${prefix}log`, 'k');
      expect(await a.update('log', 'k', append('a3'))).toEqual({ existed: false, old_value: null, new_value: ['a3'], extra: false });
      await raw.hset(`${prefix}log`, 'k', '["from elsewhere"]');
      expect(await a.update('log', 'k', append('a4'))).toMatchObject({ old_value: ['from elsewhere'], new_value: ['from elsewhere', 'a4'] });
    } finally {
      await raw.quit();
    }
    expect(await b.get('log', 'k')).toEqual({ exists: true, value: ['from elsewhere', 'a4'] });
  });

  test('layout: one hash per scope under key_prefix, field = key, value = JSON text', async () => {
    const prefix = newPrefix();
    const store = await open(prefix);
    await store.set('scope one', 'k', { a: [1, null] });
    await store.set('scope one', 'n', null);
    const raw = new Redis(REDIS_URL);
    try {
      expect(await raw.type(`${prefix}scope one`)).toBe('hash');
      expect(await raw.hgetall(`${prefix}scope one`)).toEqual({ k: '{"a":[1,null]}', n: 'null' });
      // A value written by another program in the same layout is read back.
      await raw.hset(`${prefix}scope two`, 'x', '"from elsewhere"');
      expect(await store.get('scope two', 'x')).toEqual({ exists: true, value: 'from elsewhere' });
      // The hash disappears with its last field.
      await store.delete('scope two', 'x');
      expect(await raw.exists(`${prefix}scope two`)).toBe(0);
    } finally {
      await raw.quit();
    }
  });

  test('listGroups matches the key prefix literally, even with glob characters in it', async () => {
    const base = newPrefix();
    // Unescaped, the pattern `…[ab]:*` would match the second store's keys and not its own.
    const globby = await open(`${base}[ab]:`);
    const plain = await open(`${base}a:`);
    const star = await open(`${base}*\\?:`);
    await globby.set('g-scope', 'k', 1);
    await plain.set('p-scope', 'k', 1);
    await star.set('s-scope', 'k', 1);
    expect(await globby.listGroups()).toEqual(['g-scope']);
    expect(await plain.listGroups()).toEqual(['p-scope']);
    expect(await star.listGroups()).toEqual(['s-scope']);
  });

  test('a closed store rejects calls with store_unavailable', async () => {
    const store = await open(newPrefix());
    await store.close();
    const { error } = await expectUnavailable(store.get('s', 'k'));
    expect(error.message).toMatch(/closed/);
  });
});

describe('redis KvStore start-up failures', () => {
  test('opening on a port where nothing listens rejects with store_unavailable in bounded time; passwords are redacted', async () => {
    const deadPort = await freePort();
    const [plain, withPassword] = await Promise.all([
      expectUnavailable(openRedis({ redis_url: `redis://127.0.0.1:${deadPort}`, key_prefix: 'flint-test:' })),
      expectUnavailable(openRedis({ redis_url: `redis://user:secret@127.0.0.1:${deadPort}`, key_prefix: 'flint-test:' })),
    ]);
    for (const { error, ms } of [plain, withPassword]) {
      expect(ms).toBeLessThan(7000);
      expect(error.message).toContain(`127.0.0.1:${deadPort}`);
      expect(error.message).toMatch(/ECONNREFUSED/);
    }
    expect(withPassword.error.message).not.toContain('secret');
    expect(withPassword.error.message).toContain('user:***@');
  });
});

describe.skipIf(!runOutage)('redis KvStore while Redis is down', () => {
  let server: SpareRedisServer;
  const stores: KvStore[] = [];

  beforeAll(async () => {
    server = await SpareRedisServer.start('secret');
  });

  afterAll(async () => {
    for (const store of stores.splice(0)) await store.close();
    await server?.stop();
  });

  test('a wrong password fails at once with store_unavailable, without the password in the message', async () => {
    const { error, ms } = await expectUnavailable(openRedis({ redis_url: `redis://:wrong-pw-123@127.0.0.1:${server.port}`, key_prefix: 'p:' }));
    expect(ms).toBeLessThan(2000);
    expect(error.message).toMatch(/WRONGPASS|NOAUTH|invalid/i);
    expect(error.message).not.toContain('wrong-pw-123');
  });

  test('calls fail fast with store_unavailable while Redis hangs or is gone, and succeed again once it is back', async () => {
    // command_timeout_ms: the default (2000).
    const store = await openRedis({ redis_url: server.url, key_prefix: 'flint-test:' });
    stores.push(store);
    await store.set('s', 'k', 1);
    const allOps = () => [
      store.get('s', 'k'),
      store.set('s', 'k', 2),
      store.update('s', 'k', counter),
      store.list('s'),
      store.delete('s', 'other'),
      store.listGroups(),
    ];

    // 1. Hung server (SIGSTOP): the connection stays open but nothing answers → the command time-out.
    server.pause();
    try {
      const hung = await Promise.all(allOps().map(expectUnavailable));
      for (const { error, ms } of hung) {
        expect(ms).toBeLessThan(2500);
        expect(error.message).toMatch(/no answer within 2000 ms/);
        expect(error.message).not.toContain(server.password);
      }
    } finally {
      server.resume();
    }
    // The hung connection was dropped; the store reconnects by itself once the server answers again.
    const recoverBy = Date.now() + 5000;
    let recovered: boolean | undefined;
    while (recovered === undefined) {
      try {
        recovered = (await store.get('s', 'k')).exists;
      } catch (err) {
        if (Date.now() > recoverBy) throw err;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(recovered).toBe(true);

    // 2. Crashed server (SIGKILL): refused connections → immediate failures, not waits.
    await server.kill();
    for (let round = 0; round < 3; round++) {
      const down = await Promise.all(allOps().map(expectUnavailable));
      for (const { error, ms } of down) {
        expect(ms).toBeLessThan(2500);
        expect(error.message).toContain(`127.0.0.1:${server.port}`);
        expect(error.message).not.toContain(server.password);
        expect(error.message).toContain(':***@');
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    }

    // 3. Redis is back (empty: it had no persistence): the same store recovers without reopening.
    await server.restart();
    const deadline = Date.now() + 6000;
    for (;;) {
      try {
        await store.set('s', 'k', 'after restart');
        break;
      } catch (err) {
        expect((err as FlintError).code).toBe('store_unavailable');
        if (Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect(await store.get('s', 'k')).toEqual({ exists: true, value: 'after restart' });
    // The scripts are re-sent to the new server (EVALSHA → NOSCRIPT → EVAL).
    expect(await store.delete('s', 'k')).toEqual({ existed: true, old_value: 'after restart' });
    expect(await store.update('s', 'c', counter)).toMatchObject({ existed: false, new_value: 1 });
    expect(await store.listGroups()).toEqual(['s']);
  });
});
