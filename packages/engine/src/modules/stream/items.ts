import { FlintError } from '@flint/protocol';
import type { StreamStore } from '../../adapters/stream/types.js';
import type { ModuleContext, TraceContext } from '../../core/module-api.js';
import { type OpError, type UpdateOp, applyOps } from '../../lib/update-ops.js';
import { type StreamMessage, changeParts, deleteParts, frameHead, frameOf, streamMessage } from './frames.js';

/** An item operation's address. */
export interface ItemRef {
  stream: string;
  group: string;
  item: string;
}

/** A write's outcome, whoever stored it, and the frame that announced it (undefined when nothing changed). */
export interface ItemWrite {
  existed: boolean;
  old_value: unknown;
  new_value: unknown;
  errors?: OpError[];
  message: StreamMessage | undefined;
}

/** Checks a value against max_value_bytes; returns its JSON text. */
export type SizeCheck = (field: string, value: unknown) => string;

type CustomOp = 'get' | 'set' | 'delete' | 'list' | 'list_groups' | 'update';

/**
 * Stream items, from the adapter or from a worker's own implementation: before each operation, a
 * registered function `stream::<op>(<stream name>)` (what iii-sdk's `createStream` registers) takes the
 * call instead of the adapter, with the same input. Every write is announced to subscribers: by the
 * store together with the write, or, for a worker's implementation, once it answered.
 */
export class StreamItems {
  constructor(
    private readonly ctx: ModuleContext,
    readonly store: StreamStore,
    private readonly checkSize: SizeCheck,
  ) {}

  async get(ref: ItemRef, trace: TraceContext): Promise<unknown> {
    const custom = this.custom('get', ref.stream);
    if (custom) return (await this.ctx.invoke(custom, this.input(ref), trace)) ?? null;
    return (await this.store.get(ref.stream, ref.group, ref.item)).value;
  }

  async list(stream: string, group: string, trace: TraceContext): Promise<unknown> {
    const custom = this.custom('list', stream);
    if (custom) return this.ctx.invoke(custom, { stream_name: stream, group_id: group }, trace);
    return this.store.list(stream, group);
  }

  async listGroups(stream: string, trace: TraceContext): Promise<unknown> {
    const custom = this.custom('list_groups', stream);
    if (custom) return this.ctx.invoke(custom, { stream_name: stream }, trace);
    return this.store.listGroups(stream);
  }

  async set(ref: ItemRef, data: unknown, trace: TraceContext): Promise<ItemWrite> {
    const json = this.checkSize('data', data);
    const timestamp = Date.now();
    const custom = this.custom('set', ref.stream);
    if (custom) {
      const write = customWrite(custom, await this.ctx.invoke(custom, { ...this.input(ref), data }, trace), true);
      return this.announce(write, this.message(ref, timestamp, write.existed, write.new_value));
    }
    const result = await this.store.set(ref.stream, ref.group, ref.item, data, changeParts(frameHead(ref.stream, ref.group, ref.item, timestamp), json));
    return { existed: result.existed, old_value: result.old_value, new_value: data, message: this.message(ref, timestamp, result.existed, data) };
  }

  async delete(ref: ItemRef, trace: TraceContext): Promise<ItemWrite> {
    const timestamp = Date.now();
    const custom = this.custom('delete', ref.stream);
    if (custom) {
      const write = customWrite(custom, await this.ctx.invoke(custom, this.input(ref), trace), false);
      return this.announce(write, write.existed ? this.deleted(ref, timestamp, write.old_value) : undefined);
    }
    const result = await this.store.delete(ref.stream, ref.group, ref.item, deleteParts(frameHead(ref.stream, ref.group, ref.item, timestamp)));
    const message = result.existed ? this.deleted(ref, timestamp, result.old_value) : undefined;
    return { existed: result.existed, old_value: result.old_value, new_value: null, message };
  }

