/**
 * `@flint/sdk/stream-client`: a client of the engine's stream listener (`flint-stream`, default
 * ws://127.0.0.1:3112/) for web pages and Node. It joins items and groups of streams and receives
 * their changes as {@link StreamMessage}s. No Node imports: it is meant to be bundled for browsers.
 */
import { reconnectDelay } from '../backoff.js';
import type { StreamMessage } from '../stream-types.js';
import { keyOf, newSubscriptionId, parseMessage } from './frames.js';
import {
  DEFAULT_STREAM_URL,
  type JoinOptions,
  type StreamClientOptions,
  type StreamClientStatus,
  type StreamSubscription,
  type StreamTarget,
  type WebSocketConstructor,
  type WebSocketLike,
} from './types.js';

export type { StreamMessage, StreamMessageEvent } from '../stream-types.js';
export * from './types.js';

interface Listener {
  onMessage: (message: StreamMessage) => void;
  options: JoinOptions;
  sub: { active: boolean };
  /** Got the `sync` answering its join (or the last re-join after a reconnect). */
  synced: boolean;
}

/** The subscription the server holds for one target, shared by the subscriptions of this client that joined it. */
interface Joined {
  subscriptionId: string;
  target: StreamTarget;
  listeners: Set<Listener>;
}

const OPEN = 1;

/**
 * A connection to the stream listener: join targets with {@link join}; it reconnects after the connection
 * is lost and re-joins every live subscription (each gets a fresh `sync`). Create it with {@link connectStream}.
 */
export class StreamConnection {
  private socket: WebSocketLike | undefined;
  private closedByUser = false;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private currentStatus: StreamClientStatus = 'connecting';
  private readonly joined = new Map<string, Joined>();
  private waiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private readonly WebSocket: WebSocketConstructor;

  constructor(
    readonly url: string,
    private readonly options: StreamClientOptions = {},
  ) {
    const ctor = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (ctor === undefined) throw new Error('no WebSocket available: on Node 20 pass { WebSocket } from the ws package');
    this.WebSocket = ctor;
    this.connect();
  }

  get status(): StreamClientStatus {
    return this.currentStatus;
  }

