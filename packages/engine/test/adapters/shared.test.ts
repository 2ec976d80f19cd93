/**
 * The infrastructure every adapter family shares (src/adapters/shared/), where the kv store tests do not
 * already cover it through the stores: URL redaction and password scrubbing, SCAN pattern escaping, the
 * Redis connection's own behaviour (its name, error mapping, lost / restored logging) and the file helpers.
 *
 * These helpers are not part of the package's public entry, so this file imports the built modules
 * (dist/, the same copies `@flint/engine` loads; run `npx tsc -b` first). Redis runs use the real server
 * at FLINT_TEST_REDIS_URL (skipped with a printed reason when absent, a failure with FLINT_REQUIRE_SERVICES=1).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, open as openFile, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FlintError } from '@flint/protocol';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { describeError, errnoCode, fsyncDir, makeDirectory, writeAll } from '../../dist/adapters/shared/files.js';
import { RedisConnection } from '../../dist/adapters/shared/redis-connection.js';
import { defineScripts } from '../../dist/adapters/shared/redis-scripts.js';
import { escapeRedisGlob } from '../../dist/adapters/shared/redis-text.js';
import { redactUrl, scrubPassword, urlPassword } from '../../dist/adapters/shared/url-text.js';
import { SpareRedisServer, deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, programAvailable, serviceAvailable } from '../support/services/services.js';
import { freePort, rejectsWith, waitFor } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('Redis tests', await serviceAvailable('redis', REDIS_URL));
const runOutage = gateService('Redis outage tests', programAvailable('redis-server'));

/** Awaits `promise`, expecting a store_unavailable rejection; returns the error. */
const expectUnavailable = (promise: Promise<unknown>): Promise<FlintError> => rejectsWith(promise, 'store_unavailable');

describe('redis texts', () => {
  test('redactUrl replaces the password, leaves URLs without one alone, and copes with URLs it cannot parse', () => {
    expect(redactUrl('redis://user:secret@redis.example:6380/2')).toBe('redis://user:***@redis.example:6380/2');
    expect(redactUrl('redis://:secret@127.0.0.1:6379')).toBe('redis://:***@127.0.0.1:6379');
    expect(redactUrl('rediss://:p%40ss@host')).toBe('rediss://:***@host');
    expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redactUrl('redis://user@127.0.0.1:6379')).toBe('redis://user@127.0.0.1:6379');
    const unparseable = redactUrl('redis://user:secret@[::1');
    expect(unparseable).toBe('redis://user:***@[::1');
    expect(unparseable).not.toContain('secret');
  });

  test('urlPassword decodes the password; scrubPassword removes every occurrence of it', () => {
    expect(urlPassword('redis://:p%40ss%20word@host:1')).toBe('p@ss word');
    expect(urlPassword('redis://host:1')).toBe('');
    expect(urlPassword('not a url')).toBe('');
    expect(scrubPassword('auth s3cret failed (s3cret)', 's3cret')).toBe('auth *** failed (***)');
    expect(scrubPassword('nothing to hide', '')).toBe('nothing to hide');
    expect(scrubPassword('nothing to hide', undefined)).toBe('nothing to hide');
  });
});

describe.skipIf(!runRedis)('escapeRedisGlob on a real Redis', () => {
  const prefix = `flint-test:${randomUUID()}:`;
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect();
  });
  afterAll(async () => {
    await deleteKeysWithPrefix(REDIS_URL, prefix);
    await redis.quit();
  });

  async function scanAll(pattern: string): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
    return found.sort();
  }

  test('every glob character stands for itself once escaped', async () => {
    const special = ['a*b', 'a?b', 'a[b]c', 'a\\b', 'a^b', '[^x]', '\\*'];
    const decoys = ['aXb', 'axb', 'abc', 'ab', 'a\\\\b', 'x', '\\x'];
    for (const key of [...special, ...decoys]) await redis.set(prefix + key, '1');
    for (const key of special) expect(await scanAll(escapeRedisGlob(prefix + key))).toEqual([prefix + key]);
  });

  test('an escaped prefix followed by * matches only the keys under that prefix', async () => {
    const globby = `${prefix}g[1]*?:`;
    await redis.set(`${globby}k`, '1');
    await redis.set(`${prefix}g1xy:k`, '1'); // what the unescaped pattern would also match
    expect(await scanAll(`${escapeRedisGlob(globby)}*`)).toEqual([`${globby}k`]);
  });
});

