/**
 * flint-state functions through real workers (@flint/sdk and iii-sdk@0.11.6): result shapes, null
 * values, bad input (invalid_payload naming the field) and discovery (request/response formats).
 */
import type { Engine } from '@flint/engine';
import { EngineFunctions, type FunctionInfo } from '@flint/protocol';
import type { Worker as FlintWorker } from '@flint/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, type TestWorker, findTrigger, startWorker } from '../support/harness.js';
import { startStateEngine } from '../support/state/helpers.js';
import { outcome, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

const MAX_VALUE_BYTES = 1024;
const STATE_FUNCTIONS = ['state::get', 'state::set', 'state::delete', 'state::update', 'state::list', 'state::list_groups'];

describe.each(SDK_KINDS)('state functions through a %s worker', (kind: SdkKind) => {
  let engine: Engine;
  let worker: TestWorker;
  // biome-ignore lint/suspicious/noExplicitAny: results are arbitrary JSON
  const call = (function_id: string, payload: unknown): Promise<any> => worker.trigger({ function_id, payload });
  // A missing key: the engine leaves `result` out, as upstream does, so iii-sdk callers get undefined
  // and @flint/sdk callers get null.
  const missing = kind === 'iii' ? undefined : null;
  const bad = async (function_id: string, payload: unknown) => {
    const o = await outcome(call(function_id, payload));
    if (o.ok) throw new Error(`${function_id} accepted ${JSON.stringify(payload)}: ${JSON.stringify(o.value)}`);
    return o.error;
  };

  beforeEach(async () => {
    engine = await startStateEngine({ max_value_bytes: MAX_VALUE_BYTES });
    worker = await startWorker(kind, engine);
  });

  it('set, get, delete, update, list and list_groups return the documented shapes', async () => {
    const scope = uid('users');

    expect(await call('state::get', { scope, key: 'ada' })).toBe(missing);
    expect(await call('state::set', { scope, key: 'ada', value: { name: 'Ada' } })).toEqual({ old_value: null, new_value: { name: 'Ada' } });
    expect(await call('state::get', { scope, key: 'ada' })).toEqual({ name: 'Ada' });
    expect(await call('state::set', { scope, key: 'ada', value: { name: 'Ada L.' } })).toEqual({ old_value: { name: 'Ada' }, new_value: { name: 'Ada L.' } });
    expect(await call('state::set', { scope, key: 'bob', value: 7 })).toEqual({ old_value: null, new_value: 7 });

    const updated = await call('state::update', { scope, key: 'ada', ops: [{ type: 'increment', path: 'logins', by: 2 }] });
    expect(updated).toEqual({ old_value: { name: 'Ada L.' }, new_value: { name: 'Ada L.', logins: 2 } });
    expect(Object.keys(updated)).not.toContain('errors'); // omitted when no operation failed

    const created = await call('state::update', { scope, key: 'cy', ops: [{ type: 'set', path: 'x', value: 1 }] });
    expect(created).toEqual({ old_value: null, new_value: { x: 1 } });

    const partial = await call('state::update', {
      scope,
      key: 'bob',
      ops: [
        { type: 'increment', path: '', by: 1 },
        { type: 'append', path: 'x', value: 1 },
      ],
    });
    expect(partial).toEqual({
      old_value: 7,
      new_value: 8,
      errors: [{ op_index: 1, code: 'append.target_not_object', message: expect.any(String) }],
    });

    const values = (await call('state::list', { scope })) as unknown[];
    expect(values).toHaveLength(3);
    expect(values).toEqual(expect.arrayContaining([{ name: 'Ada L.', logins: 2 }, 8, { x: 1 }]));
    expect(await call('state::list', { scope: uid('nothing-here') })).toEqual([]);

    const other = uid('aaa-other');
    await call('state::set', { scope: other, key: 'k', value: 'v' });
    expect(await call('state::list_groups', {})).toEqual({ groups: [other, scope].sort() });

    expect(await call('state::delete', { scope, key: 'ada' })).toEqual({ old_value: { name: 'Ada L.', logins: 2 } });
    expect(await call('state::get', { scope, key: 'ada' })).toBe(missing);
    expect(await call('state::delete', { scope, key: 'ada' })).toEqual({ old_value: null });
    expect(await call('state::delete', { scope: uid('never'), key: 'never' })).toEqual({ old_value: null });

    // A scope whose last key is deleted is no longer a group.
    expect(await call('state::delete', { scope: other, key: 'k' })).toEqual({ old_value: 'v' });
    expect(await call('state::list_groups', {})).toEqual({ groups: [scope] });
  });

  it('stores any JSON value; `data` is accepted as an alias of `value`', async () => {
    const scope = uid('json');
    const samples: unknown[] = ['text', 0, -1.5, true, false, [], [1, 'two', null], {}, { deep: { er: [{ x: 1 }] } }, 'ünïcødé ✓'];
    for (const [i, value] of samples.entries()) {
      expect(await call('state::set', { scope, key: `k${i}`, value })).toEqual({ old_value: null, new_value: value });
      expect(await call('state::get', { scope, key: `k${i}` })).toEqual(value);
    }
    expect(await call('state::set', { scope, key: 'alias', data: { via: 'data' } })).toEqual({ old_value: null, new_value: { via: 'data' } });
    expect(await call('state::get', { scope, key: 'alias' })).toEqual({ via: 'data' });
  });

  it('a key holding null exists: second set is state:updated with old_value null, list and list_groups include it, delete fires', async () => {
    const scope = uid('nulls');
    const events: { event_type: string; old_value: unknown; new_value: unknown }[] = [];
    worker.registerFunction(`${scope}::on-change`, (e) => {
      events.push(e);
      return null;
    });
    worker.registerTrigger({ type: 'state', function_id: `${scope}::on-change`, config: { scope } });
    await waitFor(() => findTrigger(engine, (t) => t.function_id === `${scope}::on-change`), 2000, 'the state trigger to be registered');

    expect(await call('state::set', { scope, key: 'n', value: null })).toEqual({ old_value: null, new_value: null });
    expect(await call('state::get', { scope, key: 'n' })).toBe(missing);
    expect(await call('state::list', { scope })).toEqual([null]);
    expect((await call('state::list_groups', {})).groups).toContain(scope);
    expect(await call('state::set', { scope, key: 'n', value: 1 })).toEqual({ old_value: null, new_value: 1 });
    expect(await call('state::set', { scope, key: 'n', value: null })).toEqual({ old_value: 1, new_value: null });
    expect(await call('state::delete', { scope, key: 'n' })).toEqual({ old_value: null });

    await waitFor(() => events.length >= 4, 2000, 'four state events');
    expect(events).toEqual([
      { type: 'state', event_type: 'state:created', scope, key: 'n', old_value: null, new_value: null },
      { type: 'state', event_type: 'state:updated', scope, key: 'n', old_value: null, new_value: 1 },
      { type: 'state', event_type: 'state:updated', scope, key: 'n', old_value: 1, new_value: null },
      { type: 'state', event_type: 'state:deleted', scope, key: 'n', old_value: null, new_value: null },
    ]);
  });

  it('an update on a key holding null keeps old_value null but is an update of an existing key', async () => {
    const scope = uid('nulls');
    await call('state::set', { scope, key: 'n', value: null });
    expect(await call('state::update', { scope, key: 'n', ops: [{ type: 'set', path: '', value: 5 }] })).toEqual({ old_value: null, new_value: 5 });
    // append at the root of an existing null starts from null (a string stays a string)
    await call('state::set', { scope, key: 'm', value: null });
    expect(await call('state::update', { scope, key: 'm', ops: [{ type: 'append', path: '', value: 'x' }] })).toEqual({ old_value: null, new_value: 'x' });
  });

  describe('bad input is answered with invalid_payload naming the field, and the engine keeps serving', () => {
    const scope = 'bad-input';
    const cases: [string, string, unknown, RegExp][] = [
      ['scope missing (set)', 'state::set', { key: 'k', value: 1 }, /scope/],
      ['scope a number (set)', 'state::set', { scope: 5, key: 'k', value: 1 }, /scope/],
      ['scope null (get)', 'state::get', { scope: null, key: 'k' }, /scope/],
      ['scope empty (list)', 'state::list', { scope: '' }, /scope/],
      ['scope missing (list)', 'state::list', {}, /scope/],
      ['scope an array (delete)', 'state::delete', { scope: ['a'], key: 'k' }, /scope/],
      ['key missing (get)', 'state::get', { scope }, /key/],
      ['key empty (set)', 'state::set', { scope, key: '', value: 1 }, /key/],
      ['key an object (update)', 'state::update', { scope, key: { a: 1 }, ops: [] }, /key/],
      ['key a number (delete)', 'state::delete', { scope, key: 3 }, /key/],
      ['value missing (set)', 'state::set', { scope, key: 'k' }, /value/],
      ['ops missing (update)', 'state::update', { scope, key: 'k' }, /ops/],
      ['ops not an array (update)', 'state::update', { scope, key: 'k', ops: { type: 'set', path: 'a', value: 1 } }, /ops/],
      ['an op that is not an object', 'state::update', { scope, key: 'k', ops: ['set'] }, /ops\[0\]/],
      [
        'unknown op type',
        'state::update',
        {
          scope,
          key: 'k',
          ops: [
            { type: 'set', path: 'a', value: 1 },
            { type: 'multiply', path: 'a', by: 2 },
          ],
        },
        /ops\[1\]\.type/,
      ],
      ['op without a type', 'state::update', { scope, key: 'k', ops: [{ path: 'a' }] }, /ops\[0\]\.type/],
      ['payload an array', 'state::get', [1, 2], /payload/],
      ['payload a string', 'state::set', 'scope=a', /payload/],
      ['list_groups payload a number', 'state::list_groups', 5, /payload/],
    ];

    it.each(cases)('%s', async (_name, functionId, payload, field) => {
      const error = await bad(functionId, payload);
      expect(error.code).toBe('invalid_payload');
      expect(error.message).toMatch(field);
      // The next call works, and the bad one stored nothing.
      expect(await call('state::set', { scope, key: 'after', value: 'ok' })).toEqual({ old_value: null, new_value: 'ok' });
      expect(await call('state::list', { scope })).toEqual(['ok']);
    });

    it('a value over max_value_bytes is refused and nothing is stored', async () => {
      const big = 'x'.repeat(MAX_VALUE_BYTES); // JSON adds two quotes: MAX + 2 bytes
      const error = await bad('state::set', { scope, key: 'big', value: big });
      expect(error.code).toBe('invalid_payload');
      expect(error.message).toMatch(/value/);
      expect(error.message).toMatch(/max_value_bytes/);
      expect(await call('state::get', { scope, key: 'big' })).toBe(missing);
      // Exactly at the limit is fine.
      const fits = 'x'.repeat(MAX_VALUE_BYTES - 2);
      expect(await call('state::set', { scope, key: 'fits', value: fits })).toEqual({ old_value: null, new_value: fits });
    });

    it('the size limit counts UTF-8 bytes of the JSON, not characters', async () => {
      const chars = Math.floor(MAX_VALUE_BYTES / 2); // half as many characters as the limit, but 'é' is two bytes (+2 quotes)
      const error = await bad('state::set', { scope, key: 'utf8', value: 'é'.repeat(chars) });
      expect(error.code).toBe('invalid_payload');
      expect(error.message).toMatch(/max_value_bytes/);
    });

    it('an update whose RESULT exceeds max_value_bytes is refused and the stored value is unchanged', async () => {
      const half = 'y'.repeat(Math.floor(MAX_VALUE_BYTES / 2));
      await call('state::set', { scope, key: 'grow', value: { s: half } });
      const error = await bad('state::update', { scope, key: 'grow', ops: [{ type: 'append', path: 's', value: half }] });
      expect(error.code).toBe('invalid_payload');
      expect(error.message).toMatch(/max_value_bytes/);
      expect(await call('state::get', { scope, key: 'grow' })).toEqual({ s: half });
      // Within the limit, the same kind of update works.
      expect(await call('state::update', { scope, key: 'grow', ops: [{ type: 'append', path: 's', value: 'z' }] })).toEqual({
        old_value: { s: half },
        new_value: { s: `${half}z` },
      });
    });

    it('an update on a missing key whose result is too big stores nothing', async () => {
      const error = await bad('state::update', { scope, key: 'never', ops: [{ type: 'set', path: 'a', value: 'q'.repeat(MAX_VALUE_BYTES) }] });
      expect(error.code).toBe('invalid_payload');
      expect(await call('state::list', { scope })).toEqual([]);
      expect((await call('state::list_groups', {})).groups).not.toContain(scope);
    });
  });

  it('discovery: engine::functions::list shows request_format for all six, response_format for all but state::get', async () => {
    const { functions } = (await call(EngineFunctions.LIST_FUNCTIONS, {})) as { functions: FunctionInfo[] };
    const byId = new Map(functions.map((f) => [f.function_id, f]));
    for (const id of STATE_FUNCTIONS) {
      const info = byId.get(id);
      expect(info, `${id} is listed`).toBeDefined();
      expect(info?.description, `${id} has a description`).toEqual(expect.any(String));
      expect(info?.request_format, `${id} request_format`).toMatchObject({ type: 'object' });
    }
    expect(byId.get('state::get')?.response_format).toBeNull();
    for (const id of ['state::set', 'state::delete', 'state::update', 'state::list', 'state::list_groups']) {
      expect(byId.get(id)?.response_format, `${id} response_format`).toEqual(expect.objectContaining({ type: expect.any(String) }));
    }
    // The request formats name the fields a caller has to send.
    expect(byId.get('state::get')?.request_format).toMatchObject({ required: ['scope', 'key'] });
    expect(byId.get('state::set')?.request_format).toMatchObject({ required: ['scope', 'key', 'value'] });
    expect(byId.get('state::delete')?.request_format).toMatchObject({ required: ['scope', 'key'] });
    expect(byId.get('state::update')?.request_format).toMatchObject({ required: ['scope', 'key', 'ops'] });
    expect(byId.get('state::list')?.request_format).toMatchObject({ required: ['scope'] });
    expect(byId.get('state::set')?.response_format).toMatchObject({ required: ['old_value', 'new_value'] });
    expect(byId.get('state::delete')?.response_format).toMatchObject({ required: ['old_value'] });
    expect(byId.get('state::list')?.response_format).toMatchObject({ type: 'array' });
    expect(byId.get('state::list_groups')?.response_format).toMatchObject({ required: ['groups'] });
    type UpdateFormat = { properties: { ops: { items: { properties: { type: { enum: string[] } } } } } };
    const updateFormat = byId.get('state::update')?.request_format as UpdateFormat;
    const opTypes = updateFormat.properties.ops.items.properties.type.enum;
    expect([...opTypes].sort()).toEqual(['append', 'decrement', 'increment', 'merge', 'remove', 'set']);
    // The `state` trigger type is discoverable too.
    const { trigger_types } = (await call(EngineFunctions.LIST_TRIGGER_TYPES, {})) as { trigger_types: { id: string }[] };
    expect(trigger_types.map((t) => t.id)).toContain('state');
  });
});

describe('the @flint/sdk state client (worker.state)', () => {
  it('get, set, delete, update, list and listGroups', async () => {
    const engine = await startStateEngine();
    const worker = await startWorker('flint', engine);
    const state = (worker.native as FlintWorker).state;
    const scope = uid('client');

    expect(await state.get(scope, 'a')).toBeNull();
    expect(await state.set(scope, 'a', { n: 1 })).toEqual({ old_value: null, new_value: { n: 1 } });
    expect(await state.get<{ n: number }>(scope, 'a')).toEqual({ n: 1 });
    expect(await state.update(scope, 'a', [{ type: 'increment', path: 'n', by: 41 }])).toEqual({ old_value: { n: 1 }, new_value: { n: 42 } });
    expect(
      await state.update(scope, 'a', [
        { type: 'increment', path: 'n', by: 1 },
        { type: 'merge', path: 'n', value: { x: 1 } },
      ]),
    ).toEqual({
      old_value: { n: 42 },
      new_value: { n: { x: 1 } },
    });
    await state.set(scope, 'b', 'two');
    expect((await state.list(scope)).length).toBe(2);
    expect(await state.listGroups()).toEqual([scope]);
    expect(await state.delete(scope, 'a')).toEqual({ old_value: { n: { x: 1 } } });
    expect(await state.delete(scope, 'a')).toEqual({ old_value: null });
    expect(await state.list(scope)).toEqual(['two']);

    const err = await outcome(state.set('', 'a', 1));
    expect(err.ok).toBe(false);
    expect(!err.ok && err.error.code).toBe('invalid_payload');
    expect(!err.ok && err.error.message).toMatch(/scope/);
    expect(await state.get(scope, 'b')).toBe('two');
  });
});