  /** Resolves when the connection is open (at once if it is); rejects when the client is closed first. */
  opened(): Promise<void> {
    if (this.closedByUser) return Promise.reject(new Error('stream client is closed'));
    if (this.currentStatus === 'open') return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * Joins a group (every message of it) or one item (the messages whose `id` is `item_id`); `onMessage`
   * first gets a `sync` with the current value (a group's: the array of its values), then each change.
   * May be called before the connection is open. Joins of the same target on one client share one
   * subscription on the engine.
   */
  join<T = unknown>(target: StreamTarget, onMessage: (message: StreamMessage<T>) => void, options: JoinOptions = {}): StreamSubscription {
    if (this.closedByUser) throw new Error('stream client is closed');
    const name = (value: unknown) => typeof value === 'string' && value !== '';
    if (!name(target.stream_name) || !name(target.group_id) || (target.item_id !== undefined && !name(target.item_id)))
      throw new Error('join needs a non-empty stream_name and group_id (and item_id, when given)');
    const key = keyOf(target.stream_name, target.group_id, target.item_id);
    let joined = this.joined.get(key);
    if (joined === undefined) {
      joined = { subscriptionId: newSubscriptionId(), target: { ...target }, listeners: new Set() };
      this.joined.set(key, joined);
    }
    const sub = { active: true };
    const listener: Listener = { onMessage: onMessage as (message: StreamMessage) => void, options, sub, synced: false };
    joined.listeners.add(listener);
    // A second join of a target asks again, for a sync of its own.
    this.sendFrame('join', joined);
    const entry = joined;
    return {
      target: entry.target,
      get active() {
        return sub.active;
      },
      leave: () => {
        if (!sub.active) return;
        sub.active = false;
        entry.listeners.delete(listener);
        if (entry.listeners.size === 0 && this.joined.get(key) === entry) {
          this.joined.delete(key);
          this.sendFrame('leave', entry);
        }
      },
    };
  }

  /** Closes the connection for good: no reconnect, no more callbacks. */
  close(): void {
    if (this.closedByUser) return;
    this.closedByUser = true;
    clearTimeout(this.timer);
    for (const joined of this.joined.values()) for (const l of joined.listeners) l.sub.active = false;
    this.joined.clear();
    const socket = this.socket;
    this.socket = undefined;
    socket?.close(1000);
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error('stream client is closed'));
    this.setStatus('closed');
  }

  private connect(): void {
    this.setStatus('connecting');
    const socket = new this.WebSocket(this.url, this.options.protocols);
    this.socket = socket;
    socket.onopen = () => {
      if (socket !== this.socket) return;
      this.attempt = 0;
      this.setStatus('open');
      for (const joined of this.joined.values()) {
        for (const l of joined.listeners) l.synced = false;
        this.sendFrame('join', joined);
      }
      for (const waiter of this.waiters.splice(0)) waiter.resolve();
    };
    socket.onmessage = (event: { data: unknown }) => {
      if (socket !== this.socket) return;
      const message = parseMessage(event.data);
      if (message !== undefined) this.dispatch(message);
    };
    socket.onerror = () => {}; // a close follows
    socket.onclose = (event: { code: number; reason: string }) => {
      if (socket !== this.socket) return;
      this.socket = undefined;
      this.setStatus('closed', { code: event.code, reason: event.reason });
      if (this.options.reconnect === false || this.closedByUser) return;
      const { initialMs = 250, maxMs = 10_000 } = this.options.backoff ?? {};
      const delay = reconnectDelay({ initialDelayMs: initialMs, maxDelayMs: maxMs, backoffMultiplier: 2, jitterFactor: 0.3, maxRetries: -1 }, this.attempt++);
      this.timer = setTimeout(() => this.reconnect(), delay);
    };
  }

  private reconnect(): void {
    if (this.closedByUser) return;
    try {
      this.connect();
    } catch (error) {
      this.report(error);
    }
  }

  /** `sync` and `unauthorized` answer the joins of exactly their target; changes and events go to the group's and the item's subscriptions. */
  private dispatch(message: StreamMessage): void {
    const { streamName, groupId, id } = message;
    const type = message.event.type;
    if (type === 'sync' || type === 'unauthorized') {
      const key = keyOf(streamName, groupId, id);
      const joined = this.joined.get(key);
      if (joined === undefined) return;
      if (type === 'unauthorized') this.joined.delete(key);
      for (const l of [...joined.listeners]) {
        if (!l.sub.active || (type === 'sync' && l.synced)) continue;
        l.synced = true;
        if (type === 'unauthorized') l.sub.active = false;
        this.safely(() => l.onMessage(message));
        if (type === 'unauthorized') this.safely(() => l.options.onUnauthorized?.());
      }
      return;
    }
    const targets = [this.joined.get(keyOf(streamName, groupId, null))];
    if (id !== null) targets.push(this.joined.get(keyOf(streamName, groupId, id)));
    for (const joined of targets) {
      if (joined === undefined) continue;
      for (const l of [...joined.listeners]) if (l.sub.active) this.safely(() => l.onMessage(message));
    }
  }

  private sendFrame(type: 'join' | 'leave', joined: Joined): void {
    const socket = this.socket;
    if (socket === undefined || socket.readyState !== OPEN) return; // joins are sent on open; the engine forgets a lost connection's subscriptions
    const { stream_name, group_id, item_id } = joined.target;
    const data: Record<string, string> = { subscriptionId: joined.subscriptionId, streamName: stream_name, groupId: group_id };
    if (item_id !== undefined) data.id = item_id;
    try {
      socket.send(JSON.stringify({ type, data }));
    } catch (error) {
      this.report(error);
    }
  }

  private setStatus(status: StreamClientStatus, close?: { code: number; reason: string }): void {
    this.currentStatus = status;
    const onStatus = this.options.onStatus;
    if (onStatus !== undefined) this.safely(() => onStatus(status, close));
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.report(error);
    }
  }

  private report(error: unknown): void {
    try {
      if (this.options.onError) this.options.onError(error);
      else console.error('[flint] a stream client callback threw', error);
    } catch {
      // an onError that throws is ignored
    }
  }
}

/**
 * Connects to the engine's stream listener at `url` (default ws://127.0.0.1:3112/).
 *
 * ```ts
 * import WebSocket from 'ws'; // Node 20 only; browsers and Node 22+ have one
 * const client = connectStream('ws://127.0.0.1:3112', { WebSocket });
 * const sub = client.join({ stream_name: 'chat', group_id: 'room-1' }, (message) => console.log(message.event));
 * sub.leave();
 * client.close();
 * ```
 */
export function connectStream(url: string = DEFAULT_STREAM_URL, options: StreamClientOptions = {}): StreamConnection {
  return new StreamConnection(url, options);
}
