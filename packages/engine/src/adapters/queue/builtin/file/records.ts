import type { DeadEntry, StoredMessage } from '../memory-queue.js';
import { type EncodedFrame, encodeFrame } from './frame.js';

/**
 * The records of the queue's log and snapshot (the meta JSON of each frame; `t` says which). A record
 * sets state rather than changing it (attempts are written as a count, not "+1"), so replaying one
 * that the snapshot already holds is harmless (see compaction.ts).
 *
 * - `p` a message (body: its data): published, or in a snapshot; `due` delayed, `r` waiting for a retry.
 * - `k` a dead letter with its data (snapshots only).
 * - `d` delivered (`a` attempts so far), `r` to go again (`a`, `due`), `a` gone (acked, removed),
 *   `x` dead (`e` error, `a` attempts, `f` failed at), `v` a dead letter back to waiting, `c` a dead letter discarded.
 * - `h` / `e` a snapshot's header and trailer.
 */
export interface MessageMeta {
  t: 'p' | 'k';
  q: string;
  id: string;
  a: number;
  at: number;
  g?: string;
  tp?: string;
  bg?: string;
  fn?: string;
  due?: number;
  r?: 1;
  e?: string;
  f?: number;
}

function messageMeta(t: 'p' | 'k', queue: string, msg: StoredMessage, attempts: number): MessageMeta {
  return { t, q: queue, id: msg.id, a: attempts, at: msg.publishedAt, g: msg.group, tp: msg.traceparent, bg: msg.baggage, fn: msg.functionId };
}

/** A message with its data's JSON text. */
export function putFrame(queue: string, msg: StoredMessage, dataJson: string | Buffer, dueAt: number | undefined, retry = false): EncodedFrame {
  const meta = messageMeta('p', queue, msg, msg.attempts);
  if (dueAt !== undefined) meta.due = dueAt;
  if (retry) meta.r = 1;
  return encodeFrame(JSON.stringify(meta), dataJson);
}

export function deadPutFrame(queue: string, entry: DeadEntry, dataJson: string | Buffer): EncodedFrame {
  const meta = messageMeta('k', queue, entry.msg, entry.attempts);
  meta.e = entry.error;
  meta.f = entry.failedAt;
  return encodeFrame(JSON.stringify(meta), dataJson);
}

export const deliveredFrame = (queue: string, msg: StoredMessage) => encodeFrame(JSON.stringify({ t: 'd', q: queue, id: msg.id, a: msg.attempts })).frame;
export const rescheduledFrame = (queue: string, msg: StoredMessage, dueAt: number | undefined) =>
  encodeFrame(JSON.stringify({ t: 'r', q: queue, id: msg.id, a: msg.attempts, due: dueAt })).frame;
export const removedFrame = (queue: string, id: string) => encodeFrame(JSON.stringify({ t: 'a', q: queue, id })).frame;
export const deadFrame = (queue: string, entry: DeadEntry) =>
  encodeFrame(JSON.stringify({ t: 'x', q: queue, id: entry.msg.id, a: entry.attempts, e: entry.error, f: entry.failedAt })).frame;
export const revivedFrame = (queue: string, id: string) => encodeFrame(JSON.stringify({ t: 'v', q: queue, id })).frame;
export const discardedFrame = (queue: string, id: string) => encodeFrame(JSON.stringify({ t: 'c', q: queue, id })).frame;
