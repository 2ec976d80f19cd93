/**
 * What the `redis` queue backend promises beyond the shared contract (contract.test.ts): several engines on
 * one Redis and prefix share the queues and the topic bindings. Two adapter instances stand for two engines;
 * a crashed engine is a child process killed with SIGKILL.
 *
 * Uses the real Redis at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379) with a unique prefix per test
 * (every key under it deleted afterwards) and, for the outage test, a throw-away `redis-server` on a free
 * port. Missing either: skipped with a printed reason, or a failure when FLINT_REQUIRE_SERVICES=1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type Delivery, type QueueBackend, type Settlement, openAdapter } from '@flint/engine';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { REDIS_URL } from '../support/queue/backends.js';
import { SpareRedisServer, deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, programAvailable, serviceAvailable } from '../support/services/services.js';
import { freePort, rejectsWith, sleep, waitFor } from '../support/util.js';

const runRedis = gateService('Redis queue tests', await serviceAvailable('redis', REDIS_URL));
const runOutage = gateService('Redis queue outage tests', programAvailable('redis-server'));
const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function openQueue(config: Record<string, unknown>): Promise<QueueBackend> {
  return openAdapter('queue', { name: 'redis', config }, { configDir: tmpdir() });
}

interface Got {
  delivery: Delivery;
  settle: (s: Settlement) => void;
}

describe.skipIf(!runRedis)('redis queue backend: engines sharing one Redis', () => {
  const prefixes: string[] = [];
  const opened: QueueBackend[] = [];
  const children: ChildProcess[] = [];

  const newPrefix = (): string => {
    const prefix = `flint-test:${randomUUID()}`;
    prefixes.push(prefix);
    return prefix;
  };
  const engine = async (prefix: string, extra: Record<string, unknown> = {}): Promise<QueueBackend> => {
    const q = await openQueue({ redis_url: REDIS_URL, prefix, ...extra });
    opened.push(q);
    return q;
  };
  /** Writes the stored JSON of messages of `queue` by hand (an earlier engine's layout, or damage). */
  const overwrite = async (prefix: string, queue: string, texts: Record<string, string>): Promise<void> => {
    const redis = new Redis(REDIS_URL);
    try {
      for (const [id, text] of Object.entries(texts)) await redis.hset(`${prefix}:q:${queue}:m:${id}`, 'd', text);
    } finally {
      redis.disconnect();
    }
  };
  /** Consumes `queue`, acking every delivery: the deliveries so far. */
  const ackAll = (q: QueueBackend, queue: string, concurrency: number): Delivery[] => {
    const got: Delivery[] = [];
    q.consume(queue, { concurrency, fifo: false, visibilityTimeoutMs: 30_000 }, (d, settle) => {
      got.push(d);
      settle({ type: 'ack' });
    });
    return got;
  };

  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const q of opened.splice(0)) await q.close();
    for (const prefix of prefixes.splice(0)) await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  test('a message stored in the older layout (data first) is delivered with its data and function id', async () => {
    const prefix = newPrefix();
    const q = await engine(prefix);
    const { id } = await q.publish('old', { data: { placeholder: true } });
    // What an engine of the earlier layout wrote: `d` first, then the publish time and the function.
    await overwrite(prefix, 'old', { [id]: JSON.stringify({ d: { n: 7, text: 'as before' }, t: Date.now(), f: 'fn::old' }) });
    const got = ackAll(q, 'old', 1);
    await waitFor(() => got.length === 1, 5000, 'the delivery');
    expect(got[0]?.data).toEqual({ n: 7, text: 'as before' });
    expect(got[0]?.functionId).toBe('fn::old');
    // Stored now: the data as JSON text beside its value, for the call's frame.
    const { id: fresh } = await q.publish('old', { data: { n: 8 }, functionId: 'fn::new' });
    await waitFor(() => got.length === 2, 5000, 'the second delivery');
    expect(got[1]).toMatchObject({ id: fresh, data: { n: 8 }, dataJson: '{"n":8}', functionId: 'fn::new' });
  });

  test('a damaged record is delivered with null data, in either layout, and its queue goes on', async () => {
    const prefix = newPrefix();
    const q = await engine(prefix);
    const first = await q.publish('damaged', { data: 1 });
    const second = await q.publish('damaged', { data: 2 });
    const third = await q.publish('damaged', { data: 3 });
    await overwrite(prefix, 'damaged', {
      [first.id]: '{"d":{"n":1,', // older layout, cut off
      [second.id]: '{"t":1,"d":{"n":2,}', // data last, its data broken
    });
    const got = ackAll(q, 'damaged', 3);
    await waitFor(() => got.length === 3, 5000, 'three deliveries');
    const byId = new Map(got.map((d) => [d.id, d]));
    expect(byId.get(first.id)?.data).toBeNull();
    expect(byId.get(second.id)?.data).toBeNull();
    expect(byId.get(third.id)?.data).toBe(3);
  });

  test('two engines compete on one queue: each message is delivered once, to one of them', async () => {
    const prefix = newPrefix();
    const a = await engine(prefix);
    const b = await engine(prefix);
    const seen = { a: [] as number[], b: [] as number[] };
    const opts = { concurrency: 4, fifo: false, visibilityTimeoutMs: 30_000 };
    // Handlers finish a little later, so neither engine can take everything in one go.
    a.consume('work', opts, (d, settle) => {
      seen.a.push(d.data as number);
      setTimeout(() => settle({ type: 'ack' }), 2);
    });
    b.consume('work', opts, (d, settle) => {
      seen.b.push(d.data as number);
      setTimeout(() => settle({ type: 'ack' }), 2);
    });
    await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).publish('work', { data: i })));
    await waitFor(() => seen.a.length + seen.b.length >= 200, 10_000, 'all 200 deliveries');
    await sleep(200);
    expect([...seen.a, ...seen.b].sort((x, y) => x - y)).toEqual([...Array(200).keys()]);
    expect(seen.a.length).toBeGreaterThan(0);
    expect(seen.b.length).toBeGreaterThan(0);
    await waitFor(async () => (await a.stats('work')).inFlight === 0, 2000, 'the last acks');
    expect(await b.stats('work')).toEqual({ waiting: 0, inFlight: 0, delayed: 0, dead: 0 });
  });

  test('FIFO across engines: one message of a group in flight at a time, in order, whichever engine takes it', async () => {
    const prefix = newPrefix();
    const engines = [await engine(prefix), await engine(prefix)];
    const order = new Map<string, number[]>();
    const busy = new Set<string>();
    let overlaps = 0;
    for (const q of engines)
      q.consume('ledger', { concurrency: 4, fifo: true, visibilityTimeoutMs: 30_000 }, (d, settle) => {
        const group = d.group as string;
        if (busy.has(group)) overlaps++;
        busy.add(group);
        order.set(group, [...(order.get(group) ?? []), (d.data as { i: number }).i]);
        setTimeout(() => {
          busy.delete(group);
          settle({ type: 'ack' });
        }, 3);
      });
    for (let i = 0; i < 15; i++) for (const group of ['x', 'y', 'z']) await engines[i % 2]?.publish('ledger', { data: { i }, group });
    await waitFor(() => [...order.values()].reduce((n, l) => n + l.length, 0) >= 45, 10_000, '45 deliveries');
    expect(overlaps).toBe(0);
    for (const group of ['x', 'y', 'z']) expect(order.get(group)).toEqual([...Array(15).keys()]);
  });

  test('a lease of an engine closed without settling is taken back by the other, with its attempt counted', async () => {
    const prefix = newPrefix();
    const a = await engine(prefix);
    const b = await engine(prefix);
    const held: Got[] = [];
    a.consume('jobs', { concurrency: 1, fifo: false, visibilityTimeoutMs: 400 }, (delivery, settle) => held.push({ delivery, settle }));
    const { id } = await b.publish('jobs', { data: 'orphan' });
    await waitFor(() => held.length === 1, 2000, 'the first delivery');
    await a.close();
    expect((await b.stats('jobs')).inFlight).toBe(1);
    // Once its lease has run out it is waiting again, even before any engine consumes the queue.
    await waitFor(async () => (await b.stats('jobs')).waiting === 1, 3000, 'the expired lease to count as waiting');
    expect(await b.stats('jobs')).toEqual({ waiting: 1, inFlight: 0, delayed: 0, dead: 0 });
    const again: Got[] = [];
    b.consume('jobs', { concurrency: 1, fifo: false, visibilityTimeoutMs: 30_000 }, (delivery, settle) => again.push({ delivery, settle }));
    await waitFor(() => again.length === 1, 3000, 'the delivery after the lease expired');
    expect(again[0]?.delivery).toMatchObject({ id, data: 'orphan', attempt: 2 });
    again[0]?.settle({ type: 'ack' });
    await waitFor(async () => (await b.stats('jobs')).inFlight === 0, 2000, 'the ack');
    expect(await b.stats('jobs')).toEqual({ waiting: 0, inFlight: 0, delayed: 0, dead: 0 });
  });

  test('bindings are shared: a topic bound by one engine feeds its queue from any engine, with FIFO groups and all-or-none refusal', async () => {
    const prefix = newPrefix();
    const a = await engine(prefix);
    const b = await engine(prefix);
    await a.bind('payments', 'payments::ledger', { fifo: true, groupField: 'account' });
    await b.bind('payments', 'payments::audit', {});
    expect(await b.topics()).toEqual([{ topic: 'payments', queues: expect.arrayContaining(['payments::ledger', 'payments::audit']) }]);
    expect(await b.publishTopic('payments', { data: { account: 7, amount: 1 } })).toBe(2);
    await expect(b.publishTopic('payments', { data: { amount: 2 } })).rejects.toMatchObject({ code: 'message_group_missing' });
    expect((await a.stats('payments::audit')).waiting).toBe(1);
    expect((await a.peek('payments::ledger', 0, 10)).map((m) => m.group)).toEqual(['7']);
    // Binding again (from either engine) replaces the options for everyone.
    await b.bind('payments', 'payments::ledger', {});
    expect(await a.publishTopic('payments', { data: { amount: 3 } })).toBe(2);
    // The queue stays bound while an engine holds it; closing the other releases only that one's hold.
    await a.close();
    expect(await b.topics()).toEqual([{ topic: 'payments', queues: expect.arrayContaining(['payments::ledger', 'payments::audit']) }]);
    await b.unbind('payments', 'payments::ledger');
    await b.unbind('payments', 'payments::audit');
    expect(await b.topics()).toEqual([]);
    expect(await b.publishTopic('payments', { data: { amount: 4 } })).toBe(0);
    expect((await b.stats('payments::audit')).waiting).toBe(2);
  });

  test('a crashed engine: its bindings lapse and its lease is taken back by a live engine', async () => {
    const prefix = newPrefix();
    const live = await engine(prefix);
    await live.publish('crash::jobs', { data: 'in the dead engine' });
    // The other engine, in a child process: binds a topic, takes the message and never settles it.
    const code = `
      import { openAdapter } from '@flint/engine';
      const q = await openAdapter('queue', { name: 'redis', config: ${JSON.stringify({ redis_url: REDIS_URL, prefix, binding_ttl_ms: 600 })} }, { configDir: process.cwd() });
      await q.bind('crash', 'crash::jobs', {});
      q.consume('crash::jobs', { concurrency: 1, fifo: false, visibilityTimeoutMs: 800 }, () => process.stdout.write('took\\n'));
      setInterval(() => {}, 1 << 30);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await waitFor(() => out.includes('took'), 10_000, 'the child engine to take the message');
    expect(await live.topics()).toEqual([{ topic: 'crash', queues: ['crash::jobs'] }]);
    child.kill('SIGKILL');
    const got: Got[] = [];
    live.consume('crash::jobs', { concurrency: 1, fifo: false, visibilityTimeoutMs: 30_000 }, (delivery, settle) => got.push({ delivery, settle }));
    await waitFor(() => got.length === 1, 5000, 'the crashed engine’s lease to be taken back');
    expect(got[0]?.delivery).toMatchObject({ data: 'in the dead engine', attempt: 2 });
    got[0]?.settle({ type: 'ack' });
    await waitFor(async () => (await live.topics()).length === 0, 5000, 'the crashed engine’s binding to lapse');
    expect(await live.publishTopic('crash', { data: 'nobody' })).toBe(0);
  });

  test('bad config is refused before connecting', async () => {
    const bad: Record<string, unknown>[] = [
      { redis_url: '' },
      { prefix: '' },
      { command_timeout_ms: 0 },
      { poll_interval_ms: -5 },
      { binding_ttl_ms: 10 },
      { key_prefix: 'flint:' },
    ];
    for (const config of bad) {
      const err = await rejectsWith(openQueue(config), 'internal_error');
      expect(err.message).toMatch(/invalid queue adapter/);
    }
  });
});

describe('redis queue backend: Redis unreachable', () => {
  test('opening on a port where nothing listens rejects fast with queue_unavailable, the password redacted', async () => {
    const port = await freePort();
    const started = Date.now();
    const err = await rejectsWith(openQueue({ redis_url: `redis://user:hunter2@127.0.0.1:${port}`, connect_timeout_ms: 500 }), 'queue_unavailable');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(err.message).toContain(`redis://user:***@127.0.0.1:${port}`);
    expect(err.message).not.toContain('hunter2');
  });
});

