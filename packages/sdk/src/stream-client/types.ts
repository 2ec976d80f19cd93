// The public types of the stream client: options, targets, subscriptions, the WebSocket it needs.

/** Where the engine's stream listener listens by default. */
export const DEFAULT_STREAM_URL = 'ws://127.0.0.1:3112/';

/** What the client uses of a WebSocket: the browser's and the `ws` package's both fit. */
export interface WebSocketLike {
  readonly readyState: number;
  // `never` parameters: both WebSocket types' handlers take their own event classes.
  onopen: ((event: never) => void) | null;
  onmessage: ((event: never) => void) | null;
  onclose: ((event: never) => void) | null;
  onerror: ((event: never) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

/** `connecting` (first connect or a reconnect), `open`, or `closed` (lost, waiting to reconnect, or closed for good). */
export type StreamClientStatus = 'connecting' | 'open' | 'closed';

export interface StreamClientOptions {
  /** The WebSocket class; default `globalThis.WebSocket` (browsers, Node 22+). On Node 20 pass `WebSocket` of the `ws` package. */
  WebSocket?: WebSocketConstructor;
  /** WebSocket subprotocols to ask for. */
  protocols?: string | string[];
  /** Reconnect after the connection is lost (then re-join every subscription); default true. */
  reconnect?: boolean;
  /** Delay before each reconnect: doubling from `initialMs` (250) up to `maxMs` (10000), ±30% jitter. */
  backoff?: { initialMs?: number; maxMs?: number };
  /**
   * Told of every status change. With `closed`, `close` has the close code and reason of the connection
   * that ended: 1001 the engine is stopping, 1013 the client read too slowly, 1008 a policy of the
   * listener, 1006 no connection or the upgrade was refused (HTTP 401/403 from its auth function). The
   * client reconnects after each unless `reconnect` is false or `close()` was called.
   */
  onStatus?(status: StreamClientStatus, close?: { code: number; reason: string }): void;
  /** Gets what a callback threw (default: `console.error`); the client carries on. */
  onError?(error: unknown): void;
}

/** What to join: a whole group, or one item of it. */
export interface StreamTarget {
  stream_name: string;
  group_id: string;
  item_id?: string;
}

export interface JoinOptions {
  /**
   * The engine refused the join (a `stream:join` handler answered `{ unauthorized: true }` or failed, or the
   * connection holds `max_subscriptions_per_connection`): the subscription has ended and is not re-joined.
   * `onMessage` gets the `unauthorized` message too.
   */
  onUnauthorized?(): void;
}

export interface StreamSubscription {
  readonly target: Readonly<StreamTarget>;
  /** False once left, refused, or the client closed. */
  readonly active: boolean;
  /** Leaves (sends `leave` when no other subscription of this client joined the same target); no callback runs after this. */
  leave(): void;
}
