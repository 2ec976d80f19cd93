import { FlintError } from '@flint/protocol';
import type { KvStore } from '../../adapters/kv/types.js';
import type { ModuleContext, TraceContext } from '../../core/module-api.js';
import { jsonWithin } from '../../lib/json-size.js';
import { type PayloadObject, payloadObject as input, optionalCount } from '../../lib/payload.js';
import { applyOps, parseOps } from '../../lib/update-ops.js';
import type { StateTriggers } from './triggers.js';

function text(data: PayloadObject, field: 'scope' | 'key'): string {
  const value = data[field];
  if (value === undefined || value === null) throw new FlintError('invalid_payload', `${field} is required`);
  if (typeof value !== 'string') throw new FlintError('invalid_payload', `${field} must be a string (got ${Array.isArray(value) ? 'array' : typeof value})`);
  if (value === '') throw new FlintError('invalid_payload', `${field} must not be empty`);
  return value;
}

/** The most entries `state::list_entries` returns at once. */
const MAX_ENTRIES_PAGE = 1000;

const scopeKey = { scope: { type: 'string', minLength: 1 }, key: { type: 'string', minLength: 1 } };
const op = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['set', 'merge', 'increment', 'decrement', 'append', 'remove'] },
    path: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    value: {},
    by: { type: 'number' },
  },
};
const change = { type: 'object', properties: { old_value: {}, new_value: {} }, required: ['old_value', 'new_value'] };

