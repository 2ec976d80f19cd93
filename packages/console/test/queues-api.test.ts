/**
 * The Queues API through flint-queue (builtin, in memory): publish to a topic whose durable subscriber
 * fails, see the message dead with its error and retries, then redrive one, discard one and redrive
 * the rest once the subscriber works again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, type Json, startConsoleEnv, uid, waitFor } from './support/console-env.js';

let env: ConsoleEnv;
const topic = uid('payments');
const fn = `${uid('queue')}::charge`;
let working = false;
const attempts: Json[] = [];
const handled: Json[] = [];

beforeAll(async () => {
  env = await startConsoleEnv();
  const worker = await env.worker((w) => {
    w.registerFunction(fn, (data: Json) => {
      attempts.push(data);
      if (!working) throw new Error(`card declined for ${data.order}`);
      handled.push(data);
      return null;
    });
  });
  // One retry after 10 ms, then dead: a failing message is dead within a few milliseconds.
  await worker.registerTrigger({ type: 'durable:subscriber', function_id: fn, config: { topic, queue_config: { max_retries: 1, backoff_ms: 10 } } }).ready;
  await waitFor(async () => (await env.api('GET', `/_console/queues/${topic}`)).body.consumer_count > 0, 3000, 'the subscriber to consume');
});

afterAll(() => env?.close());

const dead = async (): Promise<Json[]> => (await env.api('GET', `/_console/queues/${topic}/dead`)).body.messages;
const publish = (data: Json) => env.api('POST', `/_console/queues/${topic}/publish`, { data });

describe('the Queues API', () => {
  it('publishes; a message that keeps failing lands in the dead letters with its error and retries', async () => {
    const res = await publish({ order: 'o-1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ published: true, topic });
    const [letter] = await waitFor(async () => ((await dead()).length === 1 ? dead() : undefined), 5000, 'the message to be dead');
    // `retries` is the engine's attempt count: the first attempt and one retry.
    expect(letter).toMatchObject({ payload: { order: 'o-1' }, retries: 2, function_id: fn });
    expect(JSON.stringify(letter.error)).toContain('card declined for o-1');
    expect(letter.id).toBeTypeOf('string');
    expect(attempts.filter((a) => a.order === 'o-1')).toHaveLength(2);

    const all = await env.api('GET', '/_console/queues');
    expect(all.status).toBe(200);
    expect(all.body.available).toBe(true);
    const stats = all.body.queues.find((q: Json) => q.name === topic);
    expect(stats).toMatchObject({ dead: 1, consumer_count: 1 });
    expect(stats.subscribers).toContainEqual(expect.objectContaining({ function_id: fn, dead: 1 }));

    const one = await env.api('GET', `/_console/queues/${topic}`);
    expect(one.body).toMatchObject({ dead: 1 });
  });

  it('redrives one dead letter by id; the subscriber gets it again', async () => {
    const [letter] = await dead();
    working = true;
    const res = await env.api('POST', `/_console/queues/${topic}/dead/${encodeURIComponent(letter.id)}/redrive`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ redriven: 1 });
    await waitFor(() => handled.some((h) => h.order === 'o-1'), 3000, 'the redriven message to be handled');
    expect(await dead()).toEqual([]);
  });

  it('discards one dead letter and redrives the rest', async () => {
    working = false;
    await publish({ order: 'o-2' });
    await publish({ order: 'o-3' });
    const letters = await waitFor(async () => {
      const list = await dead();
      return list.length === 2 ? list : undefined;
    }, 5000);
    const two = letters.find((l: Json) => l.payload.order === 'o-2');

    const discarded = await env.api('DELETE', `/_console/queues/${topic}/dead/${encodeURIComponent(two.id)}`);
    expect(discarded.status).toBe(200);
    expect(discarded.body).toMatchObject({ discarded: 1 });
    expect((await dead()).map((l) => l.payload)).toEqual([{ order: 'o-3' }]);
    const again = await env.api('DELETE', `/_console/queues/${topic}/dead/${encodeURIComponent(two.id)}`);
    expect(again.body).toMatchObject({ discarded: 0 });

    working = true;
    const redrive = await env.api('POST', `/_console/queues/${topic}/redrive`);
    expect(redrive.status).toBe(200);
    expect(redrive.body).toMatchObject({ queue: topic, redriven: 1 });
    await waitFor(() => handled.some((h) => h.order === 'o-3'), 3000, 'the redriven message to be handled');
    expect(handled.some((h) => h.order === 'o-2')).toBe(false);
    expect(await dead()).toEqual([]);
  });

  it('pages the dead letters and checks offset and limit', async () => {
    const res = await env.api('GET', `/_console/queues/${topic}/dead?offset=0&limit=1`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ queue: topic, messages: [] });
    const bad = await env.api('GET', `/_console/queues/${topic}/dead?limit=5000`);
    expect(bad.status).toBe(400);
  });
});
