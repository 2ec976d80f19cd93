/**
 * state::update operations (set, merge, increment, decrement, append, remove), their path and value
 * limits, prototype-pollution guards and atomicity under concurrency — through a real worker.
 * Semantics: reference/modules.md §4.3 with Flint's choices (docs/state.md, modules/state/update-ops.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Engine } from '@flint/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { type TestWorker, startWorker } from '../support/harness.js';
import { RawClient } from '../support/raw-client.js';
import { startStateEngine } from '../support/state/helpers.js';
import { uid } from '../support/util.js';

type Op = Record<string, unknown>;
interface UpdateResult {
  old_value: unknown;
  new_value: unknown;
  errors?: { op_index: number; code: string; message: string }[];
}

let engine: Engine;
let worker: TestWorker;
const scope = uid('ops');

beforeAll(async () => {
  engine = await startStateEngine();
  worker = await startWorker('flint', engine);
});
afterAll(cleanup);

const update = (key: string, ops: Op[]): Promise<UpdateResult> => worker.trigger({ function_id: 'state::update', payload: { scope, key, ops } });
const set = (key: string, value: unknown) => worker.trigger({ function_id: 'state::set', payload: { scope, key, value } });
const get = (key: string): Promise<unknown> => worker.trigger({ function_id: 'state::get', payload: { scope, key } });
const fresh = (): string => randomUUID();

/** Runs `ops` on a key holding `initial` (or a missing key when `initial` is undefined). */
async function run(initial: unknown, ops: Op[]): Promise<UpdateResult> {
  const key = fresh();
  if (initial !== undefined) await set(key, initial);
  const result = await update(key, ops);
  // What update answers is what was stored.
  expect(await get(key)).toEqual(result.new_value);
  return result;
}

/** One failing op between two good ones: the failure is reported with its index and code, the others apply. */
async function expectOpError(initial: unknown, badOp: Op, code: string): Promise<UpdateResult> {
  const base = initial === undefined ? {} : initial;
  const result = await run(initial, [{ type: 'set', path: 'before', value: 1 }, badOp, { type: 'set', path: 'after', value: 2 }]);
  expect(result.errors).toEqual([{ op_index: 1, code, message: expect.any(String) }]);
  expect(result.new_value).toEqual({ ...(base as object), before: 1, after: 2 });
  return result;
}

const nest = (levels: number): Record<string, unknown> => {
  let v: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < levels; i++) v = { v };
  return v;
};

describe('set', () => {
  it('root path replaces the whole value; absent path is the root; missing value is null', async () => {
    expect(await run(undefined, [{ type: 'set', path: '', value: 5 }])).toEqual({ old_value: null, new_value: 5 });
    expect(await run({ a: 1 }, [{ type: 'set', value: [1, 2] }])).toEqual({ old_value: { a: 1 }, new_value: [1, 2] });
    expect(await run('text', [{ type: 'set', path: '' }])).toEqual({ old_value: 'text', new_value: null });
  });

  it('a field path sets one first-level key; a missing key starts as {}', async () => {
    expect(await run(undefined, [{ type: 'set', path: 'a', value: { b: 1 } }])).toEqual({ old_value: null, new_value: { a: { b: 1 } } });
    expect(await run({ a: 1, b: 2 }, [{ type: 'set', path: 'a', value: 9 }])).toEqual({ old_value: { a: 1, b: 2 }, new_value: { a: 9, b: 2 } });
    expect(await run({ a: 1 }, [{ type: 'set', path: 'z' }])).toEqual({ old_value: { a: 1 }, new_value: { a: 1, z: null } });
  });

  it('"a.b" is one literal key, not a nested path', async () => {
    expect((await run({ a: { b: 1 } }, [{ type: 'set', path: 'a.b', value: 2 }])).new_value).toEqual({ a: { b: 1 }, 'a.b': 2 });
  });

  it('a field of a non-object is set.target_not_object', async () => {
    for (const initial of [5, 'str', [1], null, true]) {
      const r = await run(initial, [{ type: 'set', path: 'a', value: 1 }]);
      expect(r.errors).toEqual([{ op_index: 0, code: 'set.target_not_object', message: expect.any(String) }]);
      expect(r.new_value).toEqual(initial);
    }
  });
});

