import type { KvEntry, KvUpdateResult, KvUpdater, KvWriteResult } from '../kv/types.js';

/**
 * A change or custom event of one stream group, as the module pushes it to subscribers: the routing
 * fields and the frame's JSON text, serialised once for every socket and every engine.
 */
export interface StreamFrame {
  stream: string;
  group: string;
  /** The item the frame is about; null for a group-wide custom event. */
  id: string | null;
  /** `{"type":"stream","timestamp":…,"streamName":…,"groupId":…,"id":…,"event":{…}}`. */
  text: string;
}

/**
 * A write's frame, in two parts around what only the store knows at the moment of the write: for a set,
 * the event type (`before` + `create` or `update` + `after`); for a delete, the old value's JSON text
 * (`before` + old + `after`; no frame when nothing was deleted).
 */
export interface FrameParts {
  before: string;
  after: string;
}

/** An update's frame, made once the store knows whether the item existed and its new value. */
export type UpdateFrame = (existed: boolean, newValue: unknown) => string;

/** One stream and the groups that hold at least one item. */
export interface StreamGroups {
  stream: string;
  /** Sorted. */
  groups: string[];
}

/**
 * Where streams keep their items (stream → group → item → JSON value) and how their frames reach every
 * engine that serves subscribers. Item methods are atomic per item and fail with `store_unavailable`
 * when the backend cannot be used; stream and group names may hold any character, `:` included.
 *
 * A write and its frame are one step: the frame reaches the listeners of every engine in the order the
 * writes were stored (so a subscriber ends with the value the store holds), and only once the write
 * succeeded.
 */
export interface StreamStore {
  /** `in_memory`, `file_based` or `redis`. */
  readonly kind: string;
  /** True when engines sharing the backend see each other's writes and frames (redis). */
  readonly shared: boolean;
  get(stream: string, group: string, item: string): Promise<KvEntry>;
  set(stream: string, group: string, item: string, value: unknown, frame: FrameParts): Promise<KvWriteResult>;
  delete(stream: string, group: string, item: string, frame: FrameParts): Promise<KvWriteResult>;
  update<R>(stream: string, group: string, item: string, updater: KvUpdater<R>, frame: UpdateFrame): Promise<KvUpdateResult<R>>;
  /** The values of a group (no order promised); `[]` for an unknown group. */
  list(stream: string, group: string): Promise<unknown[]>;
  /** The groups of a stream that hold at least one item, sorted. */
  listGroups(stream: string): Promise<string[]>;
  /** Every stream with its groups, sorted by stream name. */
  listAll(): Promise<StreamGroups[]>;
  /**
   * Hands a frame that announces no write of this store (a custom event, a worker's own storage) to the
   * listeners of this engine and, for a shared store, of every other engine; rejects with
   * `store_unavailable` when it cannot reach them.
   */
  publish(frame: StreamFrame): Promise<void>;
  /** Calls `listener` with every published frame (this engine's and, when shared, the others') until the returned function is called. */
  subscribe(listener: (frame: StreamFrame) => void): () => void;
  close(): Promise<void>;
  /**
   * Only a store whose frames come from elsewhere on demand (`bridge`): this engine's clients joined
   * (`watch`) or left (`unwatch`) the group, once per subscription.
   */
  watch?(stream: string, group: string): void;
  unwatch?(stream: string, group: string): void;
  /** Only a store kept by another engine (`bridge`): applies `stream::update` operations there; `update` is not offered. */
  forwardUpdate?(
    stream: string,
    group: string,
    item: string,
    ops: unknown,
  ): Promise<{ existed: boolean; old_value: unknown; new_value: unknown; errors?: unknown[] }>;
}

declare module '../../core/api/adapters.js' {
  interface AdapterFamilies {
    stream: StreamStore;
  }
}
