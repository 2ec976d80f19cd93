/**
 * flint-queue through real workers (@flint/sdk and iii-sdk@0.11.6) on every queue backend (the real
 * servers; see support/queue/backends.ts): fan-out and competition, conditions, retries with back-off,
 * dead letters and their admin functions, named function queues (TriggerAction.Enqueue), unrouted
 * messages, delay, chains, trace context and bad input.
 */
import type { Engine } from '@flint/engine';
import type { Worker as FlintWorker } from '@flint/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, type TestWorker, findTrigger, startTestEngine, startWorker } from '../support/harness.js';
import { QUEUE_BACKENDS, type QueueLocation } from '../support/queue/backends.js';
import { outcome, sleep, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** The backend of the running test (each describe block below sets it for its tests). */
let location: QueueLocation | undefined;

function startQueueEngine(config: Record<string, unknown> = {}): Promise<Engine> {
  return startTestEngine({ modules: [{ name: 'flint-queue', config: { ...(location ? { adapter: location.ref } : {}), ...config } }] });
}

/** Runs the tests of a describe block on a fresh place of `backend` each. */
function onBackend(backend: (typeof QUEUE_BACKENDS)[number]): void {
  beforeEach(async () => {
    location = await backend.prepare();
  });
  afterEach(async () => {
    await cleanup();
    await location?.cleanup();
    location = undefined;
  });
}

// Backends whose server is absent were reported (skipped with the reason) by support/queue/backends.ts.
const CASES = QUEUE_BACKENDS.filter((b) => b.available).flatMap((backend) =>
  SDK_KINDS.map((kind) => ({ backend, kind, label: `${backend.name}, ${kind} worker` })),
);

/** Registers a subscriber and waits until the module consumes for it (the trigger is bound on the backend). */
async function subscribe(engine: Engine, worker: TestWorker, functionId: string, config: Record<string, unknown>): Promise<void> {
  worker.registerTrigger({ type: 'durable:subscriber', function_id: functionId, config });
  const topic = config.topic as string;
  await waitFor(
    async () => {
      const stats = (await engine.invoke('engine::queue::topic_stats', { topic })) as { subscribers: { function_id: string; consumers: number }[] };
      return stats.subscribers.some((s) => s.function_id === functionId && s.consumers > 0);
    },
    5000,
    `subscriber ${functionId} of ${topic}`,
  );
}

const publish = (worker: TestWorker, topic: string, data: unknown, extra: Record<string, unknown> = {}) =>
  worker.trigger({ function_id: worker.kind === 'iii' ? 'iii::durable::publish' : 'flint::durable::publish', payload: { topic, data, ...extra } });

describe.each(CASES)('flint-queue on $label', ({ backend, kind }: { backend: (typeof QUEUE_BACKENDS)[number]; kind: SdkKind }) => {
  onBackend(backend);

  it('every subscribed function gets each message once; replicas of one function compete', async () => {
    const engine = await startQueueEngine();
    const topic = uid('orders');
    const billing: { worker: string; data: unknown }[] = [];
    const email: unknown[] = [];
    const a = await startWorker(kind, engine);
    const b = await startWorker(kind, engine);
    for (const w of [a, b]) {
      w.registerFunction('test::billing', async (data) => {
        billing.push({ worker: w.name, data });
        await sleep(5);
        return null;
      });
      await subscribe(engine, w, 'test::billing', { topic });
    }
    a.registerFunction('test::email', (data) => {
      email.push(data);
      return null;
    });
    await subscribe(engine, a, 'test::email', { topic });
    await waitFor(async () => ((await engine.invoke('engine::queue::topic_stats', { topic })) as { consumer_count: number }).consumer_count === 3);

    const sent = Array.from({ length: 30 }, (_, i) => ({ n: i, nested: { ok: true }, text: 'é🚀' }));
    for (const data of sent) await publish(a, topic, data);
    await waitFor(() => billing.length >= 30 && email.length >= 30, 5000, 'all deliveries');
    await sleep(100);
    expect(billing.map((d) => d.data).sort((x, y) => (x as { n: number }).n - (y as { n: number }).n)).toEqual(sent);
    expect(email).toEqual(sent);
    // Both replicas took part (the engine spreads calls over the function's providers).
    expect(new Set(billing.map((d) => d.worker)).size).toBe(2);
  });

  it('a condition returning false acks and skips; a failing condition counts as a failure', async () => {
    const engine = await startQueueEngine({ defaults: { max_retries: 1, backoff_ms: 10 } });
    const topic = uid('events');
    const w = await startWorker(kind, engine);
    const handled: unknown[] = [];
    w.registerFunction('test::handle', (data) => {
      handled.push(data);
      return null;
    });
    w.registerFunction('test::only-big', (data) => {
      if (data.n === 13) throw new Error('unlucky');
      return data.n > 10;
    });
    await subscribe(engine, w, 'test::handle', { topic, condition_function_id: 'test::only-big' });
    for (const n of [1, 20, 13, 30]) await publish(w, topic, { n });
    await waitFor(() => handled.length >= 2, 3000);
    const dead = await waitFor(
      async () => {
        const list = (await engine.invoke('engine::queue::dlq_messages', { topic })) as { payload: unknown; error: string; retries: number }[];
        return list.length === 1 ? list : undefined;
      },
      3000,
      'the failed condition to be dead',
    );
    expect(dead[0]).toMatchObject({ payload: { n: 13 }, retries: 2 });
    expect(dead[0]?.error).toContain('unlucky');
    expect(handled).toEqual([{ n: 20 }, { n: 30 }]);
    const stats = (await engine.invoke('engine::queue::topic_stats', { topic })) as Record<string, unknown>;
    expect(stats).toMatchObject({ depth: 0, dead: 1, dlq_depth: 1, in_flight: 0, waiting: 0 });
  });

  it('a failing handler is retried with growing back-off, then dead; redrive and discard', async () => {
    const engine = await startQueueEngine();
    const topic = uid('payments');
    const w = await startWorker(kind, engine);
    const attempts: number[] = [];
    let failUntil = 3;
    w.registerFunction('test::charge', (data) => {
      attempts.push(Date.now());
      if (attempts.length < failUntil) throw new Error(`declined ${data.id}`);
      return null;
    });
    await subscribe(engine, w, 'test::charge', { topic, queue_config: { max_retries: 2, backoff_ms: 100, backoff_type: 'exponential' } });
    await publish(w, topic, { id: 'p1' });
    await waitFor(() => attempts.length === 3, 5000, 'three attempts');
    const [t0, t1, t2] = attempts as [number, number, number];
    // Waits of 100 ms then 200 ms, each less at most a fifth (jitter).
    expect(t1 - t0).toBeGreaterThanOrEqual(75);
    expect(t2 - t1).toBeGreaterThanOrEqual(155);
    expect(t2 - t1).toBeGreaterThan(t1 - t0);

    // Always failing: 1 + max_retries attempts, then a dead letter naming the error.
    attempts.length = 0;
    failUntil = Number.POSITIVE_INFINITY;
    await publish(w, topic, { id: 'p2' });
    const [letter] = await waitFor(async () => {
      const list = (await engine.invoke('engine::queue::dlq_messages', { topic })) as Record<string, unknown>[];
      return list.length === 1 ? list : undefined;
    }, 5000);
    expect(attempts).toHaveLength(3);
    expect(letter).toMatchObject({ payload: { id: 'p2' }, retries: 3, function_id: 'test::charge' });
    expect(letter?.error).toContain('declined p2');
    expect(letter?.failed_at).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(await engine.invoke('engine::queue::dlq_topics', {})).toEqual([{ topic, broker_type: expect.any(String), message_count: 1 }]);

    failUntil = 0;
    expect(await engine.invoke('flint::queue::redrive', { queue: topic })).toEqual({ queue: topic, redriven: 1, unrouted_redriven: 0 });
    await waitFor(() => attempts.length === 4, 3000, 'the redriven message');
    expect(await engine.invoke('engine::queue::dlq_messages', { topic })).toEqual([]);

    failUntil = Number.POSITIVE_INFINITY;
    attempts.length = 0;
    await publish(w, topic, { id: 'p3' });
    const [again] = await waitFor(async () => {
      const list = (await engine.invoke('engine::queue::dlq_messages', { topic })) as { id: string }[];
      return list.length === 1 ? list : undefined;
    }, 5000);
    expect(await engine.invoke('flint::queue::discard_message', { queue: topic, message_id: again?.id })).toEqual({
      queue: topic,
      message_id: again?.id,
      discarded: 1,
    });
    expect(await engine.invoke('iii::queue::discard_message', { queue: topic, message_id: again?.id })).toMatchObject({ discarded: 0 });
    expect(await engine.invoke('engine::queue::dlq_messages', { topic })).toEqual([]);
  });

  it('named queues: TriggerAction.Enqueue answers a receipt and the function gets exactly the data', async () => {
    const engine = await startQueueEngine({
      queue_configs: { jobs: { concurrency: 2 }, ledger: { type: 'fifo', message_group_field: 'account', concurrency: 4 } },
    });
    const w = await startWorker(kind, engine);
    const got: unknown[] = [];
    w.registerFunction('test::job', (data) => {
      got.push(data);
      return null;
    });
    const receipt = await w.trigger({ function_id: 'test::job', payload: { task: 'resize', size: 3 }, action: { type: 'enqueue', queue: 'jobs' } });
    expect(receipt).toEqual({ messageReceiptId: expect.any(String) });
    await waitFor(() => got.length === 1, 3000);
    expect(got).toEqual([{ task: 'resize', size: 3 }]);

    const unknown = await outcome(w.trigger({ function_id: 'test::job', payload: {}, action: { type: 'enqueue', queue: 'nope' } }));
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.error).toMatchObject({ code: 'enqueue_error', message: expect.stringContaining("Queue 'nope' not found") });
    const noGroup = await outcome(w.trigger({ function_id: 'test::job', payload: { amount: 1 }, action: { type: 'enqueue', queue: 'ledger' } }));
    if (noGroup.ok) throw new Error('a FIFO message without its group field was accepted');
    // (iii-sdk puts the code in front of the message.)
    expect(noGroup.error).toMatchObject({
      code: 'enqueue_error',
      message: expect.stringContaining("FIFO queue 'ledger' requires field 'account' in data, but it was not found"),
    });
    const nullGroup = await outcome(w.trigger({ function_id: 'test::job', payload: { account: null }, action: { type: 'enqueue', queue: 'ledger' } }));
    if (nullGroup.ok) throw new Error('a FIFO message with a null group was accepted');
    expect(nullGroup.error.message).toContain("FIFO queue 'ledger': field 'account' must not be null");

    // A function nobody provides fails at consume time (retried, then dead) without holding up the queue.
    await w.trigger({ function_id: 'test::missing', payload: { lost: false }, action: { type: 'enqueue', queue: 'jobs' } });
    await w.trigger({ function_id: 'test::job', payload: { after: 'missing' }, action: { type: 'enqueue', queue: 'jobs' } });
    await waitFor(() => got.length === 2, 3000, 'the job after the missing function');
    const topics = (await engine.invoke('engine::queue::list_topics', {})) as { name: string; broker_type: string }[];
    expect(topics).toEqual(expect.arrayContaining([{ name: 'jobs', broker_type: 'function_queue', subscriber_count: 2 }]));
  });

  it('a topic without subscribers keeps its messages as unrouted; a redrive hands them to a new subscriber', async () => {
    const engine = await startQueueEngine({ unrouted_max: 3 });
    const topic = uid('early');
    const w = await startWorker(kind, engine);
    for (const n of [1, 2, 3]) await publish(w, topic, { n });
    expect(await engine.invoke('engine::queue::topic_stats', { topic })).toMatchObject({ unrouted: 3, depth: 0 });
    expect(await engine.invoke('engine::queue::list_topics', {})).toContainEqual({ name: topic, broker_type: expect.any(String), subscriber_count: 0 });
    const full = await outcome(engine.invoke('flint::durable::publish', { topic, data: { n: 4 } }));
    if (full.ok) throw new Error('a fourth unrouted message was accepted over unrouted_max');
    expect(full.error).toMatchObject({ code: 'unrouted_full' });

    const got: unknown[] = [];
    w.registerFunction('test::late', (data) => {
      got.push(data);
      return null;
    });
    await subscribe(engine, w, 'test::late', { topic });
    expect(await engine.invoke('flint::queue::redrive', { queue: topic })).toEqual({ queue: topic, redriven: 0, unrouted_redriven: 3 });
    await waitFor(() => got.length === 3, 3000);
    expect(got).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(await engine.invoke('engine::queue::topic_stats', { topic })).toMatchObject({ unrouted: 0 });
  });

  it('chains: a handler publishes to the next topic; trace context and delay are kept', async () => {
    const engine = await startQueueEngine();
    const [orders, payments, emails] = [uid('orders'), uid('payments'), uid('emails')];
    const w = await startWorker(kind, engine);
    const sent: { data: unknown; traceparent?: string; at: number }[] = [];
    w.registerFunction('test::order', async (data) => {
      await publish(w, payments, { order: data.id, amount: 10 });
      return null;
    });
    w.registerFunction('test::pay', async (data) => {
      await publish(w, emails, { order: data.order, paid: data.amount }, { delay_ms: 200 });
      return null;
    });
    w.registerFunction('test::email', (data, ctx) => {
      sent.push({ data, traceparent: ctx?.traceparent, at: Date.now() });
      return null;
    });
    await subscribe(engine, w, 'test::order', { topic: orders });
    await subscribe(engine, w, 'test::pay', { topic: payments });
    await subscribe(engine, w, 'test::email', { topic: emails });
    const start = Date.now();
    await engine.invoke('flint::durable::publish', { topic: orders, data: { id: 'o-1' } }, { traceparent: TRACEPARENT });
    await waitFor(() => sent.length === 1, 5000, 'the email at the end of the chain');
    expect(sent[0]?.data).toEqual({ order: 'o-1', paid: 10 });
    expect((sent[0]?.at ?? 0) - start).toBeGreaterThanOrEqual(190);
    if (kind === 'flint') expect(sent[0]?.traceparent?.split('-')[1]).toBe(TRACEPARENT.split('-')[1]);
  });

  it('bad input: clear errors, nothing stored, the engine keeps running', async () => {
    const engine = await startQueueEngine();
    const w = await startWorker(kind, engine);
    const call = (function_id: string, payload: unknown) => outcome(w.trigger({ function_id, payload }));
    const codeOf = async (p: ReturnType<typeof call>) => {
      const o = await p;
      return o.ok ? 'ok' : o.error.code;
    };
    expect(await codeOf(call('flint::durable::publish', { data: 1 }))).toBe('topic_not_set');
    expect(await codeOf(call('flint::durable::publish', { topic: '', data: 1 }))).toBe('topic_not_set');
    expect(await codeOf(call('flint::durable::publish', { topic: 't' }))).toBe('invalid_payload');
    expect(await codeOf(call('flint::durable::publish', { topic: 't', data: 1, delay_ms: -5 }))).toBe('invalid_payload');
    expect(await codeOf(call('flint::durable::publish', 'not an object'))).toBe('invalid_payload');
    expect(await codeOf(call('flint::queue::redrive', {}))).toBe('queue_not_set');
    expect(await codeOf(call('flint::queue::redrive_message', { queue: 'q' }))).toBe('message_id_not_set');
    expect(await codeOf(call('engine::queue::topic_stats', {}))).toBe('topic_not_set');
    expect(await codeOf(call('engine::queue::dlq_messages', { topic: uid('never') }))).toBe('queue_not_found');
    expect(await codeOf(call('engine::queue::dlq_messages', { topic: 't', limit: 'all' }))).toBe('invalid_payload');

    // A FIFO subscriber makes a message without its group field a refused publish.
    const topic = uid('fifo');
    w.registerFunction('test::ordered', () => null);
    await subscribe(engine, w, 'test::ordered', { topic, queue_config: { type: 'fifo', message_group_field: 'account' } });
    expect(await codeOf(call('flint::durable::publish', { topic, data: { amount: 1 } }))).toBe('message_group_missing');
    expect(await engine.invoke('engine::queue::topic_stats', { topic })).toMatchObject({ depth: 0, delayed: 0 });
    expect(await codeOf(call('flint::durable::publish', { topic, data: { account: 'a', amount: 1 } }))).toBe('ok');
  });
});

