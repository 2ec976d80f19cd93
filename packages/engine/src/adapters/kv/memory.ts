import type { KvEntry, KvStore, KvUpdateResult, KvUpdater, KvWriteResult } from './types.js';

/** `in_memory`: a Map per scope. Loses everything on restart (by design). */
export class MemoryKvStore implements KvStore {
  readonly kind: string = 'in_memory';
  protected readonly scopes = new Map<string, Map<string, unknown>>();

  async get(scope: string, key: string): Promise<KvEntry> {
    const map = this.scopes.get(scope);
    return map?.has(key) ? { exists: true, value: map.get(key) } : { exists: false, value: null };
  }

  async set(scope: string, key: string, value: unknown): Promise<KvWriteResult> {
    return this.apply(scope, key, value, false);
  }

  async delete(scope: string, key: string): Promise<KvWriteResult> {
    return this.apply(scope, key, null, true);
  }

  async update<R>(scope: string, key: string, updater: KvUpdater<R>): Promise<KvUpdateResult<R>> {
    // Read, compute and write without yielding, so concurrent updates of one key never interleave.
    const map = this.scopes.get(scope);
    const current: KvEntry = map?.has(key) ? { exists: true, value: map.get(key) } : { exists: false, value: null };
    const { value, extra } = updater(current);
    const write = this.apply(scope, key, value, false);
    return { existed: write.existed, old_value: write.old_value, new_value: value, extra };
  }

  async list(scope: string): Promise<unknown[]> {
    return [...(this.scopes.get(scope)?.values() ?? [])];
  }

  async entries(scope: string): Promise<[string, unknown][]> {
    return [...(this.scopes.get(scope)?.entries() ?? [])];
  }

  async size(scope: string): Promise<number> {
    return this.scopes.get(scope)?.size ?? 0;
  }

  async listGroups(): Promise<string[]> {
    return [...this.scopes.keys()].sort();
  }

  async close(): Promise<void> {}

  /** Changes the map (synchronously, so concurrent calls never interleave) and reports the old value. */
  protected apply(scope: string, key: string, value: unknown, remove: boolean): KvWriteResult {
    let map = this.scopes.get(scope);
    const existed = map?.has(key) ?? false;
    const old_value = existed ? map?.get(key) : null;
    if (remove) {
      if (existed) {
        map?.delete(key);
        if (map?.size === 0) this.scopes.delete(scope);
      }
    } else {
      if (!map) {
        map = new Map();
        this.scopes.set(scope, map);
      }
      map.set(key, value);
    }
    return { existed, old_value };
  }
}
