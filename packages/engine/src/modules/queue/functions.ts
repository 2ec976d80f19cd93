import { FlintError } from '@flint/protocol';
import type { QueueBackend } from '../../adapters/queue/types.js';
import type { InternalHandler, ModuleContext } from '../../core/module-api.js';
import { optionalCount, payloadObject } from '../../lib/payload.js';
import type { QueueCatalog } from './catalog.js';
import type { Unrouted } from './unrouted.js';

const object = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required });

function requiredString(d: Record<string, unknown>, key: string, code: 'topic_not_set' | 'queue_not_set' | 'message_id_not_set'): string {
  const value = d[key];
  if (value === undefined || value === null || value === '') throw FlintError.of(code);
  if (typeof value !== 'string') throw new FlintError('invalid_payload', `${key} must be a string`);
  return value;
}

export interface QueueFunctionDeps {
  ctx: ModuleContext;
  backend: QueueBackend;
  catalog: QueueCatalog;
  unrouted: Unrouted;
}

/** `flint::durable::publish` and the queue admin functions, with their upstream ids as unlisted aliases. */
export function registerQueueFunctions({ ctx, backend, catalog, unrouted }: QueueFunctionDeps): void {
  const register = (id: string, alias: string | undefined, description: string, request_format: unknown, handler: InternalHandler) => {
    ctx.registerFunction({ id, description, request_format }, handler);
    if (alias) ctx.registerFunction({ id: alias, description: `${description} (alias of ${id})`, request_format }, handler, { unlisted: true });
  };

  register(
    'flint::durable::publish',
    'iii::durable::publish',
    'Publish data to a topic: every function subscribed to it (durable:subscriber) gets it once',
    object({ topic: { type: 'string', minLength: 1 }, data: {}, delay_ms: { type: 'integer', minimum: 0 } }, ['topic', 'data']),
    async (input, call) => {
      const d = payloadObject(input);
      const topic = requiredString(d, 'topic', 'topic_not_set');
      if (!('data' in d)) throw new FlintError('invalid_payload', 'data is required (null is allowed)');
      const delayMs = optionalCount(d, 'delay_ms', 0, 365 * 24 * 3600 * 1000);
      const message = { data: d.data, delayMs, traceparent: call.traceparent, baggage: call.baggage };
      const copies = await backend.publishTopic(topic, message);
      if (copies === 0) await unrouted.park(topic, message);
      else catalog.countPublished(topic);
      return null;
    },
  );

  const queueArg = object({ queue: { type: 'string', minLength: 1 } }, ['queue']);
  const messageArg = object({ queue: { type: 'string', minLength: 1 }, message_id: { type: 'string', minLength: 1 } }, ['queue', 'message_id']);

  register(
    'flint::queue::redrive',
    'iii::queue::redrive',
    "Move a topic's or named queue's dead letters (and a topic's unrouted messages) back to be handled",
    queueArg,
    async (input) => {
      const queue = requiredString(payloadObject(input), 'queue', 'queue_not_set');
      const target = await catalog.resolve(queue);
      let redriven = 0;
      for (const q of target.queues) redriven += await backend.redrive(q);
      const result: Record<string, unknown> = { queue, redriven };
      if (target.kind === 'topic') result.unrouted_redriven = await unrouted.redrive(queue);
      return result;
    },
  );

  register('flint::queue::redrive_message', 'iii::queue::redrive_message', 'Move one dead letter back to be handled', messageArg, async (input) => {
    const d = payloadObject(input);
    const queue = requiredString(d, 'queue', 'queue_not_set');
    const messageId = requiredString(d, 'message_id', 'message_id_not_set');
    for (const q of (await catalog.resolve(queue)).queues) {
      if (await backend.redriveMessage(q, messageId)) return { queue, message_id: messageId, redriven: 1 };
    }
    return { queue, message_id: messageId, redriven: 0 };
  });

  register('flint::queue::discard_message', 'iii::queue::discard_message', 'Delete one dead letter for good', messageArg, async (input) => {
    const d = payloadObject(input);
    const queue = requiredString(d, 'queue', 'queue_not_set');
    const messageId = requiredString(d, 'message_id', 'message_id_not_set');
    for (const q of (await catalog.resolve(queue)).queues) {
      if (await backend.discard(q, messageId)) return { queue, message_id: messageId, discarded: 1 };
    }
    return { queue, message_id: messageId, discarded: 0 };
  });

  ctx.registerFunction({ id: 'engine::queue::list_topics', description: 'Topics and named queues with their subscriber counts' }, () => catalog.listTopics());

  ctx.registerFunction(
    {
      id: 'engine::queue::topic_stats',
      description: "A topic's or named queue's depth, in flight, delayed, dead, unrouted, consumers and rates",
      request_format: object({ topic: { type: 'string' } }, ['topic']),
    },
    (input) => catalog.stats(requiredString(payloadObject(input), 'topic', 'topic_not_set')),
  );

  ctx.registerFunction({ id: 'engine::queue::dlq_topics', description: 'Topics and named queues that hold dead letters' }, () => catalog.deadTopics());

  ctx.registerFunction(
    {
      id: 'engine::queue::dlq_messages',
      description: "A topic's or named queue's dead letters, newest failure first",
      request_format: object({ topic: { type: 'string' }, offset: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1, maximum: 1000 } }, [
        'topic',
      ]),
    },
    async (input) => {
      const d = payloadObject(input);
      const topic = requiredString(d, 'topic', 'topic_not_set');
      return catalog.deadLetters(topic, optionalCount(d, 'offset', 0), Math.max(1, optionalCount(d, 'limit', 50, 1000)));
    },
  );
}
