/**
 * Named locks with an expiry, for work that must run once across every engine sharing the backend (a
 * cron slot). A lock is held by an owner (a random id per engine) until it expires or its owner
 * releases it; nobody else can release it. Backend failures reject with a FlintError `store_unavailable`.
 */
export interface LockBackend {
  /** `memory` (this engine only) or `redis` (every engine on the same Redis and prefix). */
  readonly kind: string;
  /** True when several engines can share it (a memory lock is per engine). */
  readonly shared: boolean;
  /** Takes `key` for `ttlMs` unless someone holds it; true when taken. */
  acquire(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Lets go of `key` if `owner` still holds it; true when it did. */
  release(key: string, owner: string): Promise<boolean>;
  close(): Promise<void>;
}

declare module '../../core/api/adapters.js' {
  interface AdapterFamilies {
    lock: LockBackend;
  }
}
