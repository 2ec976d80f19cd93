import type { Worker } from '@flint/sdk';
import { CliError, withModule } from '../client.js';
import { table, truncate } from '../table.js';

export interface QueueCommandOptions {
  json?: boolean;
  url?: string;
  token?: string;
}

interface TopicEntry {
  name: string;
  broker_type: string;
  subscriber_count: number;
}

interface TopicStats {
  depth: number;
  waiting: number;
  in_flight: number;
  delayed: number;
  dead: number;
  unrouted?: number;
  consumer_count: number;
}

interface DeadLetterRow {
  id: string;
  function_id: string | null;
  retries: number;
  failed_at: number;
  error: string;
}

/** Runs `use` with a connected client; a missing queue function means the engine has no queue module. */
function withEngine<T>(options: QueueCommandOptions, use: (w: Worker) => Promise<T>): Promise<T> {
  return withModule(options, { module: 'flint-queue', what: 'queue module' }, use);
}

/** `flint queues`: every topic and named queue with its depth, in flight, delayed, dead and unrouted counts. */
export function queues(options: QueueCommandOptions): Promise<string> {
  return withEngine(options, async (w) => {
    const topics = (await w.trigger({ function_id: 'engine::queue::list_topics', payload: {} })) as TopicEntry[];
    const rows = await Promise.all(
      topics.map(async (t) => ({ ...t, stats: (await w.trigger({ function_id: 'engine::queue::topic_stats', payload: { topic: t.name } })) as TopicStats })),
    );
    if (options.json) return JSON.stringify(rows, null, 2);
    return table(
      ['NAME', 'KIND', 'WAITING', 'IN FLIGHT', 'DELAYED', 'DEAD', 'UNROUTED', 'CONSUMERS'],
      rows.map((r) => [
        r.name,
        r.broker_type === 'function_queue' ? 'named queue' : `topic (${r.broker_type})`,
        String(r.stats.waiting),
        String(r.stats.in_flight),
        String(r.stats.delayed),
        String(r.stats.dead),
        r.stats.unrouted === undefined ? '-' : String(r.stats.unrouted),
        String(r.stats.consumer_count),
      ]),
    );
  });
}

/** `flint dlq list TOPIC`: the dead letters of a topic or named queue, newest failure first. */
export function dlqList(topic: string, options: QueueCommandOptions & { limit?: number }): Promise<string> {
  return withEngine(options, async (w) => {
    const letters = (await w.trigger({ function_id: 'engine::queue::dlq_messages', payload: { topic, limit: options.limit ?? 50 } })) as DeadLetterRow[];
    if (options.json) return JSON.stringify(letters, null, 2);
    return table(
      ['ID', 'FUNCTION', 'ATTEMPTS', 'FAILED AT', 'ERROR'],
      letters.map((l) => [
        l.id,
        l.function_id ?? '-',
        String(l.retries),
        new Date(l.failed_at * 1000).toISOString(),
        truncate(l.error.replace(/\s+/g, ' '), 70),
      ]),
    );
  });
}

/** `flint dlq redrive TOPIC`: dead letters (and a topic's unrouted messages) back to be handled. */
export function dlqRedrive(topic: string, options: QueueCommandOptions): Promise<string> {
  return withEngine(options, async (w) => {
    const r = (await w.trigger({ function_id: 'flint::queue::redrive', payload: { queue: topic } })) as { redriven: number; unrouted_redriven?: number };
    if (options.json) return JSON.stringify(r, null, 2);
    const unrouted = r.unrouted_redriven ? ` and ${r.unrouted_redriven} unrouted message${r.unrouted_redriven === 1 ? '' : 's'}` : '';
    return `redrove ${r.redriven} dead letter${r.redriven === 1 ? '' : 's'}${unrouted} of ${topic}`;
  });
}

/** `flint dlq discard TOPIC MESSAGE_ID`: deletes one dead letter. */
export function dlqDiscard(topic: string, messageId: string, options: QueueCommandOptions): Promise<string> {
  return withEngine(options, async (w) => {
    const r = (await w.trigger({ function_id: 'flint::queue::discard_message', payload: { queue: topic, message_id: messageId } })) as { discarded: number };
    if (options.json) return JSON.stringify(r, null, 2);
    if (r.discarded === 0) throw new CliError('message_not_found', `${topic} has no dead letter ${messageId}`);
    return `discarded dead letter ${messageId} of ${topic}`;
  });
}
