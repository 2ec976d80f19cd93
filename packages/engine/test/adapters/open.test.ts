/**
 * Adapters by name, through the public `openAdapter(family, ref, {configDir, logger})`: the reference is
 * looked up in the adapter table, its config validated by that adapter's schema (defaults filled in) and
 * the adapter opened; unknown families, names and bad configs fail with a FlintError naming what is known
 * and never echoing config values. What the instance reports goes to the logger it was given.
 */
import { randomUUID } from 'node:crypto';
import { appendFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { type KvStore, createLogger, openAdapter } from '@flint/engine';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, serviceAvailable } from '../support/services/services.js';
import { rejectsWith } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('Redis tests', await serviceAvailable('redis', REDIS_URL));

let configDir: string;
const stores: KvStore[] = [];

beforeAll(async () => {
  configDir = await mkdtemp(path.join(tmpdir(), 'flint-adapters-open-'));
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});
afterAll(async () => {
  await rm(configDir, { recursive: true, force: true });
});

async function openKv(ref: unknown, logger?: ReturnType<typeof createLogger>): Promise<KvStore> {
  const store = await openAdapter('kv', ref, logger ? { configDir, logger } : { configDir });
  stores.push(store);
  return store;
}

/** Expects `promise` to reject with a FlintError `internal_error`; returns its message. */
async function invalid(promise: Promise<unknown>): Promise<string> {
  return (await rejectsWith(promise, 'internal_error')).message;
}

describe('openAdapter', () => {
  test('opens the kv adapter with its defaults (in memory) when the reference has no config', async () => {
    const store = await openKv({ name: 'kv' });
    expect(store.kind).toBe('in_memory');
    await store.set('s', 'k', 1);
    expect(await store.get('s', 'k')).toEqual({ exists: true, value: 1 });
  });

  test('file_based: a relative file_path resolves against configDir', async () => {
    const ref = { name: 'kv', config: { store_method: 'file_based', file_path: 'state/one' } };
    const store = await openKv(ref);
    expect(store.kind).toBe('file_based');
    await store.set('s', 'k', { kept: true });
    await store.close();
    expect(await readdir(path.join(configDir, 'state', 'one'))).toContain('log-00000000.jsonl');
    const again = await openKv(ref);
    expect(await again.get('s', 'k')).toEqual({ exists: true, value: { kept: true } });
  });

  test('warnings of the instance go to the logger it was given (a torn record cut off while opening)', async () => {
    const dir = path.join(configDir, 'state', 'torn');
    const first = await openKv({ name: 'kv', config: { store_method: 'file_based', file_path: dir } });
    await first.set('s', 'k', 1);
    await first.close();
    await appendFile(path.join(dir, 'log-00000000.jsonl'), '0123abcd {"o":"s","s":"s","k":"torn"');
    const lines: Array<{ level: number; msg: string }> = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const logger = createLogger({ format: 'json', destination });
    const store = await openKv({ name: 'kv', config: { store_method: 'file_based', file_path: dir } }, logger);
    expect(await store.get('s', 'k')).toEqual({ exists: true, value: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    const warning = lines.find((line) => line.msg.includes('cut off'));
    expect(warning?.level).toBe(40);
    expect(warning?.msg).toContain(path.join(dir, 'log-00000000.jsonl'));
  });

  test('an unknown adapter name fails with internal_error listing the family’s adapters', async () => {
    const message = await invalid(openKv({ name: 'memcached', config: {} }));
    expect(message).toContain('unknown kv adapter "memcached"');
    expect(message).toContain('known: kv, redis');
  });

  test('an unknown family fails with internal_error listing the known families', async () => {
    const message = await invalid(openAdapter('blob' as 'kv', { name: 'redis' }, { configDir }));
    expect(message).toContain('unknown adapter family "blob"');
    expect(message).toContain('known: kv, queue, lock, stream');
  });

  test('a reference that is not {name, config}, or a config the adapter’s schema rejects, fails with every problem and no config values', async () => {
    expect(await invalid(openKv('redis'))).toContain('expected {name, config}');
    expect(await invalid(openKv({ config: {} }))).toContain('name: expected the name of a kv adapter (known: kv, redis, bridge)');
    const message = await invalid(openKv({ name: 'redis', config: { redis_url: 6379, pasword: 'hunter2' }, extra: true }));
    expect(message).toContain('config.redis_url:');
    expect(message).toContain('pasword');
    expect(message).toContain('extra: unknown key');
    expect(message).not.toContain('hunter2');
    expect(await invalid(openKv({ name: 'kv', config: { store_method: 'on_disk' } }))).toContain('config.store_method:');
  });
});

describe.skipIf(!runRedis)('openAdapter: redis', () => {
  const prefix = `flint-test:${randomUUID()}:`;
  afterAll(async () => {
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  test('opens the redis kv adapter named by the reference', async () => {
    const store = await openKv({ name: 'redis', config: { redis_url: REDIS_URL, key_prefix: prefix } });
    expect(store.kind).toBe('redis');
    await store.set('s', 'k', 'v');
    expect(await store.listGroups()).toEqual(['s']);
  });
});