describe('merge', () => {
  it('root merge shallow-copies keys into the object (nested objects are replaced, not merged)', async () => {
    const r = await run({ a: 1, b: { x: 1 } }, [{ type: 'merge', value: { b: { y: 2 }, c: 3 } }]);
    expect(r).toEqual({ old_value: { a: 1, b: { x: 1 } }, new_value: { a: 1, b: { y: 2 }, c: 3 } });
    expect((await run({ a: 1 }, [{ type: 'merge', path: '', value: { b: 2 } }])).new_value).toEqual({ a: 1, b: 2 });
    expect((await run({ a: 1 }, [{ type: 'merge', path: [], value: { b: 2 } }])).new_value).toEqual({ a: 1, b: 2 });
  });

  it('root merge on a missing key starts from {}; on a non-object it silently does nothing', async () => {
    expect(await run(undefined, [{ type: 'merge', value: { a: 1 } }])).toEqual({ old_value: null, new_value: { a: 1 } });
    for (const initial of [5, 'str', [1, 2], null]) {
      expect(await run(initial, [{ type: 'merge', value: { a: 1 } }])).toEqual({ old_value: initial, new_value: initial });
    }
  });

  it('a string path merges into that first-level key, creating it', async () => {
    expect((await run({ p: { a: 1 } }, [{ type: 'merge', path: 'p', value: { b: 2 } }])).new_value).toEqual({ p: { a: 1, b: 2 } });
    expect((await run({}, [{ type: 'merge', path: 'q', value: { b: 2 } }])).new_value).toEqual({ q: { b: 2 } });
    expect((await run({}, [{ type: 'merge', path: 'a.b', value: { c: 1 } }])).new_value).toEqual({ 'a.b': { c: 1 } });
  });

  it('an array path walks nested levels, creating missing ones and replacing non-object intermediates with {}', async () => {
    expect((await run(undefined, [{ type: 'merge', path: ['a', 'b', 'c'], value: { d: 1 } }])).new_value).toEqual({ a: { b: { c: { d: 1 } } } });
    expect((await run({ a: 5, keep: true }, [{ type: 'merge', path: ['a', 'b'], value: { d: 1 } }])).new_value).toEqual({ a: { b: { d: 1 } }, keep: true });
    expect((await run({ a: { b: [1, 2], x: 1 } }, [{ type: 'merge', path: ['a', 'b'], value: { d: 1 } }])).new_value).toEqual({ a: { b: { d: 1 }, x: 1 } });
    expect((await run({ a: { b: { old: 1 } } }, [{ type: 'merge', path: ['a', 'b'], value: { new: 2 } }])).new_value).toEqual({ a: { b: { old: 1, new: 2 } } });
    // segments are literal: "x.y" is one key
    expect((await run({}, [{ type: 'merge', path: ['x.y', 'z'], value: { d: 1 } }])).new_value).toEqual({ 'x.y': { z: { d: 1 } } });
  });

  it('a path into a non-object root value is merge.target_not_object', async () => {
    const r = await run(7, [{ type: 'merge', path: ['a'], value: { b: 1 } }]);
    expect(r.errors).toEqual([{ op_index: 0, code: 'merge.target_not_object', message: expect.any(String) }]);
    expect(r.new_value).toBe(7);
  });

  it('a value that is not an object is merge.value.not_an_object', async () => {
    for (const value of [[1, 2], 5, 'str', null, true]) await expectOpError({ k: 0 }, { type: 'merge', value }, 'merge.value.not_an_object');
    await expectOpError({ k: 0 }, { type: 'merge' }, 'merge.value.not_an_object');
  });
});

