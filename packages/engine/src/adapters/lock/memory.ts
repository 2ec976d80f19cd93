import { z } from 'zod';
import type { AdapterFactory } from '../../core/api/adapters.js';
import type { LockBackend } from './types.js';

export const memoryLockConfigSchema = z.strictObject({}).prefault({});

/** Locks in this engine's memory: one engine fires each slot once; several engines each fire it. */
export class MemoryLocks implements LockBackend {
  readonly kind = 'memory';
  readonly shared = false;
  /** key → [owner, expiry ms]; expired entries are dropped as they are met, and by a sweep. */
  private readonly held = new Map<string, [string, number]>();
  private readonly sweep: NodeJS.Timeout;

  constructor(sweepMs = 60_000) {
    this.sweep = setInterval(() => this.dropExpired(), sweepMs);
    this.sweep.unref?.();
  }

  async acquire(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const current = this.held.get(key);
    if (current && current[1] > now) return false;
    this.held.set(key, [owner, now + ttlMs]);
    return true;
  }

  async release(key: string, owner: string): Promise<boolean> {
    const current = this.held.get(key);
    if (!current || current[0] !== owner) return false;
    this.held.delete(key);
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    this.held.clear();
  }

  private dropExpired(): void {
    const now = Date.now();
    for (const [key, [, expiry]] of this.held) if (expiry <= now) this.held.delete(key);
  }
}

export const memoryLockAdapter: AdapterFactory<'lock', z.output<typeof memoryLockConfigSchema>> = {
  family: 'lock',
  name: 'memory',
  description: "locks in this engine's memory (one engine; several engines each fire every slot)",
  configSchema: memoryLockConfigSchema,
  open: async () => new MemoryLocks(),
};
