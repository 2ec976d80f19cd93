import type { ConsumeMessage, GetMessage, Options } from 'amqplib';
import type { DeadLetter, Delivery, WaitingMessage } from '../types.js';

/**
 * How a Flint message travels as an AMQP message: the body is the JSON text of `data`; the id is the
 * `messageId`; everything else is a header. Times are decimal strings (a 64-bit AMQP integer is not
 * a safe JS number on every client).
 */
export interface Envelope {
  id: string;
  data: unknown;
  /** Deliveries made so far (the next delivery is attempt `attempts + 1`). */
  attempts: number;
  publishedAt: number;
  group?: string;
  /** A topic's message: the group for each FIFO queue bound to the topic, by queue name. */
  groups?: Record<string, string>;
  traceparent?: string;
  baggage?: string;
  functionId?: string;
  /** Dead letters only. */
  error?: string;
  failedAt?: number;
}

const H = {
  attempts: 'x-flint-attempts',
  publishedAt: 'x-flint-published-at',
  group: 'x-flint-group',
  groups: 'x-flint-groups',
  traceparent: 'x-flint-traceparent',
  baggage: 'x-flint-baggage',
  functionId: 'x-flint-function-id',
  error: 'x-flint-error',
  failedAt: 'x-flint-failed-at',
} as const;

export function encode(env: Envelope): { content: Buffer; options: Options.Publish } {
  // No attempts header on a first publish (absent reads as 0): one table entry less to encode and decode per message.
  const headers: Record<string, string> = { [H.publishedAt]: String(env.publishedAt) };
  if (env.attempts !== 0) headers[H.attempts] = String(env.attempts);
  if (env.group !== undefined) headers[H.group] = env.group;
  if (env.groups !== undefined) headers[H.groups] = JSON.stringify(env.groups);
  if (env.traceparent !== undefined) headers[H.traceparent] = env.traceparent;
  if (env.baggage !== undefined) headers[H.baggage] = env.baggage;
  if (env.functionId !== undefined) headers[H.functionId] = env.functionId;
  if (env.error !== undefined) headers[H.error] = env.error;
  if (env.failedAt !== undefined) headers[H.failedAt] = String(env.failedAt);
  return {
    content: Buffer.from(JSON.stringify(env.data === undefined ? null : env.data)),
    options: { messageId: env.id, persistent: true, contentType: 'application/json', headers, mandatory: true },
  };
}

/** The envelope of a received message; `queue` picks a topic message's group for that queue. */
export function decode(msg: ConsumeMessage | GetMessage, queue?: string): Envelope {
  const h = (msg.properties.headers ?? {}) as Record<string, unknown>;
  const text = (k: string) => (h[k] === undefined || h[k] === null ? undefined : Buffer.isBuffer(h[k]) ? (h[k] as Buffer).toString() : String(h[k]));
  let group = text(H.group);
  const groupsText = text(H.groups);
  const groups = groupsText === undefined ? undefined : (JSON.parse(groupsText) as Record<string, string>);
  if (group === undefined && groups && queue !== undefined) group = groups[queue];
  const failedAt = text(H.failedAt);
  return {
    id: String(msg.properties.messageId ?? ''),
    data: JSON.parse(msg.content.toString()),
    attempts: Number(text(H.attempts) ?? 0),
    publishedAt: Number(text(H.publishedAt) ?? 0),
    group,
    traceparent: text(H.traceparent),
    baggage: text(H.baggage),
    functionId: text(H.functionId),
    error: text(H.error),
    failedAt: failedAt === undefined ? undefined : Number(failedAt),
  };
}

export function toDelivery(env: Envelope, attempt: number): Delivery {
  return {
    id: env.id,
    data: env.data,
    attempt,
    publishedAt: env.publishedAt,
    group: env.group,
    traceparent: env.traceparent,
    baggage: env.baggage,
    functionId: env.functionId,
  };
}

export function toWaiting(env: Envelope): WaitingMessage {
  return {
    id: env.id,
    data: env.data,
    publishedAt: env.publishedAt,
    group: env.group,
    functionId: env.functionId,
    traceparent: env.traceparent,
    baggage: env.baggage,
  };
}

export function toDeadLetter(env: Envelope): DeadLetter {
  return {
    id: env.id,
    data: env.data,
    error: env.error ?? '',
    attempts: env.attempts,
    failedAt: env.failedAt ?? 0,
    publishedAt: env.publishedAt,
    group: env.group,
    functionId: env.functionId,
    traceparent: env.traceparent,
    baggage: env.baggage,
  };
}
