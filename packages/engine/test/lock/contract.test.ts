/**
 * The LockBackend contract through the public `openAdapter`: memory and redis (the real server at
 * FLINT_TEST_REDIS_URL, a unique prefix per test, keys deleted afterwards; skipped with a printed reason
 * without Redis, or failing when FLINT_REQUIRE_SERVICES=1).
 */
import { randomUUID } from 'node:crypto';
import { type LockBackend, openAdapter } from '@flint/engine';
import { afterEach, describe, expect, test } from 'vitest';
import { deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, serviceAvailable } from '../support/services/services.js';
import { sleep } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('Redis lock tests', await serviceAvailable('redis', REDIS_URL));

const open: LockBackend[] = [];
const prefixes: string[] = [];
afterEach(async () => {
  for (const lock of open.splice(0)) await lock.close();
  for (const prefix of prefixes.splice(0)) await deleteKeysWithPrefix(REDIS_URL, prefix);
});

async function openLock(ref: unknown): Promise<LockBackend> {
  const lock = await openAdapter('lock', ref, { configDir: process.cwd() });
  open.push(lock);
  return lock;
}

const BACKENDS = [
  { name: 'memory', shared: false, run: true, open: () => openLock({ name: 'memory' }) },
  {
    name: 'redis',
    shared: true,
    run: runRedis,
    open: () => {
      const prefix = `flint-test:${randomUUID()}:`;
      prefixes.push(prefix);
      return openLock({ name: 'redis', config: { redis_url: REDIS_URL, prefix } });
    },
  },
];

describe.each(BACKENDS.filter((b) => b.run))('lock adapter $name', (backend) => {
  test('one owner at a time; only the owner releases; a released lock can be taken again', async () => {
    const lock = await backend.open();
    expect(lock.kind).toBe(backend.name);
    expect(lock.shared).toBe(backend.shared);
    expect(await lock.acquire('job:1', 'a', 10_000)).toBe(true);
    expect(await lock.acquire('job:1', 'b', 10_000)).toBe(false);
    expect(await lock.acquire('job:1', 'a', 10_000)).toBe(false);
    expect(await lock.acquire('job:2', 'b', 10_000)).toBe(true);
    expect(await lock.release('job:1', 'b')).toBe(false);
    expect(await lock.acquire('job:1', 'b', 10_000)).toBe(false);
    expect(await lock.release('job:1', 'a')).toBe(true);
    expect(await lock.release('job:1', 'a')).toBe(false);
    expect(await lock.acquire('job:1', 'b', 10_000)).toBe(true);
  });

  test('a lock expires after its ttl: another owner takes it, and the old owner can no longer release it', async () => {
    const lock = await backend.open();
    expect(await lock.acquire('slot', 'a', 150)).toBe(true);
    await sleep(300);
    expect(await lock.acquire('slot', 'b', 10_000)).toBe(true);
    expect(await lock.release('slot', 'a')).toBe(false);
    expect(await lock.acquire('slot', 'a', 10_000)).toBe(false);
  });
});

describe.skipIf(!runRedis)('redis lock across instances', () => {
  test('two instances on one prefix see each other’s locks; another prefix does not', async () => {
    const prefix = `flint-test:${randomUUID()}:`;
    prefixes.push(prefix);
    const a = await openLock({ name: 'redis', config: { redis_url: REDIS_URL, prefix } });
    const b = await openLock({ name: 'redis', config: { redis_url: REDIS_URL, prefix } });
    const other = await openLock({ name: 'redis', config: { redis_url: REDIS_URL, prefix: `${prefix}other:` } });
    expect(await a.acquire('k', 'engine-a', 10_000)).toBe(true);
    expect(await b.acquire('k', 'engine-b', 10_000)).toBe(false);
    expect(await other.acquire('k', 'engine-b', 10_000)).toBe(true);
  });
});

test('a redis lock whose server is not there fails to open with store_unavailable, the password redacted', async () => {
  const err = await openLock({ name: 'redis', config: { redis_url: 'redis://:s3cret@127.0.0.1:1', connect_timeout_ms: 500 } }).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'store_unavailable' });
  expect(String((err as Error).message)).toContain('127.0.0.1:1');
  expect(String((err as Error).message)).not.toContain('s3cret');
});

test('an unknown lock adapter or key is refused', async () => {
  await expect(openLock({ name: 'zookeeper' })).rejects.toThrow(/zookeeper/);
  await expect(openLock({ name: 'memory', config: { ttl: 1 } })).rejects.toThrow(/ttl/);
});
