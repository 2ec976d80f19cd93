import type { KvStore } from '../../adapters/kv/types.js';
import type { LockBackend } from '../../adapters/lock/types.js';
import type { ModuleContext } from '../../core/module-api.js';
import { errorMessage } from '../../lib/errors.js';

const SCOPE = 'flint-cron:engines';
const BEAT_MS = 10_000;

interface Seen {
  lock: string;
  seen: number;
}

/**
 * Each engine notes itself in the store every few seconds, so that an engine starting on a store other
 * engines use without one shared lock warns: the store's claim still runs each slot once, but every
 * engine races for every slot.
 */
export class EnginePresence {
  private readonly beat: NodeJS.Timeout;

  private constructor(
    private readonly store: KvStore,
    private readonly engineId: string,
    private readonly lock: LockBackend,
  ) {
    this.beat = setInterval(() => void this.note(), BEAT_MS);
    this.beat.unref?.();
  }

  static async start(ctx: ModuleContext, store: KvStore, engineId: string, lock: LockBackend): Promise<EnginePresence> {
    const presence = new EnginePresence(store, engineId, lock);
    try {
      const now = Date.now();
      const others = ((await store.list(SCOPE)) as Seen[]).filter((e) => e && typeof e.seen === 'number' && now - e.seen < 3 * BEAT_MS);
      if (others.length > 0 && (!lock.shared || others.some((e) => e.lock !== lock.kind)))
        ctx.logger.warn(
          `cron: ${others.length} other engine${others.length === 1 ? '' : 's'} use${others.length === 1 ? 's' : ''} this store without one shared lock: each slot still runs once (the store's claim decides), but every engine races for every slot; give every engine the redis lock`,
        );
      await presence.note();
    } catch (err) {
      ctx.logger.debug(`cron: engine presence not noted (${errorMessage(err)})`);
    }
    return presence;
  }

  async stop(): Promise<void> {
    clearInterval(this.beat);
    await this.store.delete(SCOPE, this.engineId).catch(() => {});
  }

  private async note(): Promise<void> {
    await this.store.set(SCOPE, this.engineId, { lock: this.lock.kind, seen: Date.now() } satisfies Seen).catch(() => {});
  }
}
