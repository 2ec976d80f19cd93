// The messages of the stream module, shared by `worker.stream` (stream.ts) and the browser client
// (stream-client/). No imports: the stream client is bundled for browsers.

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

/** The config of a `stream` trigger: changes of `stream_name`, of one group or one item when given. */
export interface StreamTriggerConfig {
  stream_name: string;
  group_id?: string;
  /** Only messages whose `id` is this item id. */
  item_id?: string;
  /** Called with the message first; a literal `false` skips the handler. */
  condition_function_id?: string;
}

/** The config of a `stream:join` or `stream:leave` trigger: joins of every stream, or of `stream_name` only. */
export interface StreamJoinLeaveTriggerConfig {
  stream_name?: string;
  /** Called with the event first; a literal `false` skips the handler. */
  condition_function_id?: string;
}
