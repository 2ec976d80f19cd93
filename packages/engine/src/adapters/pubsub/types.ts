/**
 * Where pub/sub messages travel: to the subscribers of this engine only (`local`), or through a server
 * that every engine sharing it listens to (`redis`). Nothing is kept: a message reaches the topics'
 * subscribers of the moment, at most once.
 */
export interface PubSubBus {
  /** `local` or `redis`. */
  readonly kind: string;
  /** True when the engines sharing the backend get each other's messages. */
  readonly shared: boolean;
  /** Sends `text` to every listener of `topic` (on every engine, for a shared bus); rejects with `store_unavailable` when it cannot. */
  publish(topic: string, text: string): Promise<void>;
  /**
   * Calls `listener` with every message of `topic` until `stop` is called. `listening` settles once
   * messages published from now on reach it (at once for `local`; once Redis confirmed the subscription).
   */
  listen(topic: string, listener: (text: string) => void): { listening: Promise<void>; stop: () => void };
  close(): Promise<void>;
}

declare module '../../core/api/adapters.js' {
  interface AdapterFamilies {
    pubsub: PubSubBus;
  }
}
