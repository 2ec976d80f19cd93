import type { ChannelRef } from './messages.js';

/** True when `value` has the exact shape of a channel reference. */
export function isChannelRef(value: unknown): value is ChannelRef {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.channel_id === 'string' && typeof v.access_key === 'string' && (v.direction === 'read' || v.direction === 'write');
}

/** The path of a channel end on the bridge, e.g. `/ws/channels/<id>?key=<key>&dir=read`. */
export function channelPath(ref: ChannelRef): string {
  return `/ws/channels/${encodeURIComponent(ref.channel_id)}?key=${encodeURIComponent(ref.access_key)}&dir=${ref.direction}`;
}

/** Channel control messages of a streamed HTTP response. */
export type ResponseControl = { type: 'set_status'; status_code: number } | { type: 'set_headers'; headers: Record<string, string> };

export const DEFAULT_BRIDGE_PORT = 49134;
export const DEFAULT_BRIDGE_URL = `ws://127.0.0.1:${DEFAULT_BRIDGE_PORT}`;

/**
 * Flint addition: the bridge path of a spare channel socket. A worker opens it before it needs a
 * channel and binds it to one later with a `bindchannel` text frame (its first frame), so that a
 * channel's first bytes do not wait for a WebSocket handshake. Engines that take such sockets say so
 * in `workerregistered` (`spare_channels: true`); the socket presents the worker's own credentials.
 */
export const SPARE_CHANNEL_PATH = '/ws/spare-channel';

/** The first frame on a spare channel socket: the channel end it serves from then on (as in `channelPath`). */
export interface BindChannelMessage extends ChannelRef {
  type: 'bindchannel';
}

/** The `bindchannel` frame for `ref`. */
export function bindChannelFrame(ref: ChannelRef): string {
  const message: BindChannelMessage = { type: 'bindchannel', channel_id: ref.channel_id, access_key: ref.access_key, direction: ref.direction };
  return JSON.stringify(message);
}

/** The channel end a `bindchannel` frame asks for; undefined when the text is no such frame. */
export function parseBindChannel(text: string): ChannelRef | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isChannelRef(value) || (value as { type?: unknown }).type !== 'bindchannel') return undefined;
  return { channel_id: value.channel_id, access_key: value.access_key, direction: value.direction };
}