describe.skipIf(!runRedis)('RedisConnection on a real Redis', () => {
  const connections: RedisConnection[] = [];
  afterEach(async () => {
    for (const connection of connections.splice(0)) await connection.close();
  });

  async function connect(name = 'flint-test'): Promise<RedisConnection> {
    const connection = await RedisConnection.open({ url: REDIS_URL, connectionName: name, commandTimeoutMs: 2000 });
    connections.push(connection);
    return connection;
  }

  test('names the connection, runs commands, and turns Redis errors into store_unavailable with the reason', async () => {
    const connection = await connect('flint-test-name');
    expect(await connection.call(() => connection.client.client('GETNAME'))).toBe('flint-test-name');
    const key = `flint-test:${randomUUID()}`;
    try {
      await connection.call(() => connection.client.set(key, 'text'));
      const error = await expectUnavailable(connection.call(() => connection.client.hget(key, 'field')));
      expect(error.message).toContain(`redis at ${REDIS_URL} is unavailable: WRONGTYPE`);
    } finally {
      await connection.call(() => connection.client.del(key));
    }
  });

  test('send passes its arguments as given (numbers as decimal text) and answers strings', async () => {
    const connection = await connect();
    const key = `flint-test:${randomUUID()}`;
    const text = 'two words\r\n$3\r\nnot a command, ünïcode ✓';
    try {
      expect(await connection.call(() => connection.send('hset', [key, 'f', text, 'n', 42.5]))).toBe(2);
      expect(await connection.call(() => connection.send('hget', [key, 'f']))).toBe(text);
      expect(await connection.call(() => connection.send('hget', [key, 'n']))).toBe('42.5');
      expect(await connection.call(() => connection.send('hget', [key, 'missing']))).toBeNull();
      const error = await expectUnavailable(connection.call(() => connection.send('get', [key])));
      expect(error.message).toContain('WRONGTYPE');
    } finally {
      await connection.call(() => connection.client.del(key));
    }
  });

  test('scripts run by EVALSHA, are loaded again by EVAL after SCRIPT FLUSH, and report their own errors', async () => {
    const connection = await connect();
    const scripts = defineScripts<{ echo(key: string, ...args: (string | number)[]): Promise<string[]>; fail(): Promise<unknown> }>(connection.send, {
      echo: { numberOfKeys: 1, lua: `return { KEYS[1], ARGV[1], ARGV[2], tostring(#ARGV) }` },
      fail: { numberOfKeys: 0, lua: `return redis.error_reply('ERR flint test failure')` },
    });
    const key = `flint-test:${randomUUID()}`;
    const run = () => connection.call(() => scripts.echo(key, 'a b', 7));
    expect(await run()).toEqual([key, 'a b', '7', '2']);
    await connection.call(() => connection.client.script('FLUSH'));
    expect(await run()).toEqual([key, 'a b', '7', '2']);
    expect(await run()).toEqual([key, 'a b', '7', '2']);
    const error = await expectUnavailable(connection.call(() => scripts.fail()));
    expect(error.message).toContain('ERR flint test failure');
  });

  test('after close, commands fail with store_unavailable; closing twice is harmless', async () => {
    const connection = await connect();
    await connection.close();
    await connection.close();
    const error = await expectUnavailable(connection.call(() => connection.client.ping()));
    expect(error.message).toMatch(/not connected \(end\)/);
    expect(connection.failure('the store is closed').message).toBe(`redis at ${REDIS_URL} is unavailable: the store is closed`);
  });
});

