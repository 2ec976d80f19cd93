import type { DeadLettersResponse, QueueStats, QueuesResponse } from '../api-types.js';
import type { Route } from '../http/router.js';
import { queryInt } from './fields.js';

/** The Queues page, through flint-queue's functions. */
export const queueRoutes: Route[] = [
  {
    method: 'GET',
    path: '/_console/queues',
    handler: async ({ link }): Promise<QueuesResponse> => {
      const topics = await link.callOptional<{ name: string }[]>('engine::queue::list_topics', {});
      if (topics === undefined) return { available: false, queues: [] };
      const queues = await Promise.all(topics.map((t) => link.call<QueueStats>('engine::queue::topic_stats', { topic: t.name })));
      return { available: true, queues };
    },
  },
  {
    method: 'GET',
    path: '/_console/queues/:name',
    handler: ({ link, params }) => link.call<QueueStats>('engine::queue::topic_stats', { topic: params.name }),
  },
  {
    method: 'POST',
    path: '/_console/queues/:name/publish',
    handler: async ({ link, params, body }) => {
      await link.call('flint::durable::publish', { topic: params.name, data: (await body()).data ?? null });
      return { published: true, topic: params.name };
    },
  },
  {
    method: 'GET',
    path: '/_console/queues/:name/dead',
    handler: async ({ link, params, query }): Promise<DeadLettersResponse> => {
      const messages = await link.call<DeadLettersResponse['messages']>('engine::queue::dlq_messages', {
        topic: params.name,
        offset: queryInt(query, 'offset', 0, 1e9),
        limit: Math.max(1, queryInt(query, 'limit', 50, 1000)),
      });
      return { queue: params.name as string, messages };
    },
  },
  {
    method: 'POST',
    path: '/_console/queues/:name/redrive',
    handler: ({ link, params }) => link.call('flint::queue::redrive', { queue: params.name }, 60_000),
  },
  {
    method: 'POST',
    path: '/_console/queues/:name/dead/:id/redrive',
    handler: ({ link, params }) => link.call('flint::queue::redrive_message', { queue: params.name, message_id: params.id }),
  },
  {
    method: 'DELETE',
    path: '/_console/queues/:name/dead/:id',
    handler: ({ link, params }) => link.call('flint::queue::discard_message', { queue: params.name, message_id: params.id }),
  },
];