describe('increment and decrement', () => {
  it('a missing field starts at by (decrement: -by); existing numbers add up', async () => {
    expect(await run(undefined, [{ type: 'increment', path: 'n', by: 5 }])).toEqual({ old_value: null, new_value: { n: 5 } });
    expect((await run({}, [{ type: 'decrement', path: 'n', by: 5 }])).new_value).toEqual({ n: -5 });
    expect((await run({ n: 10 }, [{ type: 'increment', path: 'n', by: 5 }])).new_value).toEqual({ n: 15 });
    expect((await run({ n: 10 }, [{ type: 'decrement', path: 'n', by: 3 }])).new_value).toEqual({ n: 7 });
    expect((await run({ n: 10 }, [{ type: 'increment', path: 'n', by: -3 }])).new_value).toEqual({ n: 7 });
    expect((await run({ n: 0.5 }, [{ type: 'increment', path: 'n', by: 0.25 }])).new_value).toEqual({ n: 0.75 });
    expect(
      (
        await run(
          { n: 1 },
          Array.from({ length: 5 }, () => ({ type: 'increment', path: 'n', by: 1 })),
        )
      ).new_value,
    ).toEqual({ n: 6 });
  });

  it('the root path: on a missing key the number itself; on a number it adds', async () => {
    expect(await run(undefined, [{ type: 'increment', path: '', by: 3 }])).toEqual({ old_value: null, new_value: 3 });
    expect(await run(undefined, [{ type: 'decrement', by: 3 }])).toEqual({ old_value: null, new_value: -3 });
    expect(await run(40, [{ type: 'increment', path: '', by: 2 }])).toEqual({ old_value: 40, new_value: 42 });
    expect(await run(40, [{ type: 'decrement', path: '', by: 2 }])).toEqual({ old_value: 40, new_value: 38 });
  });

  it('a non-number target (including null) is <op>.not_number', async () => {
    for (const target of ['1', null, true, [1], { x: 1 }]) {
      await expectOpError({ n: target }, { type: 'increment', path: 'n', by: 1 }, 'increment.not_number');
      await expectOpError({ n: target }, { type: 'decrement', path: 'n', by: 1 }, 'decrement.not_number');
    }
    const root = await run({ a: 1 }, [{ type: 'increment', path: '', by: 1 }]);
    expect(root.errors).toEqual([{ op_index: 0, code: 'increment.not_number', message: expect.any(String) }]);
    const rootNull = await run(null, [{ type: 'increment', by: 1 }]);
    expect(rootNull.errors).toEqual([{ op_index: 0, code: 'increment.not_number', message: expect.any(String) }]);
  });

  it('a field of a non-object value is <op>.target_not_object', async () => {
    for (const op of ['increment', 'decrement']) {
      const r = await run('str', [{ type: op, path: 'n', by: 1 }]);
      expect(r.errors).toEqual([{ op_index: 0, code: `${op}.target_not_object`, message: expect.any(String) }]);
      expect(r.new_value).toBe('str');
    }
  });

  it('a by that is not a finite number is <op>.by.not_number', async () => {
    await expectOpError({ n: 1 }, { type: 'increment', path: 'n', by: '2' }, 'increment.by.not_number');
    await expectOpError({ n: 1 }, { type: 'decrement', path: 'n' }, 'decrement.by.not_number');
    await expectOpError({ n: 1 }, { type: 'increment', path: 'n', by: null }, 'increment.by.not_number');
  });

  it('a field named like an Object.prototype member (toString, valueOf, hasOwnProperty) counts as missing', async () => {
    // The stored value is plain JSON: `{}` has no field "toString", so increment must start it at `by`.
    expect(await run({}, [{ type: 'increment', path: 'toString', by: 1 }])).toEqual({ old_value: {}, new_value: { toString: 1 } });
    expect(await run(undefined, [{ type: 'decrement', path: 'valueOf', by: 2 }])).toEqual({ old_value: null, new_value: { valueOf: -2 } });
    expect(await run({}, [{ type: 'increment', path: 'hasOwnProperty', by: 3 }])).toEqual({ old_value: {}, new_value: { hasOwnProperty: 3 } });
  });
});