describe('RedisConnection start-up failure', () => {
  test('no server: store_unavailable after openTimeoutMs with the last error, the URL redacted and the password scrubbed', async () => {
    const port = await freePort();
    const started = Date.now();
    const error = await expectUnavailable(
      RedisConnection.open({ url: `redis://user:hunter2@127.0.0.1:${port}`, connectionName: 'flint-test', commandTimeoutMs: 2000, openTimeoutMs: 300 }),
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error.message).toContain(`redis at redis://user:***@127.0.0.1:${port} is unavailable: no connection within 300 ms`);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain('hunter2');
  });
});

describe.skipIf(!runOutage)('RedisConnection while Redis crashes and comes back', () => {
  let server: SpareRedisServer;
  beforeAll(async () => {
    server = await SpareRedisServer.start('pw-outage');
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('reports "connection lost" once and "connection restored" through its logger, and works again without reopening', async () => {
    const warnings: string[] = [];
    const infos: string[] = [];
    const logger = { warn: (m: string) => warnings.push(m), info: (m: string) => infos.push(m) };
    const connection = await RedisConnection.open({ url: server.url, connectionName: 'flint-test', commandTimeoutMs: 2000, logger });
    try {
      expect(await connection.call(() => connection.client.ping())).toBe('PONG');
      await server.kill();
      await waitFor(() => warnings.some((m) => m.includes('connection lost')), 8000, 'the connection-lost warning');
      const down = await expectUnavailable(connection.call(() => connection.client.ping()));
      expect(down.message).toContain(`redis at redis://:***@127.0.0.1:${server.port} is unavailable`);
      expect(down.message).not.toContain('pw-outage');
      await new Promise((resolve) => setTimeout(resolve, 500)); // several reconnect attempts fail meanwhile
      await server.restart();
      await waitFor(() => infos.length > 0, 8000, 'the connection-restored message');
      expect(infos).toEqual([`redis at redis://:***@127.0.0.1:${server.port}: connection restored`]);
      expect(warnings.filter((m) => m.includes('connection lost'))).toHaveLength(1);
      expect(warnings.join('\n')).not.toContain('pw-outage');
      expect(await connection.call(() => connection.client.ping())).toBe('PONG');
    } finally {
      await connection.close();
    }
  });
});

describe('file helpers', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'flint-adapters-shared-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test('fsyncDir syncs a folder, and rejects with the errno of a folder that is not there', async () => {
    await expect(fsyncDir(root)).resolves.toBeUndefined();
    const missing = await fsyncDir(path.join(root, 'missing')).catch((err: unknown) => err);
    expect(errnoCode(missing)).toBe('ENOENT');
  });

  test('makeDirectory creates every missing level, accepts an existing folder, and refuses a file', async () => {
    const nested = path.join(root, 'a', 'b', 'c');
    await makeDirectory(nested);
    expect((await stat(nested)).isDirectory()).toBe(true);
    await makeDirectory(nested);
    const file = path.join(root, 'a', 'file');
    await writeFile(file, 'x');
    expect(errnoCode(await makeDirectory(file).catch((err: unknown) => err))).toBe('EEXIST');
    expect(errnoCode(await makeDirectory(path.join(file, 'below')).catch((err: unknown) => err))).toBe('ENOTDIR');
  });

  test('writeAll writes the whole buffer at the end of a file opened for appending', async () => {
    const file = path.join(root, 'append.bin');
    await writeFile(file, 'head:');
    const data = Buffer.alloc(5 * 1024 * 1024 + 3, 'x');
    const fh = await openFile(file, 'a');
    try {
      await writeAll(fh, data);
    } finally {
      await fh.close();
    }
    const back = await readFile(file);
    expect(back.length).toBe(5 + data.length);
    expect(back.subarray(0, 5).toString()).toBe('head:');
  });

  test('errnoCode and describeError read anything thrown', () => {
    expect(errnoCode(Object.assign(new Error('gone'), { code: 'ENOENT' }))).toBe('ENOENT');
    expect(errnoCode(new Error('plain'))).toBeUndefined();
    expect(errnoCode(undefined)).toBeUndefined();
    expect(describeError(new Error('message'))).toBe('message');
    expect(describeError('text')).toBe('text');
    expect(describeError(42)).toBe('42');
  });
});
