import type { WebSocket } from 'ws';
import type { ModuleContext } from '../../core/module-api.js';
import { toBuffer } from '../../lib/buffers.js';
import type { StreamConfig } from './config.js';
import { type ConnectionOptions, StreamConnection, type Subscription } from './connection.js';
import { type ClientRequest, type StreamEvent, parseClientFrame, streamMessage } from './frames.js';
import { STATS_GROUP, STATS_ITEM, STATS_STREAM, type StreamHub } from './hub.js';
import type { StreamItems } from './items.js';
import type { JoinLeaveEvent, JoinLeaveTriggers } from './triggers.js';

/**
 * The life of a client connection: its joins and leaves (handled one after another, in the order they
 * came), the `stream:join` check and the sync each accepted join gets, and a leave for every subscription
 * still held when the connection ends.
 */
export class StreamSessions {
  private stopping = false;
  /** Shared by every connection (one object, not one per client). */
  private readonly connectionOptions: ConnectionOptions;

  constructor(
    private readonly ctx: ModuleContext,
    private readonly config: StreamConfig,
    private readonly hub: StreamHub,
    private readonly items: StreamItems,
    private readonly joins: JoinLeaveTriggers,
    private readonly leaves: JoinLeaveTriggers,
  ) {
    this.connectionOptions = {
      maxBufferedBytes: config.max_buffered_bytes,
      stats: hub.stats,
      onSlow: (c, buffered) => {
        hub.stats.slowDisconnect();
        ctx.logger.warn({ addr: c.addr, buffered_bytes: buffered }, `stream client ${c.addr} is too slow (${buffered} bytes unsent): disconnected with 1013`);
      },
    };
  }

  /** Serves a connection that passed the auth check; `initial` is the subscription its URL asked for. */
  open(ws: WebSocket, addr: string, context: unknown, initial: ClientRequest | undefined): StreamConnection {
    const { hub } = this;
    const connection = new StreamConnection(ws, addr, context, this.connectionOptions);
    hub.connections.add(connection);
    // Requests run one after another: a leave right after its join finds the subscription.
    let queue = Promise.resolve();
    const handle = (request: ClientRequest) => {
      queue = queue
        .then(() => (request.type === 'join' ? this.join(connection, request) : this.leave(connection, request)))
        .catch((err) => {
          this.ctx.logger.warn({ addr }, `stream ${request.type} failed: ${err instanceof Error ? err.message : String(err)}`);
        });
    };
    ws.on('message', (data) => {
      // Text or binary, the same JSON (upstream accepts both); blank frames are ignored.
      const text = typeof data === 'string' ? data : toBuffer(data).toString('utf8');
      const blank = text.trim() === '';
      const request = blank ? undefined : parseClientFrame(text);
      hub.stats.received(request?.stream, Buffer.byteLength(text));
      if (request) handle(request);
      else if (!blank) this.ctx.logger.debug({ addr }, `stream client sent a frame that is not a join or leave: ${text.slice(0, 200)}`);
    });
    ws.once('close', () => {
      hub.connections.delete(connection);
      queue = queue.then(() => this.closed(connection));
    });
    if (initial) handle(initial);
    return connection;
  }

  /** Stops firing leave triggers (the engine is stopping: the workers that would get them are leaving too). */
  stop(): void {
    this.stopping = true;
  }

  private async join(connection: StreamConnection, request: ClientRequest): Promise<void> {
    if (!connection.open) return;
    const { stream, group, item, subscriptionId } = request;
    const refuse = () => connection.deliver(JSON.stringify(streamMessage(stream, group, item, { type: 'unauthorized' })), stream);
    const replacing = connection.subscriptions.get(subscriptionId);
    if (!replacing && connection.subscriptions.size >= this.config.max_subscriptions_per_connection) {
      this.ctx.logger.warn(
        { addr: connection.addr, stream_name: stream },
        `stream client ${connection.addr} holds max_subscriptions_per_connection (${this.config.max_subscriptions_per_connection}) subscriptions: join refused`,
      );
      return refuse();
    }
    const verdict = await this.joins.run(this.event(connection, { ...request, id: subscriptionId }));
    if (!verdict.allowed) {
      this.ctx.logger.debug({ addr: connection.addr, stream_name: stream, group_id: group }, `stream join refused: ${verdict.reason}`);
      return refuse();
    }
    if (!connection.open) return;
    if (replacing) this.unsubscribe(connection, replacing);
    const subscription: Subscription = { id: subscriptionId, stream, group, item };
    connection.subscriptions.set(subscriptionId, subscription);
    this.hub.index.add(connection, stream, group, item);
    this.hub.watch(stream, group);
    const sync = await this.syncData(subscription);
    if (sync !== undefined && connection.subscriptions.get(subscriptionId) === subscription) {
      connection.deliver(JSON.stringify(streamMessage(stream, group, item, sync)), stream);
    }
  }

  private async leave(connection: StreamConnection, request: ClientRequest): Promise<void> {
    const subscription = connection.subscriptions.get(request.subscriptionId);
    if (!subscription) return;
    this.unsubscribe(connection, subscription);
    if (!this.stopping) await this.leaves.run(this.event(connection, subscription));
  }

  private async closed(connection: StreamConnection): Promise<void> {
    const held = [...connection.subscriptions.values()];
    for (const subscription of held) this.unsubscribe(connection, subscription);
    if (this.stopping) return;
    await Promise.all(held.map((subscription) => this.leaves.run(this.event(connection, subscription))));
  }

  private unsubscribe(connection: StreamConnection, subscription: Subscription): void {
    connection.subscriptions.delete(subscription.id);
    this.hub.index.remove(connection, subscription.stream, subscription.group, subscription.item);
    this.hub.unwatch(subscription.stream, subscription.group);
  }

  /** The sync a join gets: the item, or the group's items; undefined when they cannot be read (no sync then). */
  private async syncData({ stream, group, item }: Subscription): Promise<StreamEvent | undefined> {
    if (stream === STATS_STREAM) {
      if (group !== STATS_GROUP) return { type: 'sync', data: item === null ? [] : null };
      const snapshot = this.hub.snapshot();
      return { type: 'sync', data: item === null ? [snapshot] : item === STATS_ITEM ? snapshot : null };
    }
    try {
      const data = item === null ? await this.items.list(stream, group, {}) : await this.items.get({ stream, group, item }, {});
      return { type: 'sync', data };
    } catch (err) {
      this.ctx.logger.warn(
        { stream_name: stream, group_id: group, item_id: item },
        `stream sync failed, none sent: ${err instanceof Error ? err.message : String(err)}`,
      );
      return undefined;
    }
  }

  /** The payload of join and leave triggers for subscription `s` (`id`: the subscription id). */
  private event(connection: StreamConnection, s: Subscription): JoinLeaveEvent {
    return {
      subscription_id: s.id,
      stream_name: s.stream,
      group_id: s.group,
      id: s.item,
      item_id: s.item,
      context: connection.context,
    };
  }
}