describe('append', () => {
  it('pushes onto an array (an array value is one element)', async () => {
    expect((await run({ l: [1] }, [{ type: 'append', path: 'l', value: 2 }])).new_value).toEqual({ l: [1, 2] });
    expect((await run({ l: [1] }, [{ type: 'append', path: 'l', value: [2, 3] }])).new_value).toEqual({ l: [1, [2, 3]] });
    expect((await run([1], [{ type: 'append', path: '', value: { x: 1 } }])).new_value).toEqual([1, { x: 1 }]);
  });

  it('concatenates onto a string; a non-string onto a string is append.type_mismatch', async () => {
    expect((await run({ s: 'ab' }, [{ type: 'append', path: 's', value: 'cd' }])).new_value).toEqual({ s: 'abcd' });
    expect(await run('ab', [{ type: 'append', value: 'cd' }])).toEqual({ old_value: 'ab', new_value: 'abcd' });
    for (const value of [1, ['x'], { x: 1 }, null]) await expectOpError({ s: 'ab' }, { type: 'append', path: 's', value }, 'append.type_mismatch');
  });

  it('a missing or null target becomes the string, or [value] for anything else', async () => {
    expect((await run({}, [{ type: 'append', path: 'a', value: 'x' }])).new_value).toEqual({ a: 'x' });
    expect((await run({}, [{ type: 'append', path: 'a', value: 5 }])).new_value).toEqual({ a: [5] });
    expect((await run({}, [{ type: 'append', path: 'a', value: [5] }])).new_value).toEqual({ a: [[5]] });
    expect((await run({ a: null }, [{ type: 'append', path: 'a', value: 'x' }])).new_value).toEqual({ a: 'x' });
    expect((await run({ a: null }, [{ type: 'append', path: 'a', value: { o: 1 } }])).new_value).toEqual({ a: [{ o: 1 }] });
    expect(await run(undefined, [{ type: 'append', path: 'a', value: 1 }])).toEqual({ old_value: null, new_value: { a: [1] } });
  });

  it('the root path on a missing key starts from null', async () => {
    expect(await run(undefined, [{ type: 'append', path: '', value: 'x' }])).toEqual({ old_value: null, new_value: 'x' });
    expect(await run(undefined, [{ type: 'append', value: 1 }])).toEqual({ old_value: null, new_value: [1] });
  });

  it('other targets are append.type_mismatch; a field of a non-object is append.target_not_object', async () => {
    for (const target of [1, true, { o: 1 }]) await expectOpError({ t: target }, { type: 'append', path: 't', value: 'x' }, 'append.type_mismatch');
    const r = await run(3, [{ type: 'append', path: 'a', value: 1 }]);
    expect(r.errors).toEqual([{ op_index: 0, code: 'append.target_not_object', message: expect.any(String) }]);
    expect(r.new_value).toBe(3);
    const root = await run({ o: 1 }, [{ type: 'append', path: '', value: 1 }]);
    expect(root.errors).toEqual([{ op_index: 0, code: 'append.type_mismatch', message: expect.any(String) }]);
  });

  it('a field named like an Object.prototype member (toString, valueOf) counts as missing', async () => {
    expect(await run({}, [{ type: 'append', path: 'toString', value: 'x' }])).toEqual({ old_value: {}, new_value: { toString: 'x' } });
    expect(await run({}, [{ type: 'append', path: 'valueOf', value: 1 }])).toEqual({ old_value: {}, new_value: { valueOf: [1] } });
  });
});