describe.skipIf(!runOutage)('redis queue backend: Redis gone after opening', () => {
  let server: SpareRedisServer;
  const opened: QueueBackend[] = [];

  beforeAll(async () => {
    server = await SpareRedisServer.start('s3cret-pw');
  });

  afterAll(async () => {
    for (const q of opened.splice(0)) await q.close();
    await server?.stop();
  });

  test('publish rejects fast with queue_unavailable naming the redacted URL, and works again once Redis is back', async () => {
    const q = await openQueue({ redis_url: server.url, prefix: `flint-test:${randomUUID()}` });
    opened.push(q);
    await q.publish('jobs', { data: 1 });
    await server.kill();
    const started = Date.now();
    const err = await rejectsWith(q.publish('jobs', { data: 2 }), 'queue_unavailable');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err.message).toContain(`127.0.0.1:${server.port}`);
    expect(err.message).toContain(':***@');
    expect(err.message).not.toContain('s3cret-pw');
    await rejectsWith(q.stats('jobs'), 'queue_unavailable');
    await server.restart();
    // A fresh server (no persistence): the queue is empty but usable again without reopening.
    const { id } = await waitFor(() => q.publish('jobs', { data: 3 }).catch(() => undefined), 5000, 'publish after the restart');
    expect((await q.peek('jobs', 0, 10)).map((m) => m.id)).toEqual([id]);
  });
});
