/**
 * The States API through flint-state's functions: PUT / DELETE fire the `state` triggers of workers,
 * GET lists scopes with their counts and a scope's keys sorted, paged and filtered; keys with `/` and
 * spaces work percent-encoded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, type Json, startConsoleEnv, uid, waitFor } from './support/console-env.js';

let env: ConsoleEnv;
const scope = uid('users');
const events: Json[] = [];
const path = (s: string, key?: string) => `/_console/states/${encodeURIComponent(s)}${key === undefined ? '' : `/${encodeURIComponent(key)}`}`;

beforeAll(async () => {
  env = await startConsoleEnv();
  const fn = `${uid('states')}::changed`;
  const worker = await env.worker((w) => {
    w.registerFunction(fn, (event: Json) => {
      events.push(event);
      return null;
    });
  });
  await worker.registerTrigger({ type: 'state', function_id: fn, config: { scope } }).ready;
});

afterAll(() => env?.close());

const eventFor = (key: string, type: string) =>
  waitFor(() => events.find((e) => e.key === key && e.event_type === type), 3000, `${type} of ${key} (seen: ${JSON.stringify(events)})`);

describe('the States API', () => {
  it("PUT sets a key (state:created, then state:updated for the worker's trigger) and answers old and new value", async () => {
    const created = await env.api('PUT', path(scope, 'ada'), { value: { name: 'Ada' } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ old_value: null, new_value: { name: 'Ada' } });
    expect(await eventFor('ada', 'state:created')).toMatchObject({ scope, new_value: { name: 'Ada' } });

    const updated = await env.api('PUT', path(scope, 'ada'), { value: { name: 'Ada L.' } });
    expect(updated.body).toMatchObject({ old_value: { name: 'Ada' }, new_value: { name: 'Ada L.' } });
    expect(await eventFor('ada', 'state:updated')).toMatchObject({ old_value: { name: 'Ada' }, new_value: { name: 'Ada L.' } });
  });

  it('PUT takes any JSON value, null included, and refuses a body without value', async () => {
    const other = uid('values');
    for (const [key, value] of [
      ['n', 42],
      ['s', 'text'],
      ['l', [1, 2]],
      ['z', null],
    ] as const) {
      const res = await env.api('PUT', path(other, key), { value });
      expect(res.status).toBe(200);
    }
    const list = await env.api('GET', path(other));
    expect(list.body.entries).toEqual([
      { key: 'l', value: [1, 2] },
      { key: 'n', value: 42 },
      { key: 's', value: 'text' },
      { key: 'z', value: null },
    ]);
    const missing = await env.api('PUT', path(other, 'x'), { val: 1 });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('invalid_request');
  });

  it('GET /_console/states lists the scopes with their real counts', async () => {
    const counted = uid('counted');
    for (const key of ['a', 'b', 'c']) await env.api('PUT', path(counted, key), { value: key });
    const res = await env.api('GET', '/_console/states');
    expect(res.status).toBe(200);
    expect(res.body.groups).toContainEqual({ scope: counted, count: 3 });
    expect(res.body.groups.find((g: Json) => g.scope === scope)?.count).toBeGreaterThanOrEqual(1);
  });

  it('GET /_console/states/:scope lists keys sorted, with offset, limit, q and the total', async () => {
    const paged = uid('paged');
    const keys = ['delta', 'alpha', 'charlie', 'bravo', 'echo', 'alpha-2'];
    for (const key of keys) await env.api('PUT', path(paged, key), { value: key.length });
    const all = await env.api('GET', path(paged));
    expect(all.body).toMatchObject({ scope: paged, total: 6 });
    expect(all.body.entries.map((e: Json) => e.key)).toEqual([...keys].sort());

    const page = await env.api('GET', `${path(paged)}?offset=2&limit=2`);
    expect(page.body.total).toBe(6);
    expect(page.body.entries.map((e: Json) => e.key)).toEqual(['bravo', 'charlie']);

    const filtered = await env.api('GET', `${path(paged)}?q=ALPHA`);
    expect(filtered.body.entries.map((e: Json) => e.key)).toEqual(['alpha', 'alpha-2']);
    expect(filtered.body.total).toBe(2);

    const empty = await env.api('GET', path(uid('nothing-here')));
    expect(empty.body).toMatchObject({ entries: [], total: 0 });

    for (const query of ['limit=-1', 'limit=1001', 'offset=x', 'limit=1.5']) {
      const bad = await env.api('GET', `${path(paged)}?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body.code).toBe('invalid_request');
    }
  });

  it('DELETE removes a key and fires state:deleted', async () => {
    await env.api('PUT', path(scope, 'grace'), { value: { name: 'Grace' } });
    await eventFor('grace', 'state:created');
    const res = await env.api('DELETE', path(scope, 'grace'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ old_value: { name: 'Grace' } });
    expect(await eventFor('grace', 'state:deleted')).toMatchObject({ scope, old_value: { name: 'Grace' } });
    const list = await env.api('GET', path(scope));
    expect(list.body.entries.map((e: Json) => e.key)).not.toContain('grace');
  });

  it('handles keys and scopes with / and spaces when percent-encoded', async () => {
    const odd = `${uid('team')}/a b`;
    const key = 'path/to key?#%';
    const put = await env.api('PUT', path(odd, key), { value: 'v' });
    expect(put.status).toBe(200);
    const list = await env.api('GET', path(odd));
    expect(list.body).toMatchObject({ scope: odd, entries: [{ key, value: 'v' }], total: 1 });
    const worker = await env.worker();
    expect(await worker.state.get(odd, key)).toBe('v');
    const del = await env.api('DELETE', path(odd, key));
    expect(del.body).toMatchObject({ old_value: 'v' });
    expect(await worker.state.get(odd, key)).toBeNull();
  });

  it('answers a path segment that is not valid percent-encoding with 400, not a server error', async () => {
    for (const [method, p] of [
      ['GET', '/_console/states/%ZZ'],
      ['PUT', `/_console/states/${scope}/%E0%A4%A`],
      ['DELETE', '/_console/states/a/%'],
    ] as const) {
      const res = await env.api(method, p, method === 'PUT' ? { value: 1 } : undefined);
      expect(res.status, `${method} ${p}`).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
  });
});