describe('remove', () => {
  it('removes a field; a missing field is a silent no-op; the root path sets null', async () => {
    expect(await run({ a: 1, b: 2 }, [{ type: 'remove', path: 'a' }])).toEqual({ old_value: { a: 1, b: 2 }, new_value: { b: 2 } });
    const noop = await run({ a: 1 }, [{ type: 'remove', path: 'zz' }]);
    expect(noop).toEqual({ old_value: { a: 1 }, new_value: { a: 1 } });
    expect(await run({ a: 1 }, [{ type: 'remove', path: '' }])).toEqual({ old_value: { a: 1 }, new_value: null });
    expect(await run({ a: 1 }, [{ type: 'remove' }])).toEqual({ old_value: { a: 1 }, new_value: null });
    expect((await run({ 'a.b': 1, a: { b: 2 } }, [{ type: 'remove', path: 'a.b' }])).new_value).toEqual({ a: { b: 2 } });
  });

  it('a field of a non-object is remove.target_not_object', async () => {
    const r = await run([1, 2], [{ type: 'remove', path: 'a' }]);
    expect(r.errors).toEqual([{ op_index: 0, code: 'remove.target_not_object', message: expect.any(String) }]);
    expect(r.new_value).toEqual([1, 2]);
  });
});

describe('operations run in order on one working copy', () => {
  it('a failing op does not stop later ops; every failure is reported with its own index', async () => {
    const r = await run({ n: 'x', s: 'a' }, [
      { type: 'increment', path: 'n', by: 1 }, // 0: fails
      { type: 'set', path: 'n', value: 1 }, // 1
      { type: 'increment', path: 'n', by: 1 }, // 2: now works on the result of 1
      { type: 'append', path: 's', value: 2 }, // 3: fails
      { type: 'merge', path: ['m'], value: { ok: true } }, // 4
      { type: 'remove', path: 's' }, // 5
      { type: 'merge', value: 'nope' }, // 6: fails
    ]);
    expect(r.new_value).toEqual({ n: 2, m: { ok: true } });
    expect(r.errors?.map((e) => [e.op_index, e.code])).toEqual([
      [0, 'increment.not_number'],
      [3, 'append.type_mismatch'],
      [6, 'merge.value.not_an_object'],
    ]);
  });

  it('an update on a missing key whose ops all fail still creates the key as {}', async () => {
    const key = fresh();
    const r = await update(key, [{ type: 'increment', path: 'n', by: 'one' }]);
    expect(r).toEqual({ old_value: null, new_value: {}, errors: [{ op_index: 0, code: 'increment.by.not_number', message: expect.any(String) }] });
    expect(await get(key)).toEqual({});
  });

  it('an empty ops list leaves an existing value unchanged and creates {} for a missing key', async () => {
    expect(await run({ a: 1 }, [])).toEqual({ old_value: { a: 1 }, new_value: { a: 1 } });
    expect(await run(undefined, [])).toEqual({ old_value: null, new_value: {} });
  });

  it('errors are omitted when every op applied', async () => {
    const r = await run({}, [{ type: 'set', path: 'a', value: 1 }]);
    expect(Object.keys(r).sort()).toEqual(['new_value', 'old_value']);
  });
});

