import { FlintError } from '@flint/protocol';

/** One failed operation of a `state::update`; the other operations still apply. */
export interface OpError {
  op_index: number;
  code: string;
  message: string;
}

export type UpdateOp =
  | { type: 'set'; path?: string; value?: unknown }
  | { type: 'merge'; path?: string | string[]; value: unknown }
  | { type: 'increment' | 'decrement'; path?: string; by: number }
  | { type: 'append'; path?: string; value: unknown }
  | { type: 'remove'; path?: string };

const OP_TYPES = new Set(['set', 'merge', 'increment', 'decrement', 'append', 'remove']);
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_SEGMENTS = 32;
const MAX_SEGMENT_BYTES = 256;
const MAX_MERGE_KEYS = 1024;
const MAX_MERGE_DEPTH = 16;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the shape of `ops` before anything is read or written; throws `invalid_payload`. */
export function parseOps(ops: unknown): UpdateOp[] {
  if (!Array.isArray(ops)) throw new FlintError('invalid_payload', 'ops must be an array of operations');
  ops.forEach((op, i) => {
    if (!isObject(op)) throw new FlintError('invalid_payload', `ops[${i}] must be an object`);
    if (typeof op.type !== 'string' || !OP_TYPES.has(op.type)) {
      throw new FlintError(
        'invalid_payload',
        `ops[${i}].type must be one of set, merge, increment, decrement, append, remove (got ${JSON.stringify(op.type ?? null)})`,
      );
    }
  });
  return ops as UpdateOp[];
}

class OpFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function checkSegment(op: string, segment: unknown, what = 'path'): string {
  if (typeof segment !== 'string') throw new OpFailure(`${op}.${what}.invalid`, `${what} must be a string`);
  if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)
    throw new OpFailure(`${op}.${what}.segment_too_long`, `a path segment is longer than ${MAX_SEGMENT_BYTES} bytes`);
  if (FORBIDDEN_KEYS.has(segment)) throw new OpFailure(`${op}.${what}.proto_polluted`, `"${segment}" cannot be used as a key`);
  return segment;
}

/** Single first-level key paths: "" (or absent) is the root; "a.b" is one literal key. */
function firstLevel(op: string, path: unknown): string {
  if (path === undefined || path === '') return '';
  return checkSegment(op, path);
}

function mergePath(path: unknown): string[] {
  if (path === undefined || path === '' || (Array.isArray(path) && path.length === 0)) return [];
  const segments = typeof path === 'string' ? [path] : path;
  if (!Array.isArray(segments)) throw new OpFailure('merge.path.invalid', 'path must be a string or an array of strings');
  if (segments.length > MAX_SEGMENTS) throw new OpFailure('merge.path.too_deep', `path has more than ${MAX_SEGMENTS} segments`);
  for (const s of segments) {
    if (s === '') throw new OpFailure('merge.path.empty_segment', 'path has an empty segment');
    checkSegment('merge', s);
  }
  return segments as string[];
}

function depth(value: unknown, limit: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  if (limit <= 0) return 1;
  let max = 0;
  for (const v of Object.values(value)) max = Math.max(max, depth(v, limit - 1));
  return max + 1;
}

function checkMergeValue(value: unknown): Obj {
  if (!isObject(value)) throw new OpFailure('merge.value.not_an_object', 'merge value must be an object');
  const keys = Object.keys(value);
  if (keys.length > MAX_MERGE_KEYS) throw new OpFailure('merge.value.too_many_keys', `merge value has more than ${MAX_MERGE_KEYS} keys`);
  if (keys.some((k) => FORBIDDEN_KEYS.has(k))) throw new OpFailure('merge.value.proto_polluted', 'merge value has a __proto__/constructor/prototype key');
  if (depth(value, MAX_MERGE_DEPTH + 1) > MAX_MERGE_DEPTH) throw new OpFailure('merge.value.too_deep', `merge value is nested deeper than ${MAX_MERGE_DEPTH}`);
  return value;
}

/** A field of the object itself, never one inherited from Object.prototype (`toString`, …). */
const own = (obj: Obj, key: string): unknown => (Object.hasOwn(obj, key) ? obj[key] : undefined);

function container(op: string, current: unknown): Obj {
  if (!isObject(current)) throw new OpFailure(`${op}.target_not_object`, `the value is not an object, so it has no field to ${op}`);
  return current;
}

function add(op: 'increment' | 'decrement', target: unknown, by: number, missing: boolean): number {
  if (missing) return op === 'increment' ? by : -by;
  if (typeof target !== 'number') throw new OpFailure(`${op}.not_number`, `the target is not a number (it is ${target === null ? 'null' : typeof target})`);
  return op === 'increment' ? target + by : target - by;
}

function appended(target: unknown, value: unknown, missing: boolean): unknown {
  if (missing || target === null) return typeof value === 'string' ? value : [value];
  if (Array.isArray(target)) return [...target, value];
  if (typeof target === 'string') {
    if (typeof value !== 'string') throw new OpFailure('append.type_mismatch', 'only a string can be appended to a string');
    return target + value;
  }
  throw new OpFailure('append.type_mismatch', `cannot append to a ${typeof target}`);
}

/**
 * Applies operations in order to a copy of the current value. A failing operation is skipped and
 * reported; the others still apply. A missing key starts as `{}` (root number/append ops start empty).
 */
export function applyOps(current: { exists: boolean; value: unknown }, ops: readonly UpdateOp[]): { value: unknown; errors: OpError[] } {
  let value: unknown = current.exists ? structuredClone(current.value) : {};
  let missing = !current.exists;
  const errors: OpError[] = [];
  ops.forEach((op, op_index) => {
    try {
      switch (op.type) {
        case 'set': {
          const path = firstLevel('set', op.path);
          if (path === '') value = op.value === undefined ? null : op.value;
          else container('set', value)[path] = op.value === undefined ? null : op.value;
          break;
        }
        case 'merge': {
          const segments = mergePath(op.path);
          const patch = checkMergeValue(op.value);
          if (segments.length === 0) {
            if (isObject(value)) Object.assign(value, patch);
            break;
          }
          let target = container('merge', value);
          for (const segment of segments) {
            if (!isObject(own(target, segment))) target[segment] = {};
            target = target[segment] as Obj;
          }
          Object.assign(target, patch);
          break;
        }
        case 'increment':
        case 'decrement': {
          if (typeof op.by !== 'number' || !Number.isFinite(op.by)) throw new OpFailure(`${op.type}.by.not_number`, 'by must be a finite number');
          const path = firstLevel(op.type, op.path);
          if (path === '') value = add(op.type, value, op.by, missing);
          else {
            const obj = container(op.type, value);
            obj[path] = add(op.type, own(obj, path), op.by, !Object.hasOwn(obj, path));
          }
          break;
        }
        case 'append': {
          const path = firstLevel('append', op.path);
          if (path === '') value = appended(missing ? null : value, op.value, missing);
          else {
            const obj = container('append', value);
            obj[path] = appended(own(obj, path), op.value, !Object.hasOwn(obj, path));
          }
          break;
        }
        case 'remove': {
          const path = firstLevel('remove', op.path);
          if (path === '') value = null;
          else delete container('remove', value)[path];
          break;
        }
      }
      missing = false;
    } catch (err) {
      if (!(err instanceof OpFailure)) throw err;
      errors.push({ op_index, code: err.code, message: err.message });
    }
  });
  return { value, errors };
}
