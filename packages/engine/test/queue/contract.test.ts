/**
 * The QueueBackend contract: one suite, run through the public `openAdapter` against every queue
 * adapter. Each backend entry says how to open a fresh, isolated place for one test (a unique key
 * prefix on the real Redis, unique names on the real RabbitMQ, a temp folder) and whether messages
 * survive closing and reopening it.
 *
 * Backends that need a server are skipped with a printed reason when it is absent, or fail when
 * FLINT_REQUIRE_SERVICES=1.
 */
import { randomUUID } from 'node:crypto';
import { type Delivery, type QueueBackend, type Settlement, openAdapter } from '@flint/engine';
import { FlintError } from '@flint/protocol';
import { afterEach, describe, expect, test } from 'vitest';
import { QUEUE_BACKENDS, type QueueLocation } from '../support/queue/backends.js';

interface Received {
  delivery: Delivery;
  settle: (s: Settlement) => void;
  at: number;
}

/** Collects deliveries; `next(n)` waits until n more have arrived. */
class Inbox {
  readonly all: Received[] = [];
  private waiters: { count: number; resolve: () => void }[] = [];

  readonly handler = (delivery: Delivery, settle: (s: Settlement) => void) => {
    this.all.push({ delivery, settle, at: Date.now() });
    for (const w of this.waiters.splice(0)) {
      if (this.all.length >= w.count) w.resolve();
      else this.waiters.push(w);
    }
  };

  /** Resolves once `count` deliveries have arrived in total. */
  async until(count: number, timeoutMs = 5000): Promise<Received[]> {
    if (this.all.length < count) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`expected ${count} deliveries, got ${this.all.length}`)), timeoutMs);
        this.waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    }
    return this.all.slice(0, count);
  }
}

/** An inbox that acks everything at once. */
function acking(): Inbox {
  const inbox = new Inbox();
  const handler = inbox.handler;
  (inbox as { handler: Inbox['handler'] }).handler = (d, settle) => {
    handler(d, settle);
    settle({ type: 'ack' });
  };
  return inbox;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const OPTS = { concurrency: 10, fifo: false, visibilityTimeoutMs: 30_000 };

async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v) || Date.now() > deadline) return v;
    await sleep(20);
  }
}

