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
