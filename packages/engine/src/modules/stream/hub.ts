import type { StreamStore } from '../../adapters/stream/types.js';
import type { Logger } from '../../core/logger.js';
import type { TraceContext } from '../../core/module-api.js';
import type { StreamConnection } from './connection.js';
import { type StreamMessage, frameOf, streamMessage } from './frames.js';
import { StreamStats, type StreamStatsSnapshot } from './stats.js';
import { SubscriptionIndex } from './subscriptions.js';
import type { StreamTriggers } from './triggers.js';

/** The engine's own stream of live counters: group `engine`, item `stats`, an `update` frame a second while someone listens. */
export const STATS_STREAM = 'flint:streams:stats';
export const STATS_GROUP = 'engine';
export const STATS_ITEM = 'stats';
const STATS_INTERVAL_MS = 1000;

/**
 * Where frames meet subscribers: a write's frame goes to the `stream` triggers (on the engine that made
 * the write) and to the store's bus, which hands it (and, for a shared store, every other engine's) to
 * the connections of this engine that subscribed.
 */
export class StreamHub {
  readonly index = new SubscriptionIndex();
  readonly stats = new StreamStats();
  readonly connections = new Set<StreamConnection>();
  private readonly unsubscribe: () => void;
  private readonly statsTimer: NodeJS.Timeout;

  constructor(
    private readonly store: StreamStore,
    private readonly triggers: StreamTriggers,
    logger: Logger,
  ) {
    this.unsubscribe = store.subscribe((frame) => {
      try {
        this.stats.published(frame.stream);
        const { sent, bytes } = this.index.deliver(frame.stream, frame.group, frame.id, frame.text);
        this.stats.sent(frame.stream, sent, bytes);
      } catch (err) {
        logger.error({ stream_name: frame.stream, group_id: frame.group }, `stream fan-out failed: ${err instanceof Error ? err.stack : String(err)}`);
      }
    });
    this.statsTimer = setInterval(() => this.publishStats(), STATS_INTERVAL_MS).unref();
  }

  /** Sends a custom event to subscribers (here and on other engines); rejects with store_unavailable when it cannot. */
  publish(message: StreamMessage): Promise<void> {
    return this.store.publish(frameOf(message));
  }

  /** A connection of this engine joined a group (or an item of it): a store whose frames come on demand fetches them. */
  watch(stream: string, group: string): void {
    this.store.watch?.(stream, group);
  }

  /** The connection left it again. */
  unwatch(stream: string, group: string): void {
    this.store.unwatch?.(stream, group);
  }

  /** Runs the `stream` triggers of a change or event this engine made (in the background). */
  fireTriggers(message: StreamMessage, trace: TraceContext): void {
    this.triggers.fire(message, trace);
  }

  snapshot(): StreamStatsSnapshot {
    let bufferedBytes = 0;
    const subscriptions = new Map<string, number>();
    for (const connection of this.connections) {
      bufferedBytes += connection.ws.bufferedAmount;
      for (const sub of connection.subscriptions.values()) subscriptions.set(sub.stream, (subscriptions.get(sub.stream) ?? 0) + 1);
    }
    return this.stats.snapshot({ connections: this.connections.size, bufferedBytes, subscriptions });
  }

  stop(): void {
    clearInterval(this.statsTimer);
    this.unsubscribe();
  }

  private publishStats(): void {
    if (!this.index.listens(STATS_STREAM, STATS_GROUP)) return;
    const message = streamMessage(STATS_STREAM, STATS_GROUP, STATS_ITEM, { type: 'update', data: this.snapshot() });
    const { sent, bytes } = this.index.deliver(STATS_STREAM, STATS_GROUP, STATS_ITEM, JSON.stringify(message));
    this.stats.sent(STATS_STREAM, sent, bytes);
  }
}
