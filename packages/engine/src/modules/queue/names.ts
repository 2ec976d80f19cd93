/**
 * Names of the queues the module keeps on its backend. A topic feeds one queue per subscribed
 * function (its replicas compete on it); a named function queue is one queue; a topic's messages
 * published while it had no subscriber wait in its unrouted queue. The topic's length is part of a
 * subscriber queue's name so that no topic/function pair can name another's queue (`a::b` + `c` and
 * `a` + `b::c` differ).
 */
export const subscriberQueue = (topic: string, functionId: string): string => `topic:${topic.length}:${topic}:${functionId}`;
export const namedQueue = (name: string): string => `queue:${name}`;
export const unroutedQueue = (topic: string): string => `unrouted:${topic}`;

export type QueueName = { kind: 'topic'; topic: string; functionId: string } | { kind: 'named'; name: string } | { kind: 'unrouted'; topic: string };

/** What a backend queue name stands for; undefined for a name the module did not make. */
export function parseQueueName(queue: string): QueueName | undefined {
  if (queue.startsWith('queue:')) return { kind: 'named', name: queue.slice(6) };
  if (queue.startsWith('unrouted:')) return { kind: 'unrouted', topic: queue.slice(9) };
  const m = /^topic:(\d+):/.exec(queue);
  if (!m) return undefined;
  const start = m[0].length;
  const length = Number(m[1]);
  if (queue[start + length] !== ':') return undefined;
  return { kind: 'topic', topic: queue.slice(start, start + length), functionId: queue.slice(start + length + 1) };
}
