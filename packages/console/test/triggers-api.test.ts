/**
 * POST /_console/emit (a payload delivered to a trigger as its source would: a worker-defined type by
 * calling its function, `subscribe` through publish, `durable:subscriber` through the durable queue)
 * and POST /_console/cron/trigger (Trigger Now), with workers providing the types and the functions.
 */
import type { Worker } from '@flint/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, type Json, startConsoleEnv, uid, waitFor } from './support/console-env.js';

let env: ConsoleEnv;
let worker: Worker;
const ns = uid('emit');
const seen: Record<string, Json[]> = {};
const record = (name: string) => (input: Json) => {
  seen[name] ??= [];
  seen[name].push(input);
  return { handled: name, input };
};

beforeAll(async () => {
  env = await startConsoleEnv();
  worker = await env.worker((w) => {
    for (const name of ['webhook', 'pubsub', 'durable', 'route', 'nightly', 'parked']) w.registerFunction(`${ns}::${name}`, record(name));
  });
});

afterAll(() => env?.close());

async function triggerOf(w: Worker, type: string, functionId: string, config: unknown): Promise<string> {
  const ref = w.registerTrigger({ type, function_id: functionId, config });
  await ref.ready;
  return ref.id;
}

describe('POST /_console/emit', () => {
  it('delivers to a trigger of a worker-defined type by calling its function (delivered_via invoke)', async () => {
    const provider = await env.worker();
    const registered: Json[] = [];
    const type = `${ns}.webhook`;
    provider.registerTriggerType(
      { id: type, description: 'a webhook from the outside' },
      {
        registerTrigger: (t) => {
          registered.push(t);
        },
        unregisterTrigger: () => {},
      },
    );
    await waitFor(async () => (await env.api('GET', '/_console/triggers')).body.trigger_types.some((t: Json) => t.id === type), 3000, 'the trigger type');
    const id = await triggerOf(worker, type, `${ns}::webhook`, { path: '/hook' });
    await waitFor(() => registered.some((t) => t.id === id), 3000, 'the provider to get the trigger');

    const res = await env.api('POST', '/_console/emit', { trigger_id: id, payload: { event: 'push', n: 1 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', delivered_via: 'invoke', result: { handled: 'webhook', input: { event: 'push', n: 1 } } });
    expect(res.body.duration_ms).toBeTypeOf('number');
    expect(seen.webhook).toEqual([{ event: 'push', n: 1 }]);
  });

  it('publishes to the topic of a subscribe trigger (delivered_via publish); the subscriber receives it', async () => {
    const topic = uid('prices');
    const id = await triggerOf(worker, 'subscribe', `${ns}::pubsub`, { topic });
    const res = await env.api('POST', '/_console/emit', { trigger_id: id, payload: { sku: 'A-1', price: 9.5 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', delivered_via: 'publish' });
    await waitFor(() => seen.pubsub?.length === 1, 3000, 'the subscriber to receive the message');
    expect(seen.pubsub).toEqual([{ sku: 'A-1', price: 9.5 }]);
  });

  it('publishes durably to the topic of a durable:subscriber trigger (delivered_via durable_publish); the subscriber receives it', async () => {
    const topic = uid('orders');
    const id = await triggerOf(worker, 'durable:subscriber', `${ns}::durable`, { topic });
    await waitFor(async () => (await env.api('GET', `/_console/queues/${topic}`)).body.consumer_count > 0, 3000, 'the subscriber to consume');
    const res = await env.api('POST', '/_console/emit', { trigger_id: id, payload: { order: 'o-1' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', delivered_via: 'durable_publish' });
    await waitFor(() => seen.durable?.length === 1, 3000, 'the durable subscriber to receive the message');
    expect(seen.durable).toEqual([{ order: 'o-1' }]);
  });

  it('refuses an http trigger with 400 (its source is the HTTP port)', async () => {
    const id = await triggerOf(worker, 'http', `${ns}::route`, { api_path: `/${ns}/route`, http_method: 'POST' });
    const res = await env.api('POST', '/_console/emit', { trigger_id: id, payload: {} });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', error: expect.stringContaining('HTTP request builder') });
    expect(seen.route).toBeUndefined();
  });

  it('refuses a parked trigger (nobody provides its type) with 409 trigger_parked', async () => {
    const id = await triggerOf(worker, `${ns}.nobody`, `${ns}::parked`, {});
    const res = await env.api('POST', '/_console/emit', { trigger_id: id, payload: {} });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('trigger_parked');
    expect(seen.parked).toBeUndefined();
  });

  it('answers an unknown trigger with 404 trigger_not_found, and a missing trigger_id with 400', async () => {
    const res = await env.api('POST', '/_console/emit', { trigger_id: 'no-such-trigger', payload: {} });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('trigger_not_found');
    const missing = await env.api('POST', '/_console/emit', { payload: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('invalid_request');
  });
});

describe('POST /_console/cron/trigger', () => {
  it("runs a cron trigger now: status ok with the function's result, called with manual: true", async () => {
    const id = await triggerOf(worker, 'cron', `${ns}::nightly`, { expression: '0 0 1 1 *' });
    const res = await env.api('POST', '/_console/cron/trigger', { trigger_id: id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      result: { trigger_id: id, function_id: `${ns}::nightly`, status: 'invoked', result: { handled: 'nightly' } },
    });
    expect(seen.nightly).toHaveLength(1);
    expect(seen.nightly?.[0]).toMatchObject({ manual: true, trigger: { id, type: 'cron', expression: '0 0 1 1 *' } });
    const cron = await env.api('GET', '/_console/cron');
    expect(cron.body.jobs.find((j: Json) => j.trigger_id === id)?.last_run).not.toBeNull();
  });

  it('reports an unknown trigger id as status error (trigger_not_found), and a missing one as 400', async () => {
    const res = await env.api('POST', '/_console/cron/trigger', { trigger_id: 'no-such-cron' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'error', error: { code: 'trigger_not_found' } });
    const missing = await env.api('POST', '/_console/cron/trigger', {});
    expect(missing.status).toBe(400);
  });
});
