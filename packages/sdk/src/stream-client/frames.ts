import type { StreamMessage } from '../stream-types.js';

// What the stream client makes of frames: the message a frame holds, subscription ids and map keys.

let counter = 0;

/** A fresh subscription id: a UUID where `crypto.randomUUID` exists, else a counter and a random string. */
export function newSubscriptionId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  return crypto?.randomUUID?.() ?? `sub-${++counter}-${Math.random().toString(36).slice(2)}`;
}

/** The key of a target in the client's map of joined targets. */
export const keyOf = (stream: string, group: string, id: string | null | undefined): string => JSON.stringify([stream, group, id ?? null]);

/** The frame as a StreamMessage, or undefined when it is not one. */
export function parseMessage(data: unknown): StreamMessage | undefined {
  if (typeof data !== 'string') return undefined;
  let m: Partial<StreamMessage> & { id?: unknown };
  try {
    m = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (m === null || typeof m !== 'object' || m.type !== 'stream' || typeof m.streamName !== 'string' || typeof m.groupId !== 'string') return undefined;
  if (m.id !== undefined && m.id !== null && typeof m.id !== 'string') return undefined;
  if (m.event === null || typeof m.event !== 'object' || typeof m.event.type !== 'string') return undefined;
  return { ...m, id: m.id ?? null } as StreamMessage;
}