describe('limits (each reported in errors, the other ops still apply)', () => {
  const segments = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);

  it('merge path: 32 segments are fine, 33 are merge.path.too_deep', async () => {
    const ok = await run({}, [{ type: 'merge', path: segments(32), value: { leaf: 1 } }]);
    expect(ok.errors).toBeUndefined();
    await expectOpError({}, { type: 'merge', path: segments(33), value: { leaf: 1 } }, 'merge.path.too_deep');
  });

  it('a segment of 256 bytes is fine, 257 bytes is <op>.path.segment_too_long (bytes, not characters)', async () => {
    const ok256 = 'k'.repeat(256);
    expect((await run({}, [{ type: 'set', path: ok256, value: 1 }])).new_value).toEqual({ [ok256]: 1 });
    const long = 'k'.repeat(257);
    const wide = 'é'.repeat(129); // 129 characters, 258 bytes
    await expectOpError({}, { type: 'merge', path: ['a', long], value: { x: 1 } }, 'merge.path.segment_too_long');
    await expectOpError({}, { type: 'merge', path: long, value: { x: 1 } }, 'merge.path.segment_too_long');
    await expectOpError({}, { type: 'merge', path: [wide], value: { x: 1 } }, 'merge.path.segment_too_long');
    await expectOpError({}, { type: 'set', path: long, value: 1 }, 'set.path.segment_too_long');
    await expectOpError({}, { type: 'set', path: wide, value: 1 }, 'set.path.segment_too_long');
    await expectOpError({}, { type: 'increment', path: long, by: 1 }, 'increment.path.segment_too_long');
    await expectOpError({}, { type: 'decrement', path: long, by: 1 }, 'decrement.path.segment_too_long');
    await expectOpError({}, { type: 'append', path: long, value: 1 }, 'append.path.segment_too_long');
    await expectOpError({ [long]: 1 }, { type: 'remove', path: long }, 'remove.path.segment_too_long');
  });

  it('an empty merge path segment is merge.path.empty_segment', async () => {
    await expectOpError({}, { type: 'merge', path: ['a', ''], value: { x: 1 } }, 'merge.path.empty_segment');
    await expectOpError({}, { type: 'merge', path: ['', 'a'], value: { x: 1 } }, 'merge.path.empty_segment');
  });

  it('__proto__, constructor and prototype are refused as path segments of every op', async () => {
    for (const word of ['__proto__', 'constructor', 'prototype']) {
      await expectOpError({}, { type: 'merge', path: [word], value: { polluted: true } }, 'merge.path.proto_polluted');
      await expectOpError({}, { type: 'merge', path: ['a', word], value: { polluted: true } }, 'merge.path.proto_polluted');
      await expectOpError({}, { type: 'merge', path: word, value: { polluted: true } }, 'merge.path.proto_polluted');
      await expectOpError({}, { type: 'set', path: word, value: { polluted: true } }, 'set.path.proto_polluted');
      await expectOpError({}, { type: 'increment', path: word, by: 1 }, 'increment.path.proto_polluted');
      await expectOpError({}, { type: 'decrement', path: word, by: 1 }, 'decrement.path.proto_polluted');
      await expectOpError({}, { type: 'append', path: word, value: 'x' }, 'append.path.proto_polluted');
      await expectOpError({}, { type: 'remove', path: word }, 'remove.path.proto_polluted');
    }
  });

  it('__proto__, constructor and prototype are refused as top-level keys of a merge value', async () => {
    for (const word of ['__proto__', 'constructor', 'prototype']) {
      // JSON.parse makes "__proto__" an own key, so it really is sent on the wire.
      const value = JSON.parse(`{"ok": 1, "${word}": {"polluted": true}}`) as Record<string, unknown>;
      expect(Object.keys(value)).toContain(word);
      await expectOpError({}, { type: 'merge', value }, 'merge.value.proto_polluted');
      await expectOpError({}, { type: 'merge', path: ['nested'], value }, 'merge.value.proto_polluted');
    }
  });

  it('a merge value of 1,024 keys is fine, 1,025 keys is merge.value.too_many_keys', async () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    const ok = await run({}, [{ type: 'merge', value: keys(1024) }]);
    expect(ok.errors).toBeUndefined();
    expect(Object.keys(ok.new_value as object)).toHaveLength(1024);
    await expectOpError({}, { type: 'merge', path: ['p'], value: keys(1025) }, 'merge.value.too_many_keys');
  });

  it('a merge value nested 16 deep is fine, 17 deep is merge.value.too_deep', async () => {
    const ok = await run({}, [{ type: 'merge', value: nest(16) }]);
    expect(ok.errors).toBeUndefined();
    await expectOpError({}, { type: 'merge', value: nest(17) }, 'merge.value.too_deep');
    // Arrays count as levels too.
    let arr: unknown = 1;
    for (let i = 0; i < 16; i++) arr = [arr];
    await expectOpError({}, { type: 'merge', value: { a: arr } }, 'merge.value.too_deep');
  });
});