  async update(ref: ItemRef, ops: UpdateOp[], trace: TraceContext): Promise<ItemWrite> {
    const timestamp = Date.now();
    const custom = this.custom('update', ref.stream);
    if (custom) {
      const write = customWrite(custom, await this.ctx.invoke(custom, { ...this.input(ref), ops }, trace), true);
      return this.announce(write, this.message(ref, timestamp, write.existed, write.new_value));
    }
    if (this.store.forwardUpdate) {
      // Another engine keeps the streams: it applies the operations (checked here first) and announces the change.
      const forwarded = await this.store.forwardUpdate(ref.stream, ref.group, ref.item, ops);
      const { existed, old_value, new_value, errors } = forwarded;
      const write: ItemWrite = { existed, old_value, new_value, message: this.message(ref, timestamp, existed, new_value) };
      if (errors?.length) write.errors = errors as OpError[];
      return write;
    }
    const head = frameHead(ref.stream, ref.group, ref.item, timestamp);
    const result = await this.store.update<OpError[]>(
      ref.stream,
      ref.group,
      ref.item,
      (current) => {
        const { value, errors } = applyOps(current, ops);
        this.checkSize('the updated value', value);
        return { value, extra: errors };
      },
      (existed, value) => `${head}${existed ? 'update' : 'create'}","data":${JSON.stringify(value) ?? 'null'}}}`,
    );
    const write: ItemWrite = {
      existed: result.existed,
      old_value: result.old_value,
      new_value: result.new_value,
      message: this.message(ref, timestamp, result.existed, result.new_value),
    };
    if (result.extra.length > 0) write.errors = result.extra;
    return write;
  }

  private message(ref: ItemRef, timestamp: number, existed: boolean, value: unknown): StreamMessage {
    return streamMessage(ref.stream, ref.group, ref.item, { type: existed ? 'update' : 'create', data: value }, timestamp);
  }

  private deleted(ref: ItemRef, timestamp: number, oldValue: unknown): StreamMessage {
    return streamMessage(ref.stream, ref.group, ref.item, { type: 'delete', data: oldValue }, timestamp);
  }

  /** Publishes the frame of a write a worker's implementation made (none for a delete that deleted nothing). */
  private async announce(write: Omit<ItemWrite, 'message'>, message: StreamMessage | undefined): Promise<ItemWrite> {
    if (message) await this.store.publish(frameOf(message));
    return { ...write, message };
  }

  /** The id of a worker's implementation of `op` for `stream`, when one is registered. */
  private custom(op: CustomOp, stream: string): string | undefined {
    const id = `stream::${op}(${stream})`;
    return this.ctx.registry.hasFunction(id) ? id : undefined;
  }

  private input(ref: ItemRef): Record<string, unknown> {
    return { stream_name: ref.stream, group_id: ref.group, item_id: ref.item };
  }
}

/** Reads a custom set/delete/update result: `{old_value?, new_value, errors?}` (`new_value` only for set and update). */
function customWrite(functionId: string, result: unknown, needsNewValue: boolean): Omit<ItemWrite, 'message'> {
  const expected = needsNewValue ? '{old_value?, new_value}' : '{old_value?}';
  if (typeof result !== 'object' || result === null || Array.isArray(result) || (needsNewValue && !('new_value' in result))) {
    const got = result === undefined ? 'no result' : JSON.stringify(result).slice(0, 200);
    throw new FlintError('invocation_failed', `${functionId} returned ${got}; a custom stream implementation must return ${expected}`);
  }
  const r = result as { old_value?: unknown; new_value?: unknown; errors?: unknown };
  const old_value = r.old_value ?? null;
  const write: Omit<ItemWrite, 'message'> = { existed: old_value !== null, old_value, new_value: needsNewValue ? (r.new_value ?? null) : null };
  if (Array.isArray(r.errors) && r.errors.length > 0) write.errors = r.errors as OpError[];
  return write;
}
