import type { AdapterLog } from '../../shared/log.js';
import type { RedisConnection } from '../../shared/redis-connection.js';

/**
 * The wake-ups of idle consumers: a script that makes a message deliverable while the queue is marked idle
 * (a consumer left room unfilled at its last fetch: `wake` in scripts.ts), or that sets a new due time,
 * PUBLISHes on its queue's wake channel, and this engine listens on a connection of its own
 * (a subscribed connection can run nothing else) for the queues it consumes. Pub/sub loses what is sent
 * while the connection is down, so when it comes back every listener is called once, as if woken;
 * the consumers' poll covers anything else.
 */
export class WakeChannels {
  private readonly listeners = new Map<string, Set<() => void>>();
  /** Per channel: settles once its SUBSCRIBE was answered (or failed). */
  private readonly subscribed = new Map<string, Promise<void>>();
  private closed = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly logger: AdapterLog | undefined,
  ) {
    const client = connection.client;
    client.on('message', (channel: string) => this.notify(channel));
    let first = true;
    client.on('ready', () => {
      if (first) {
        first = false;
        return;
      }
      // ioredis subscribes again to what it had; a channel whose SUBSCRIBE failed meanwhile is retried here.
      for (const channel of this.listeners.keys()) this.subscribe(channel);
      for (const channel of this.listeners.keys()) this.notify(channel);
    });
  }

  /**
   * Calls `listener` on every wake of `channel` until `stop` is called. `subscribed` settles once wake-ups
   * reach it: a consumer fetches once more then, for what was published before.
   */
  listen(channel: string, listener: () => void): { subscribed: Promise<void>; stop: () => void } {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      this.subscribe(channel);
    }
    set.add(listener);
    const stop = () => {
      const current = this.listeners.get(channel);
      if (!current?.delete(listener) || current.size > 0) return;
      this.listeners.delete(channel);
      this.subscribed.delete(channel);
      if (!this.closed) void this.connection.call(() => this.connection.client.unsubscribe(channel)).catch(() => {});
    };
    return { subscribed: this.subscribed.get(channel) ?? Promise.resolve(), stop };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await this.connection.close();
  }

  private subscribe(channel: string): void {
    if (this.closed) return;
    const done = this.connection
      .call(() => this.connection.client.subscribe(channel))
      .then(
        () => {},
        (err: Error) => this.logger?.warn(`queue wake-ups of ${channel} not subscribed (${err.message}); consumers poll until the connection is back`),
      );
    this.subscribed.set(channel, done);
  }

  private notify(channel: string): void {
    for (const listener of this.listeners.get(channel) ?? []) listener();
  }
}
