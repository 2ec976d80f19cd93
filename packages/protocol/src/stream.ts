// The stream module's wire messages: what its WebSocket listener sends to clients, what its `stream`
// triggers deliver, and what `stream:join` / `stream:leave` handlers get. Types only.

/** What happened to the item (or group) a {@link StreamMessage} is about. */
export type StreamMessageEvent<T = unknown> =
  /** The current value: answers a join; `data` is the item's value (null when missing) or, for a group join, the array of its values. */
  | { type: 'sync'; data: T | T[] | null }
  /** The item was created; `data` is its value. */
  | { type: 'create'; data: T }
  /** The item was changed; `data` is its new value. */
  | { type: 'update'; data: T }
  /** The item was deleted; `data` is the value it had. */
  | { type: 'delete'; data: T }
  /** A custom event sent with `stream::send` (nothing stored). */
  | { type: 'event'; event: { type: string; data: unknown } }
  /** A `stream:join` handler refused the join: the subscription does not exist. */
  | { type: 'unauthorized' };

/**
 * A message of the stream module: what a `stream` trigger delivers (`worker.stream.onChange`) and what
 * stream clients receive over the stream WebSocket (`@flint/sdk/stream-client`). Triggers get
 * `create`, `update`, `delete` and `event`; `sync` and `unauthorized` go to clients only.
 */
export interface StreamMessage<T = unknown> {
  type: 'stream';
  /** When the change happened (unix ms). */
  timestamp: number;
  streamName: string;
  groupId: string;
  /** The item, or null for a message about the whole group (a group `sync`, an event sent without id). */
  id: string | null;
  event: StreamMessageEvent<T>;
}

/** What `stream:join` and `stream:leave` handlers receive: a stream client joined or left (or disconnected). */
export interface StreamJoinLeaveEvent {
  /** The id the client chose for its subscription. */
  subscription_id: string;
  stream_name: string;
  group_id: string;
  /** The item joined, or null for a group. */
  id: string | null;
  /** The same as `id`. */
  item_id: string | null;
  /** What the stream listener's `auth_function` returned as `context` for the connection, else null. */
  context: unknown;
}