for (const backend of QUEUE_BACKENDS) {
  describe.skipIf(!backend.available)(`QueueBackend contract: ${backend.name}`, () => {
    let location: QueueLocation | undefined;
    const open: QueueBackend[] = [];

    async function fresh(): Promise<QueueBackend> {
      location = await backend.prepare();
      return reopen();
    }
    async function reopen(): Promise<QueueBackend> {
      const q = await openAdapter('queue', (location as QueueLocation).ref, { configDir: (location as QueueLocation).configDir });
      open.push(q);
      return q;
    }

    afterEach(async () => {
      for (const q of open.splice(0)) await q.close();
      await location?.cleanup();
      location = undefined;
    });

    test('a published message reaches a consumer with its data, trace context and function id', async () => {
      const q = await fresh();
      const inbox = acking();
      q.consume('jobs', OPTS, inbox.handler);
      const data = { order: 42, items: ['a', 'b'], note: 'ünïcödé 🚀', nothing: null };
      const { id } = await q.publish('jobs', {
        data,
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        baggage: 'k=v',
        functionId: 'orders::create',
      });
      const [r] = await inbox.until(1);
      expect(r?.delivery).toMatchObject({
        id,
        data,
        attempt: 1,
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        baggage: 'k=v',
        functionId: 'orders::create',
      });
      expect(typeof r?.delivery.publishedAt).toBe('number');
      await q.publish('jobs', { data: null });
      const [, second] = await inbox.until(2);
      expect(second?.delivery.data).toBeNull();
    });

    test('messages come out oldest first', async () => {
      const q = await fresh();
      for (let i = 0; i < 20; i++) await q.publish('ordered', { data: i });
      const inbox = acking();
      q.consume('ordered', { ...OPTS, concurrency: 1 }, inbox.handler);
      const got = await inbox.until(20);
      expect(got.map((r) => r.delivery.data)).toEqual([...Array(20).keys()]);
    });

    test('competing consumers of one queue: each message is delivered to one of them', async () => {
      const q = await fresh();
      const a = acking();
      const b = acking();
      q.consume('shared', { ...OPTS, concurrency: 2 }, a.handler);
      q.consume('shared', { ...OPTS, concurrency: 2 }, b.handler);
      await Promise.all(Array.from({ length: 40 }, (_, i) => q.publish('shared', { data: i })));
      await eventually(
        async () => a.all.length + b.all.length,
        (n) => n >= 40,
      );
      await sleep(100);
      const seen = [...a.all, ...b.all].map((r) => r.delivery.data as number).sort((x, y) => x - y);
      expect(seen).toEqual([...Array(40).keys()]);
      expect(a.all.length).toBeGreaterThan(0);
      expect(b.all.length).toBeGreaterThan(0);
    });

    test('a topic copies each message into every bound queue; none bound stores nothing', async () => {
      const q = await fresh();
      expect(await q.publishTopic('orders', { data: 'lost?' })).toBe(0);
      await q.bind('orders', 'orders::billing', {});
      await q.bind('orders', 'orders::email', {});
      expect(await q.publishTopic('orders', { data: { n: 1 } })).toBe(2);
      const billing = acking();
      const email = acking();
      q.consume('orders::billing', OPTS, billing.handler);
      q.consume('orders::email', OPTS, email.handler);
      expect((await billing.until(1))[0]?.delivery.data).toEqual({ n: 1 });
      expect((await email.until(1))[0]?.delivery.data).toEqual({ n: 1 });
      expect(await q.topics()).toEqual([{ topic: 'orders', queues: expect.arrayContaining(['orders::billing', 'orders::email']) }]);
      await q.unbind('orders', 'orders::email');
      expect(await q.publishTopic('orders', { data: { n: 2 } })).toBe(1);
      await billing.until(2);
      await sleep(100);
      expect(email.all).toHaveLength(1);
    });

    test('a topic with a FIFO queue refuses, everywhere, a message without its group field', async () => {
      const q = await fresh();
      await q.bind('payments', 'payments::plain', {});
      await q.bind('payments', 'payments::fifo', { fifo: true, groupField: 'account' });
      const err = await q.publishTopic('payments', { data: { amount: 5 } }).catch((e) => e);
      expect(err).toBeInstanceOf(FlintError);
      expect(err.code).toBe('message_group_missing');
      expect(err.message).toContain('account');
      await expect(q.publishTopic('payments', { data: { account: null } })).rejects.toMatchObject({ code: 'message_group_missing' });
      expect((await q.stats('payments::plain')).waiting).toBe(0);
      expect(await q.publishTopic('payments', { data: { account: 'a1', amount: 5 } })).toBe(2);
      const fifo = acking();
      q.consume('payments::fifo', { ...OPTS, fifo: true }, fifo.handler);
      expect((await fifo.until(1))[0]?.delivery.group).toBe('a1');
    });

    test('at most `concurrency` deliveries are unsettled at once', async () => {
      const q = await fresh();
      const inbox = new Inbox();
      q.consume('capped', { ...OPTS, concurrency: 3 }, inbox.handler);
      for (let i = 0; i < 10; i++) await q.publish('capped', { data: i });
      await inbox.until(3);
      await sleep(150);
      expect(inbox.all).toHaveLength(3);
      expect((await q.stats('capped')).inFlight).toBe(3);
      inbox.all[0]?.settle({ type: 'ack' });
      await inbox.until(4);
      await sleep(100);
      expect(inbox.all).toHaveLength(4);
    });

    test('retry: the message comes back after the delay with its attempt counted, before newer messages', async () => {
      const q = await fresh();
      const inbox = new Inbox();
      q.consume('flaky', { ...OPTS, concurrency: 1 }, inbox.handler);
      await q.publish('flaky', { data: 'first' });
      const [first] = await inbox.until(1);
      await q.publish('flaky', { data: 'second' });
      const failedAt = Date.now();
      first?.settle({ type: 'retry', delayMs: 300, error: 'boom' });
      // The slot is free: 'second' goes while 'first' waits for its retry.
      const [, second] = await inbox.until(2);
      expect(second?.delivery.data).toBe('second');
      expect((await q.stats('flaky')).delayed).toBe(1);
      second?.settle({ type: 'ack' });
      const [, , again] = await inbox.until(3);
      expect(again?.delivery).toMatchObject({ data: 'first', attempt: 2, id: first?.delivery.id });
      expect((again?.at ?? 0) - failedAt).toBeGreaterThanOrEqual(280);
      again?.settle({ type: 'ack' });
      expect(
        await eventually(
          () => q.stats('flaky'),
          (s) => s.inFlight === 0,
        ),
      ).toEqual({ waiting: 0, inFlight: 0, delayed: 0, dead: 0 });
    });

    test('defer: the message comes back after the delay without counting an attempt', async () => {
      const q = await fresh();
      const inbox = new Inbox();
      q.consume('later', OPTS, inbox.handler);
      await q.publish('later', { data: 1 });
      const [first] = await inbox.until(1);
      first?.settle({ type: 'defer', delayMs: 200 });
      const [, again] = await inbox.until(2);
      expect(again?.delivery.attempt).toBe(1);
      expect((again?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(180);
      again?.settle({ type: 'ack' });
    });

    test('dead letters: listed newest first with error, attempts and time; redrive, redrive one, discard', async () => {
      const q = await fresh();
      const inbox = new Inbox();
      q.consume('dlq', OPTS, inbox.handler);
      for (const n of [1, 2, 3]) await q.publish('dlq', { data: { n }, functionId: 'f' });
      const got = await inbox.until(3);
      for (const r of got) r.settle({ type: 'dead', error: `failed ${(r.delivery.data as { n: number }).n}` });
      const dead = await eventually(
        () => q.deadLetters('dlq', 0, 10),
        (d) => d.length === 3,
      );
      expect(dead.map((d) => d.error)).toEqual(expect.arrayContaining(['failed 1', 'failed 2', 'failed 3']));
      for (const d of dead) {
        expect(d.attempts).toBe(1);
        expect(d.failedAt).toBeGreaterThan(Date.now() - 10_000);
        expect(d.functionId).toBe('f');
      }
      expect(dead[0]?.failedAt).toBeGreaterThanOrEqual(dead[2]?.failedAt ?? 0);
      expect(await q.deadLetters('dlq', 1, 1)).toHaveLength(1);
      expect(await q.stats('dlq')).toMatchObject({ dead: 3, waiting: 0, inFlight: 0 });
      expect(await q.deadQueues()).toEqual([{ queue: 'dlq', count: 3 }]);

      const one = dead.find((d) => d.error === 'failed 1');
      const two = dead.find((d) => d.error === 'failed 2');
      expect(await q.discard('dlq', one?.id as string)).toBe(true);
      expect(await q.discard('dlq', one?.id as string)).toBe(false);
      expect(await q.redriveMessage('dlq', two?.id as string)).toBe(true);
      expect(await q.redriveMessage('dlq', 'no-such-id')).toBe(false);
      const [, , , back] = await inbox.until(4);
      expect(back?.delivery).toMatchObject({ data: { n: 2 }, attempt: 1 });
      back?.settle({ type: 'ack' });
      expect(await q.redrive('dlq')).toBe(1);
      const [, , , , last] = await inbox.until(5);
      expect(last?.delivery.data).toEqual({ n: 3 });
      last?.settle({ type: 'ack' });
      expect(
        await eventually(
          () => q.stats('dlq'),
          (s) => s.inFlight === 0 && s.dead === 0,
        ),
      ).toEqual({ waiting: 0, inFlight: 0, delayed: 0, dead: 0 });
      expect(await q.deadQueues()).toEqual([]);
    });

    test('FIFO groups: in order within a group, a retried head holds only its own group', async () => {
      const q = await fresh();
      const inbox = new Inbox();
      q.consume('fifo', { ...OPTS, fifo: true, concurrency: 4 }, inbox.handler);
      for (let i = 0; i < 3; i++) {
        await q.publish('fifo', { data: { g: 'a', i }, group: 'a' });
        await q.publish('fifo', { data: { g: 'b', i }, group: 'b' });
      }
      // One message per group at a time: the heads of a and b.
      const heads = await inbox.until(2);
      await sleep(100);
      expect(inbox.all).toHaveLength(2);
      const headA = heads.find((r) => (r.delivery.data as { g: string }).g === 'a');
      const headB = heads.find((r) => (r.delivery.data as { g: string }).g === 'b');
      expect(headA?.delivery.data).toEqual({ g: 'a', i: 0 });
      expect(headB?.delivery.data).toEqual({ g: 'b', i: 0 });
      // a's head fails: group b goes on while a waits for the retry of its head.
      headA?.settle({ type: 'retry', delayMs: 300, error: 'boom' });
      headB?.settle({ type: 'ack' });
      const [, , b1] = await inbox.until(3);
      expect(b1?.delivery.data).toEqual({ g: 'b', i: 1 });
      b1?.settle({ type: 'ack' });
      const [, , , b2] = await inbox.until(4);
      expect(b2?.delivery.data).toEqual({ g: 'b', i: 2 });
      b2?.settle({ type: 'ack' });
      // Then a's head again (attempt 2), and only after it a1, a2.
      const [, , , , a0] = await inbox.until(5);
      expect(a0?.delivery).toMatchObject({ data: { g: 'a', i: 0 }, attempt: 2 });
      a0?.settle({ type: 'ack' });
      const [, , , , , a1] = await inbox.until(6);
      expect(a1?.delivery.data).toEqual({ g: 'a', i: 1 });
      a1?.settle({ type: 'ack' });
      const [, , , , , , a2] = await inbox.until(7);
      expect(a2?.delivery.data).toEqual({ g: 'a', i: 2 });
      a2?.settle({ type: 'ack' });
    });

    test('FIFO: a dead head lets its group go on', async () => {
      const q = await fresh();
      const inbox = new Inbox();
      q.consume('fifo-dead', { ...OPTS, fifo: true }, inbox.handler);
      await q.publish('fifo-dead', { data: 0, group: 'g' });
      await q.publish('fifo-dead', { data: 1, group: 'g' });
      const [first] = await inbox.until(1);
      first?.settle({ type: 'dead', error: 'no' });
      const [, second] = await inbox.until(2);
      expect(second?.delivery.data).toBe(1);
      second?.settle({ type: 'ack' });
    });

    test('names, groups and errors with commas, line breaks, tabs and other scripts travel as they are', async () => {
      const q = await fresh();
      const topic = 'orders,eu\nnorth';
      const queue = 'billing,1\r\tünï';
      const group = 'acct,7\n🚀,';
      const error = 'failed, at line 3\nthen: ,,, "quoted" ✗';
      await q.bind(topic, queue, { fifo: true, groupField: 'account' });
      const inbox = new Inbox();
      q.consume(queue, { ...OPTS, fifo: true }, inbox.handler);
      expect(await q.publishTopic(topic, { data: { account: group, n: 1 } })).toBe(1);
      await q.publish(queue, { data: { n: 2 }, group: '' });
      // Two groups: either may come first.
      const both = await inbox.until(2);
      const first = both.find((r) => (r.delivery.data as { n: number }).n === 1);
      const second = both.find((r) => (r.delivery.data as { n: number }).n === 2);
      expect(first?.delivery).toMatchObject({ data: { account: group, n: 1 }, group, attempt: 1 });
      expect(second?.delivery).toMatchObject({ data: { n: 2 }, group: '', attempt: 1 });
      first?.settle({ type: 'retry', delayMs: 0, error });
      const [, , again] = await inbox.until(3);
      expect(again?.delivery).toMatchObject({ id: first?.delivery.id, group, attempt: 2 });
      again?.settle({ type: 'dead', error });
      second?.settle({ type: 'ack' });
      const dead = await eventually(
        () => q.deadLetters(queue, 0, 10),
        (letters) => letters.length === 1,
      );
      expect(dead[0]).toMatchObject({ id: first?.delivery.id, error, group, attempts: 2, data: { account: group, n: 1 } });
    });

    test('visibility timeout: an unsettled delivery goes again with its attempt counted; the late settle is ignored', async () => {
      const q = await fresh();
      const inbox = new Inbox();
      q.consume('hung', { ...OPTS, visibilityTimeoutMs: 300 }, inbox.handler);
      await q.publish('hung', { data: 'x' });
      const [first] = await inbox.until(1);
      const [, again] = await inbox.until(2, 5000);
      expect(again?.delivery).toMatchObject({ id: first?.delivery.id, attempt: 2, data: 'x' });
      expect((again?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(250);
      first?.settle({ type: 'dead', error: 'too late' });
      again?.settle({ type: 'ack' });
      await sleep(100);
      expect(await q.stats('hung')).toEqual({ waiting: 0, inFlight: 0, delayed: 0, dead: 0 });
    });

    test('delay: a delayed message is not delivered before its time and counts as delayed meanwhile', async () => {
      const q = await fresh();
      const inbox = acking();
      q.consume('delayed', OPTS, inbox.handler);
      const publishedAt = Date.now();
      await q.publish('delayed', { data: 'later', delayMs: 400 });
      await q.publish('delayed', { data: 'now' });
      const [first] = await inbox.until(1);
      expect(first?.delivery.data).toBe('now');
      expect((await q.stats('delayed')).delayed).toBe(1);
      const [, later] = await inbox.until(2);
      expect(later?.delivery.data).toBe('later');
      expect((later?.at ?? 0) - publishedAt).toBeGreaterThanOrEqual(380);
    });

    test('peek and remove waiting messages; stats count them', async () => {
      const q = await fresh();
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await q.publish('parked', { data: { i } })).id);
      expect(await q.stats('parked')).toEqual({ waiting: 5, inFlight: 0, delayed: 0, dead: 0 });
      const page = await q.peek('parked', 1, 2);
      expect(page.map((m) => m.data)).toEqual([{ i: 1 }, { i: 2 }]);
      expect(page[0]?.id).toBe(ids[1]);
      expect(await q.remove('parked', ids[1] as string)).toBe(true);
      expect(await q.remove('parked', ids[1] as string)).toBe(false);
      expect((await q.peek('parked', 0, 10)).map((m) => m.data)).toEqual([{ i: 0 }, { i: 2 }, { i: 3 }, { i: 4 }]);
      expect((await q.stats('parked')).waiting).toBe(4);
      expect(await q.stats('never-used')).toEqual({ waiting: 0, inFlight: 0, delayed: 0, dead: 0 });
    });

    test('a stopped consumer takes no new deliveries; another one does', async () => {
      const q = await fresh();
      const a = acking();
      const consumer = q.consume('handover', OPTS, a.handler);
      await q.publish('handover', { data: 1 });
      await a.until(1);
      await consumer.stop();
      await q.publish('handover', { data: 2 });
      await sleep(150);
      expect(a.all).toHaveLength(1);
      const b = acking();
      q.consume('handover', OPTS, b.handler);
      expect((await b.until(1))[0]?.delivery.data).toBe(2);
    });

    test('names with separators and unicode are separate queues', async () => {
      const q = await fresh();
      const names = ['a::b', 'a:b', 'a.b', 'a b', 'ä/ö', `x-${randomUUID()}`];
      for (const [i, name] of names.entries()) await q.publish(name, { data: i });
      for (const [i, name] of names.entries()) expect((await q.peek(name, 0, 10)).map((m) => m.data)).toEqual([i]);
    });

    // Only persistent backends make this promise (in_memory loses everything on close, by design).
    if (backend.persistent)
      test('persistent: waiting, delayed, dead and in-flight messages survive a reopen', async () => {
        let q = await fresh();
        await q.publish('durable', { data: 'waiting' });
        await q.publish('durable', { data: 'delayed', delayMs: 300 });
        await q.publish('dead-one', { data: 'dead' });
        const inbox = new Inbox();
        q.consume('dead-one', OPTS, inbox.handler);
        const [d] = await inbox.until(1);
        d?.settle({ type: 'dead', error: 'kept' });
        await eventually(
          () => q.stats('dead-one'),
          (s) => s.dead === 1,
        );
        // A delivery left unsettled when the backend closes is delivered again after the reopen.
        await q.publish('inflight', { data: 'in flight' });
        const hung = new Inbox();
        q.consume('inflight', { ...OPTS, visibilityTimeoutMs: 500 }, hung.handler);
        await hung.until(1);
        await q.close();
        q = await reopen();
        const after = acking();
        q.consume('durable', OPTS, after.handler);
        const got = await after.until(2);
        expect(got.map((r) => r.delivery.data).sort()).toEqual(['delayed', 'waiting']);
        expect((await q.deadLetters('dead-one', 0, 10)).map((l) => l.error)).toEqual(['kept']);
        const again = acking();
        q.consume('inflight', { ...OPTS, visibilityTimeoutMs: 500 }, again.handler);
        expect((await again.until(1, 10_000))[0]?.delivery.data).toBe('in flight');
      });
  });
}
