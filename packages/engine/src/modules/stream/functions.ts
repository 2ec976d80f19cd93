import { FlintError } from '@flint/protocol';
import type { ModuleContext } from '../../core/module-api.js';
import { type PayloadObject, payloadObject as input } from '../../lib/payload.js';
import { parseOps } from '../../lib/update-ops.js';
import { streamMessage } from './frames.js';
import type { StreamHub } from './hub.js';
import type { ItemRef, SizeCheck, StreamItems } from './items.js';

type NameField = 'stream_name' | 'group_id' | 'item_id' | 'type';

function text(data: PayloadObject, field: NameField): string {
  const value = data[field];
  if (value === undefined || value === null) throw new FlintError('invalid_payload', `${field} is required`);
  if (typeof value !== 'string') throw new FlintError('invalid_payload', `${field} must be a string (got ${Array.isArray(value) ? 'array' : typeof value})`);
  if (value === '') throw new FlintError('invalid_payload', `${field} must not be empty`);
  return value;
}

/** Streams named `flint:…` belong to the engine (its live counters): workers read them, never write them. */
function writable(stream: string): string {
  if (stream.startsWith('flint:'))
    throw new FlintError('invalid_payload', `stream_name ${JSON.stringify(stream)} is reserved: streams named flint:… are the engine's`);
  return stream;
}

const ref = (d: PayloadObject): ItemRef => ({ stream: text(d, 'stream_name'), group: text(d, 'group_id'), item: text(d, 'item_id') });
const writeRef = (d: PayloadObject): ItemRef => {
  const r = ref(d);
  writable(r.stream);
  return r;
};

const names = { stream_name: { type: 'string', minLength: 1 }, group_id: { type: 'string', minLength: 1 }, item_id: { type: 'string', minLength: 1 } };
const itemFormat = (extra: Record<string, unknown> = {}, required: string[] = []) => ({
  type: 'object',
  required: ['stream_name', 'group_id', 'item_id', ...required],
  properties: { ...names, ...extra },
});
const change = { type: 'object', properties: { old_value: {}, new_value: {} }, required: ['old_value', 'new_value'] };

/** Registers stream::get/set/delete/update/list/list_groups/list_all/send and engine::streams::stats. */
export function registerStreamFunctions(ctx: ModuleContext, items: StreamItems, hub: StreamHub, checkSize: SizeCheck): void {
  ctx.registerFunction(
    { id: 'stream::get', description: 'Read a stream item: its value, or null when it does not exist', request_format: itemFormat() },
    async (data, call) => items.get(ref(input(data)), call),
  );

  ctx.registerFunction(
    {
      id: 'stream::set',
      description: 'Store an item and push create/update to the group and item subscribers',
      request_format: itemFormat({ data: {} }, ['data']),
      response_format: change,
    },
    async (data, call) => {
      const d = input(data);
      const r = writeRef(d);
      if (!('data' in d)) throw new FlintError('invalid_payload', 'data is required');
      const write = await items.set(r, d.data ?? null, call);
      if (write.message) hub.fireTriggers(write.message, call);
      return { old_value: write.old_value, new_value: write.new_value };
    },
  );

  ctx.registerFunction(
    {
      id: 'stream::delete',
      description: 'Delete an item; pushes delete (with the old value) when it existed',
      request_format: itemFormat(),
      response_format: { type: 'object', properties: { old_value: {} }, required: ['old_value'] },
    },
    async (data, call) => {
      const r = writeRef(input(data));
      const write = await items.delete(r, call);
      if (write.message) hub.fireTriggers(write.message, call);
      return { old_value: write.old_value };
    },
  );

  ctx.registerFunction(
    {
      id: 'stream::update',
      description: 'Apply operations (set, merge, increment, decrement, append, remove) to an item atomically and push the new value',
      request_format: itemFormat({ ops: { type: 'array' } }, ['ops']),
      response_format: { ...change, properties: { ...change.properties, errors: { type: 'array' } } },
    },
    async (data, call) => {
      const d = input(data);
      const r = writeRef(d);
      const write = await items.update(r, parseOps(d.ops), call);
      if (write.message) hub.fireTriggers(write.message, call);
      const out: Record<string, unknown> = { old_value: write.old_value, new_value: write.new_value };
      if (write.errors) out.errors = write.errors;
      return out;
    },
  );

  ctx.registerFunction(
    {
      id: 'stream::list',
      description: 'The item values of a stream group',
      request_format: { type: 'object', required: ['stream_name', 'group_id'], properties: { stream_name: names.stream_name, group_id: names.group_id } },
      response_format: { type: 'array' },
    },
    async (data, call) => {
      const d = input(data);
      return items.list(text(d, 'stream_name'), text(d, 'group_id'), call);
    },
  );

  ctx.registerFunction(
    {
      id: 'stream::list_groups',
      description: 'The groups of a stream that hold at least one item',
      request_format: { type: 'object', required: ['stream_name'], properties: { stream_name: names.stream_name } },
      response_format: { type: 'array', items: { type: 'string' } },
    },
    async (data, call) => items.listGroups(text(input(data), 'stream_name'), call),
  );

  ctx.registerFunction(
    {
      id: 'stream::list_all',
      description: 'Every stream with its groups: {stream: [{id, groups}], count}',
      request_format: { type: 'object' },
      response_format: { type: 'object', properties: { stream: { type: 'array' }, count: { type: 'number' } }, required: ['stream', 'count'] },
    },
    async (data) => {
      input(data, { optional: true });
      const all = await items.store.listAll();
      return { stream: all.map(({ stream, groups }) => ({ id: stream, groups })), count: all.length };
    },
  );

  ctx.registerFunction(
    {
      id: 'stream::send',
      description: 'Push a custom event to a group (or to one item of it) without storing anything',
      request_format: {
        type: 'object',
        required: ['stream_name', 'group_id', 'type'],
        properties: {
          stream_name: names.stream_name,
          group_id: names.group_id,
          id: { type: ['string', 'null'] },
          type: { type: 'string', minLength: 1 },
          data: {},
        },
      },
    },
    async (data, call) => {
      const d = input(data);
      const stream = writable(text(d, 'stream_name'));
      const group = text(d, 'group_id');
      const type = text(d, 'type');
      if (d.id !== undefined && d.id !== null && (typeof d.id !== 'string' || d.id === ''))
        throw new FlintError('invalid_payload', 'id must be a non-empty string when given');
      checkSize('data', d.data ?? null);
      const message = streamMessage(stream, group, (d.id as string | undefined) ?? null, { type: 'event', event: { type, data: d.data ?? null } });
      await hub.publish(message);
      hub.fireTriggers(message, call);
      return null;
    },
  );

  ctx.registerFunction(
    {
      id: 'engine::streams::stats',
      description: 'Live counters of the stream listener: connections, subscriptions, messages and bytes in and out, buffered bytes, per stream',
      request_format: { type: 'object' },
    },
    async () => hub.snapshot(),
  );
}
