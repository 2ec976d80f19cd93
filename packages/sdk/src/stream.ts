import { randomUUID } from 'node:crypto';
import { type ClientHost, type HandlerWithTrigger, handlerWithTrigger } from './module-client.js';
import type { StateChange, StateUpdateOp, StateUpdateResult } from './state.js';
import type { StreamJoinLeaveEvent, StreamJoinLeaveTriggerConfig, StreamMessage, StreamTriggerConfig } from './stream-types.js';

export interface OnStreamChangeOptions {
  /** Only this group of the stream. */
  group_id?: string;
  /** Only this item (messages whose `id` is this id). */
  item_id?: string;
  condition_function_id?: string;
  /** Id of the function that receives the messages (default: a generated `on-stream-change::<uuid>`; `stream::` ids belong to the engine). */
  function_id?: string;
}

export interface OnStreamJoinLeaveOptions {
  /** Only joins (leaves) of this stream; default every stream. */
  stream_name?: string;
  condition_function_id?: string;
  /** Id of the function that receives the events (default: a generated `on-stream-join::<uuid>` / `on-stream-leave::<uuid>`). */
  function_id?: string;
}

/** What a `stream:join` handler may return: `{ unauthorized: true }` refuses the join. */
export type StreamJoinResult = { unauthorized?: boolean } | null | undefined;

/** A stream in `listAll()`: its name and the ids of its groups. */
export interface StreamInfo {
  id: string;
  groups: string[];
}

/**
 * A typed client for the stream module: items grouped as `stream_name` → `group_id` → `item_id` → value
 * (`stream::*` functions), custom events to subscribers, and `stream`, `stream:join` and `stream:leave`
 * triggers. Every change is pushed to the stream clients that joined the item or its group
 * (`@flint/sdk/stream-client`).
 */
export class StreamClient {
  constructor(private readonly worker: ClientHost) {}

  /** Stores `data` as the item (creates or replaces it); subscribers get a `create` or `update` message. */
  set<T = unknown>(stream_name: string, group_id: string, item_id: string, data: T): Promise<StateChange<T>> {
    return this.call('stream::set', { stream_name, group_id, item_id, data });
  }

  /** The item's value, or null when it does not exist. */
  async get<T = unknown>(stream_name: string, group_id: string, item_id: string): Promise<T | null> {
    return (await this.call<T | null | undefined>('stream::get', { stream_name, group_id, item_id })) ?? null;
  }

  /** Deletes the item; subscribers get a `delete` message when it existed. */
  delete<T = unknown>(stream_name: string, group_id: string, item_id: string): Promise<{ old_value: T | null }> {
    return this.call('stream::delete', { stream_name, group_id, item_id });
  }

  /**
   * Applies `ops` in order to the item (a missing item starts as `{}`), as `worker.state.update` does;
   * an op that fails is skipped and reported in `errors`.
   */
  update<T = unknown>(stream_name: string, group_id: string, item_id: string, ops: StateUpdateOp[]): Promise<StateUpdateResult<T>> {
    return this.call('stream::update', { stream_name, group_id, item_id, ops });
  }

  /** The values of the group's items. */
  list<T = unknown>(stream_name: string, group_id: string): Promise<T[]> {
    return this.call('stream::list', { stream_name, group_id });
  }

  /** The ids of the stream's groups. */
  listGroups(stream_name: string): Promise<string[]> {
    return this.call('stream::list_groups', { stream_name });
  }

  /** Every stream with the ids of its groups. */
  listAll(): Promise<{ stream: StreamInfo[]; count: number }> {
    return this.call('stream::list_all', {});
  }

  /**
   * Sends a custom event to the subscribers of the group (and, with `options.id`, of that item): they get
   * a message with `event: { type: 'event', event: { type, data } }`. Nothing is stored; `stream`
   * triggers of the stream fire for it too.
   */
  async send(stream_name: string, group_id: string, type: string, data: unknown, options: { id?: string } = {}): Promise<null> {
    const payload: Record<string, unknown> = { stream_name, group_id, type, data };
    if (options.id !== undefined) payload.id = options.id;
    await this.call('stream::send', payload);
    return null;
  }

  /** Runs `handler` after every change of `stream_name` and every event sent to it (registers a function and a `stream` trigger). */
  onChange<T = unknown>(stream_name: string, handler: (message: StreamMessage<T>) => unknown, options: OnStreamChangeOptions = {}): HandlerWithTrigger {
    const config: StreamTriggerConfig = { stream_name };
    if (options.group_id !== undefined) config.group_id = options.group_id;
    if (options.item_id !== undefined) config.item_id = options.item_id;
    if (options.condition_function_id !== undefined) config.condition_function_id = options.condition_function_id;
    const functionId = options.function_id ?? `on-stream-change::${randomUUID()}`;
    return handlerWithTrigger(this.worker, functionId, handler as (input: never) => unknown, `Handles changes of stream ${stream_name}`, 'stream', config);
  }

  /**
   * Runs `handler` when a stream client joins an item or group (of any stream, or of `options.stream_name`), before the client is
   * subscribed (`stream:join` trigger). Return `{ unauthorized: true }` to refuse the join: the client
   * gets an `unauthorized` message instead of a `sync`. A handler that fails refuses the join too.
   */
  onJoin(handler: (event: StreamJoinLeaveEvent) => StreamJoinResult | Promise<StreamJoinResult>, options: OnStreamJoinLeaveOptions = {}): HandlerWithTrigger {
    return this.joinLeave('stream:join', `on-stream-join::${randomUUID()}`, handler, options);
  }

  /** Runs `handler` when a stream client leaves an item or group, or disconnects while joined (`stream:leave` trigger). */
  onLeave(handler: (event: StreamJoinLeaveEvent) => unknown, options: OnStreamJoinLeaveOptions = {}): HandlerWithTrigger {
    return this.joinLeave('stream:leave', `on-stream-leave::${randomUUID()}`, handler, options);
  }

  private joinLeave(type: string, defaultId: string, handler: (event: StreamJoinLeaveEvent) => unknown, options: OnStreamJoinLeaveOptions): HandlerWithTrigger {
    const config: StreamJoinLeaveTriggerConfig = {};
    if (options.stream_name !== undefined) config.stream_name = options.stream_name;
    if (options.condition_function_id !== undefined) config.condition_function_id = options.condition_function_id;
    const description = `Handles ${type === 'stream:join' ? 'joins' : 'leaves'} of stream clients`;
    return handlerWithTrigger(this.worker, options.function_id ?? defaultId, handler as (input: never) => unknown, description, type, config);
  }

  private call<T>(functionId: string, payload: unknown): Promise<T> {
    return this.worker.trigger<unknown, T>({ function_id: functionId, payload });
  }
}
