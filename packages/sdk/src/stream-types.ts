// The messages of the stream module, shared by `worker.stream` (stream.ts) and the browser client
// (stream-client/). Type imports only: the stream client is bundled for browsers.
import type { StreamJoinLeaveEvent, StreamMessage, StreamMessageEvent } from '@flint/protocol';

export type { StreamJoinLeaveEvent, StreamMessage, StreamMessageEvent };

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