/** Registers state::get/set/delete/update/list/list_groups/list_entries on the store. */
export function registerStateFunctions(ctx: ModuleContext, store: KvStore, triggers: StateTriggers, maxValueBytes: number): void {
  /** A stored write: `state:created` for a new key, `state:updated` otherwise. */
  const fireChange = (call: TraceContext, scope: string, key: string, existed: boolean, old_value: unknown, new_value: unknown) =>
    triggers.fire({ type: 'state', event_type: existed ? 'state:updated' : 'state:created', scope, key, old_value, new_value }, call);
  const checkSize = (field: string, value: unknown) => jsonWithin(field, value, maxValueBytes, 'max_value_bytes');

  ctx.registerFunction(
    {
      id: 'state::get',
      description: 'Read a value: returns it, or null when the key does not exist',
      request_format: { type: 'object', required: ['scope', 'key'], properties: scopeKey },
    },
    async (data) => {
      const d = input(data);
      return (await store.get(text(d, 'scope'), text(d, 'key'))).value;
    },
  );

  ctx.registerFunction(
    {
      id: 'state::set',
      description: 'Store a JSON value under scope/key; fires state:created or state:updated',
      request_format: { type: 'object', required: ['scope', 'key', 'value'], properties: { ...scopeKey, value: {} } },
      response_format: change,
    },
    async (data, call) => {
      const d = input(data);
      const scope = text(d, 'scope');
      const key = text(d, 'key');
      if (!('value' in d) && !('data' in d)) throw new FlintError('invalid_payload', 'value is required');
      const value = 'value' in d ? d.value : d.data;
      checkSize('value', value);
      const result = await store.set(scope, key, value ?? null);
      fireChange(call, scope, key, result.existed, result.old_value, value ?? null);
      return { old_value: result.old_value, new_value: value ?? null };
    },
  );

  ctx.registerFunction(
    {
      id: 'state::delete',
      description: 'Delete a key; returns the old value and fires state:deleted when the key existed',
      request_format: { type: 'object', required: ['scope', 'key'], properties: scopeKey },
      response_format: { type: 'object', properties: { old_value: {} }, required: ['old_value'] },
    },
    async (data, call) => {
      const d = input(data);
      const scope = text(d, 'scope');
      const key = text(d, 'key');
      const result = await store.delete(scope, key);
      if (result.existed) triggers.fire({ type: 'state', event_type: 'state:deleted', scope, key, old_value: result.old_value, new_value: null }, call);
      return { old_value: result.old_value };
    },
  );

  ctx.registerFunction(
    {
      id: 'state::update',
      description: 'Apply operations (set, merge, increment, decrement, append, remove) atomically',
      request_format: { type: 'object', required: ['scope', 'key', 'ops'], properties: { ...scopeKey, ops: { type: 'array', items: op } } },
      response_format: { ...change, properties: { ...change.properties, errors: { type: 'array' } } },
    },
    async (data, call) => {
      const d = input(data);
      const scope = text(d, 'scope');
      const key = text(d, 'key');
      const ops = parseOps(d.ops);
      if (store.forwardUpdate) {
        // Another engine keeps the state: it applies the operations (checked here first) atomically.
        const forwarded = await store.forwardUpdate(scope, key, d.ops);
        fireChange(call, scope, key, forwarded.existed, forwarded.old_value, forwarded.new_value);
        const answer: Record<string, unknown> = { old_value: forwarded.old_value, new_value: forwarded.new_value };
        if (forwarded.errors && forwarded.errors.length > 0) answer.errors = forwarded.errors;
        return answer;
      }
      const result = await store.update(scope, key, (current) => {
        const { value, errors } = applyOps(current, ops);
        checkSize('the updated value', value);
        return { value, extra: errors };
      });
      fireChange(call, scope, key, result.existed, result.old_value, result.new_value);
      const out: Record<string, unknown> = { old_value: result.old_value, new_value: result.new_value };
      if (result.extra.length > 0) out.errors = result.extra;
      return out;
    },
  );

  ctx.registerFunction(
    {
      id: 'state::list',
      description: 'The values stored in a scope',
      request_format: { type: 'object', required: ['scope'], properties: { scope: scopeKey.scope } },
      response_format: { type: 'array' },
    },
    async (data) => store.list(text(input(data), 'scope')),
  );

  ctx.registerFunction(
    {
      id: 'state::list_groups',
      description: 'The scopes that hold at least one key; with counts: true, also how many keys each holds',
      request_format: { type: 'object', properties: { counts: { type: 'boolean' } } },
      response_format: {
        type: 'object',
        properties: { groups: { type: 'array', items: { type: 'string' } }, counts: { type: 'object', additionalProperties: { type: 'integer' } } },
        required: ['groups'],
      },
    },
    async (data) => {
      const d = data === null || data === undefined ? {} : input(data);
      if (d.counts !== undefined && typeof d.counts !== 'boolean') throw new FlintError('invalid_payload', 'counts must be a boolean');
      const groups = await store.listGroups();
      if (d.counts !== true) return { groups };
      const sizes = await Promise.all(groups.map((scope) => store.size(scope)));
      return { groups, counts: Object.fromEntries(groups.map((scope, i) => [scope, sizes[i]])) };
    },
  );

  ctx.registerFunction(
    {
      id: 'state::list_entries',
      description: 'The keys and values of a scope, sorted by key: a page of them (offset, limit) and the total, optionally only keys containing `match`',
      request_format: {
        type: 'object',
        required: ['scope'],
        properties: {
          scope: scopeKey.scope,
          match: { type: 'string' },
          offset: { type: 'integer', minimum: 0 },
          limit: { type: 'integer', minimum: 1, maximum: MAX_ENTRIES_PAGE },
        },
      },
      response_format: {
        type: 'object',
        properties: { entries: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, value: {} } } }, total: { type: 'integer' } },
        required: ['entries', 'total'],
      },
    },
    async (data) => {
      const d = input(data);
      const scope = text(d, 'scope');
      if (d.match !== undefined && typeof d.match !== 'string') throw new FlintError('invalid_payload', 'match must be a string');
      const offset = optionalCount(d, 'offset', 0);
      const limit = optionalCount(d, 'limit', 100, MAX_ENTRIES_PAGE);
      if (limit === 0) throw new FlintError('invalid_payload', `limit must be an integer from 1 to ${MAX_ENTRIES_PAGE}`);
      const match = d.match?.toLowerCase();
      const all = (await store.entries(scope)).filter(([key]) => match === undefined || key.toLowerCase().includes(match));
      all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return { entries: all.slice(offset, offset + limit).map(([key, value]) => ({ key, value })), total: all.length };
    },
  );
}