describe('durable:subscriber trigger config', () => {
  it('refuses a trigger without a topic, with an unknown key, or with a setting given twice', async () => {
    const engine = await startQueueEngine();
    const w = await startWorker('flint', engine);
    w.registerFunction('test::h', () => null);
    const native = w.native as FlintWorker;
    const refused = async (config: unknown) => {
      const o = await outcome(native.registerTrigger({ type: 'durable:subscriber', function_id: 'test::h', config }).ready);
      if (o.ok) throw new Error(`accepted ${JSON.stringify(config)}`);
      return o.error.message;
    };
    expect(await refused({})).toContain('topic');
    expect(await refused({ topic: '' })).toContain('topic');
    expect(await refused({ topic: 't', condition_function: 'x' })).toContain('condition_function');
    expect(await refused({ topic: 't', queue_config: { maxRetries: 1, max_retries: 2 } })).toContain('either maxRetries or max_retries');
    expect(await refused({ topic: 't', queue_config: { type: 'lifo' } })).toContain('type');
    expect(await refused({ topic: 't', queue_config: { message_group_field: 'a' } })).toContain('fifo');
    // iii-sdk's camelCase keys are accepted.
    await native.registerTrigger({
      type: 'durable:subscriber',
      function_id: 'test::h',
      config: {
        topic: 't',
        queue_config: { type: 'fifo', maxRetries: 2, concurrency: 3, visibilityTimeout: 5, delaySeconds: 0, backoffType: 'fixed', backoffDelayMs: 10 },
      },
    }).ready;
  });
});

