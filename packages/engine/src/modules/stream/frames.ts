import type { StreamMessage, StreamMessageEvent } from '@flint/protocol';
import type { FrameParts, StreamFrame } from '../../adapters/stream/types.js';

export type { StreamMessage };

/** What a frame to subscribers says happened (`event` of the wrapper). */
export type StreamEvent = StreamMessageEvent;

export function streamMessage(stream: string, group: string, id: string | null, event: StreamEvent, timestamp = Date.now()): StreamMessage {
  return { type: 'stream', timestamp, streamName: stream, groupId: group, id, event };
}

/** The message as a frame: serialised once, for every socket and every engine. */
export function frameOf(message: StreamMessage): StreamFrame {
  return { stream: message.streamName, group: message.groupId, id: message.id, text: JSON.stringify(message) };
}

/**
 * The text of a frame up to its event type: `{"type":"stream",…,"event":{"type":"` — the same text
 * JSON.stringify gives for the StreamMessage, so a frame assembled from parts equals one serialised whole.
 */
export function frameHead(stream: string, group: string, id: string | null, timestamp: number): string {
  return `{"type":"stream","timestamp":${timestamp},"streamName":${JSON.stringify(stream)},"groupId":${JSON.stringify(group)},"id":${JSON.stringify(id)},"event":{"type":"`;
}

/** A set's frame around its event type (`create` or `update`), with the new value's JSON text. */
export function changeParts(head: string, valueJson: string): FrameParts {
  return { before: head, after: `","data":${valueJson}}}` };
}

/** A delete's frame around the old value's JSON text. */
export function deleteParts(head: string): FrameParts {
  return { before: `${head}delete","data":`, after: '}}' };
}

/** A client's join or leave: `{"type":"join"|"leave","data":{"subscriptionId","streamName","groupId","id"?}}`. */
export interface ClientRequest {
  type: 'join' | 'leave';
  subscriptionId: string;
  stream: string;
  group: string;
  /** The item of an item-level subscription; null for the whole group. */
  item: string | null;
}

/** Reads a client frame; undefined when it is not a well-formed join or leave (the frame is then ignored). */
export function parseClientFrame(text: string): ClientRequest | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof frame !== 'object' || frame === null) return undefined;
  const { type, data } = frame as { type?: unknown; data?: unknown };
  if ((type !== 'join' && type !== 'leave') || typeof data !== 'object' || data === null) return undefined;
  const { subscriptionId, streamName, groupId, id } = data as Record<string, unknown>;
  if (!isName(subscriptionId) || !isName(streamName) || !isName(groupId)) return undefined;
  if (id !== undefined && id !== null && !isName(id)) return undefined;
  return { type, subscriptionId, stream: streamName, group: groupId, item: typeof id === 'string' ? id : null };
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 1024;
}
