/** What a read finds: `exists` is false for a missing key (a key may exist and hold `null`). */
export interface KvEntry {
  exists: boolean;
  value: unknown;
}

/** The value before a write; `old_value` is `null` when the key did not exist. */
export interface KvWriteResult {
  existed: boolean;
  old_value: unknown;
}

export interface KvUpdateResult<R = unknown> extends KvWriteResult {
  new_value: unknown;
  /** Whatever the updater returned besides the value (e.g. per-op errors). */
  extra: R;
}

/**
 * Computes a new value from the current entry. It must be pure: a store may call it more than once
 * (an optimistic transaction that lost a race is retried).
 */
export type KvUpdater<R = unknown> = (current: KvEntry) => { value: unknown; extra: R };

/**
 * A key-value store of JSON values grouped by scope. Every method is atomic per key; a write resolves
 * only once it is durable for the adapter's guarantee (file_based: fsynced). Backend failures reject
 * with a FlintError `store_unavailable`.
 */
export interface KvStore {
  /** `in_memory`, `file_based` or `redis`. */
  readonly kind: string;
  get(scope: string, key: string): Promise<KvEntry>;
  set(scope: string, key: string, value: unknown): Promise<KvWriteResult>;
  delete(scope: string, key: string): Promise<KvWriteResult>;
  update<R>(scope: string, key: string, updater: KvUpdater<R>): Promise<KvUpdateResult<R>>;
  /** The values of a scope (no order promised); `[]` for an unknown scope. */
  list(scope: string): Promise<unknown[]>;
  /** The keys and values of a scope (no order promised); `[]` for an unknown scope. */
  entries(scope: string): Promise<[key: string, value: unknown][]>;
  /** How many keys a scope holds (0 for an unknown scope). */
  size(scope: string): Promise<number>;
  /** Scopes that hold at least one key, sorted. */
  listGroups(): Promise<string[]>;
  /** Flushes and releases the store (locks, connections). */
  close(): Promise<void>;
  /**
   * Only a store kept by another engine (`bridge`): applies `state::update` operations there, where an
   * updater (code of this engine) cannot go. `update` is not offered by such a store.
   */
  forwardUpdate?(scope: string, key: string, ops: unknown): Promise<{ existed: boolean; old_value: unknown; new_value: unknown; errors?: unknown[] }>;
}

declare module '../../core/api/adapters.js' {
  interface AdapterFamilies {
    kv: KvStore;
  }
}