describe('prototype pollution', () => {
  const polluted = () => (({}) as Record<string, unknown>).polluted !== undefined || Object.hasOwn(Object.prototype, 'polluted');

  it('raw JSON frames with __proto__ in merge values and paths never pollute Object.prototype in the engine process', async () => {
    const raw = await RawClient.connect(engine.bridgeUrl);
    const key = fresh();
    await set(key, { safe: true });
    const payloads = [
      `{"type":"merge","value":{"__proto__":{"polluted":true}}}`,
      `{"type":"merge","path":["a"],"value":{"__proto__":{"polluted":true}}}`,
      `{"type":"merge","path":["__proto__"],"value":{"polluted":true}}`,
      `{"type":"merge","path":["constructor","prototype"],"value":{"polluted":true}}`,
      `{"type":"set","path":"__proto__","value":{"polluted":true}}`,
      `{"type":"append","path":"__proto__","value":{"polluted":true}}`,
      `{"type":"increment","path":"__proto__","by":1}`,
    ];
    for (const op of payloads) {
      const id = randomUUID();
      raw.ws.send(
        `{"type":"invokefunction","invocation_id":"${id}","function_id":"state::update","data":{"scope":"${scope}","key":"${key}","ops":[${op},{"type":"set","path":"after","value":1}]}}`,
      );
      const frame = await raw.waitFrame((f) => f.type === 'invocationresult' && f.invocation_id === id);
      expect(frame.error, op).toBeUndefined();
      expect(frame.result.errors, op).toEqual([{ op_index: 0, code: expect.stringMatching(/proto_polluted$/), message: expect.any(String) }]);
      expect(polluted(), op).toBe(false);
    }
    expect(await get(key)).toEqual({ safe: true, after: 1 });

    // A value holding "__proto__" deeper down (not a merge top-level key) is stored as plain data.
    const id = randomUUID();
    raw.ws.send(
      `{"type":"invokefunction","invocation_id":"${id}","function_id":"state::update","data":{"scope":"${scope}","key":"${key}","ops":[{"type":"merge","value":{"inner":{"__proto__":{"polluted":true}}}},{"type":"set","path":"x","value":{"__proto__":{"polluted":true}}}]}}`,
    );
    const frame = await raw.waitFrame((f) => f.type === 'invocationresult' && f.invocation_id === id);
    expect(frame.error).toBeUndefined();
    expect(polluted()).toBe(false);
    // And reading / updating it again does not pollute either.
    await update(key, [{ type: 'merge', path: ['inner'], value: { more: 1 } }]);
    await worker.trigger({ function_id: 'state::list', payload: { scope } });
    expect(polluted()).toBe(false);
    // A raw set of a whole value with __proto__ at the top is data too.
    const id2 = randomUUID();
    raw.ws.send(
      `{"type":"invokefunction","invocation_id":"${id2}","function_id":"state::set","data":{"scope":"${scope}","key":"${fresh()}","value":{"__proto__":{"polluted":true}}}}`,
    );
    expect((await raw.waitFrame((f) => f.type === 'invocationresult' && f.invocation_id === id2)).error).toBeUndefined();
    expect(polluted()).toBe(false);
  });
});

describe('concurrency', () => {
  it('200 concurrent increments of one counter from two workers end at 200, each seeing a distinct value', async () => {
    const second = await startWorker('iii', engine);
    const key = fresh();
    const inc = (w: TestWorker) => w.trigger({ function_id: 'state::update', payload: { scope, key, ops: [{ type: 'increment', path: 'n', by: 1 }] } });
    const results = (await Promise.all(Array.from({ length: 200 }, (_, i) => inc(i % 2 === 0 ? worker : second)))) as UpdateResult[];
    expect(await get(key)).toEqual({ n: 200 });
    const seen = results.map((r) => (r.new_value as { n: number }).n).sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(results.filter((r) => r.old_value === null)).toHaveLength(1);
  });

  it('concurrent updates of different fields of one key all land', async () => {
    const key = fresh();
    await Promise.all(Array.from({ length: 100 }, (_, i) => update(key, [{ type: 'set', path: `f${i}`, value: i }])));
    expect(Object.keys((await get(key)) as object)).toHaveLength(100);
  });
});