describe('the @flint/sdk queue client (worker.queue)', () => {
  it('publish (with delay), subscribe, stats, deadLetters and redrive', async () => {
    const engine = await startQueueEngine({ defaults: { max_retries: 0 } });
    const w = await startWorker('flint', engine);
    const native = w.native as FlintWorker;
    const topic = uid('sdk');
    const got: { data: unknown; at: number }[] = [];
    let fail = true;
    const sub = native.queue.subscribe<{ n: number }>(
      topic,
      (data) => {
        if (data.n === 2 && fail) throw new Error('two is refused');
        got.push({ data, at: Date.now() });
        return null;
      },
      { function_id: 'test::sdk-sub', queue_config: { concurrency: 1 } },
    );
    await sub.trigger.ready;
    await waitFor(() => findTrigger(engine, (t) => t.function_id === 'test::sdk-sub'));
    const start = Date.now();
    await native.queue.publish(topic, { n: 1 }, { delayMs: 150 });
    await native.queue.publish(topic, { n: 2 });
    const [letter] = await waitFor(async () => {
      const list = await native.queue.deadLetters<{ n: number }>(topic);
      return list.length === 1 ? list : undefined;
    }, 3000);
    expect(letter).toMatchObject({ payload: { n: 2 }, retries: 1, function_id: 'test::sdk-sub' });
    await waitFor(() => got.length === 1, 3000);
    expect(got[0]?.data).toEqual({ n: 1 });
    expect((got[0]?.at ?? 0) - start).toBeGreaterThanOrEqual(140);
    expect(await native.queue.stats(topic)).toMatchObject({ dead: 1, consumer_count: 1 });
    fail = false;
    expect(await native.queue.redrive(topic)).toEqual({ queue: topic, redriven: 1, unrouted_redriven: 0 });
    await waitFor(() => got.length === 2, 3000);
    const refused = await outcome(native.queue.publish('', { n: 3 }));
    expect(refused.ok ? 'ok' : refused.error.code).toBe('topic_not_set');
    sub.unregister();
    await waitFor(async () => !(await findTrigger(engine, (t) => t.function_id === 'test::sdk-sub')));
  });
});
