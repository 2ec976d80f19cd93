import { randomUUID } from 'node:crypto';
import { type ClientHost, type HandlerWithTrigger, handlerWithTrigger } from './module-client.js';

/** How a subscriber's messages are delivered (each key overrides the queue module's `defaults`). */
export interface SubscriberQueueConfig {
  /** `fifo`: in publish order per group (`message_group_field`), one at a time per group. */
  type?: 'standard' | 'fifo';
  /** Messages handled at once by this subscriber. */
  concurrency?: number;
  /** Retries after the first attempt; then the message goes to the dead letters. */
  max_retries?: number;
  backoff_type?: 'exponential' | 'linear' | 'fixed';
  backoff_ms?: number;
  backoff_max_ms?: number;
  /** A handler that has not answered after this long has failed (its message is retried). */
  visibility_timeout_ms?: number;
  /** Each message waits this long after its publish before this subscriber handles it. */
  delay_ms?: number;
  /** FIFO: the field of the data that names a message's group. */
  message_group_field?: string;
}

/** The config of a `durable:subscriber` trigger. */
export interface DurableSubscriberConfig {
  topic: string;
  condition_function_id?: string;
  queue_config?: SubscriberQueueConfig;
}

export interface SubscribeOptions {
  /** Id of the function that handles the messages (default: a generated `on-message::<uuid>`). */
  function_id?: string;
  condition_function_id?: string;
  queue_config?: SubscriberQueueConfig;
}

export interface DeadLetterInfo<T = unknown> {
  id: string;
  payload: T;
  error: string;
  /** Seconds since the epoch. */
  failed_at: number;
  /** Attempts made. */
  retries: number;
  size_bytes: number;
  function_id: string | null;
}

/** A typed client for the queue module: publish to topics, subscribe to them, look after dead letters. */
export class QueueClient {
  constructor(private readonly worker: ClientHost) {}

  /**
   * Publishes `data` to `topic`: every function subscribed to it gets it once. Resolves once the message
   * is stored; rejects when it is refused (e.g. `message_group_missing`, `unrouted_full`).
   */
  async publish<T = unknown>(topic: string, data: T, options: { delayMs?: number } = {}): Promise<void> {
    const payload: Record<string, unknown> = { topic, data };
    if (options.delayMs !== undefined) payload.delay_ms = options.delayMs;
    await this.worker.trigger({ function_id: 'flint::durable::publish', payload });
  }

  /** Handles every message of `topic` (registers a function and a `durable:subscriber` trigger). */
  subscribe<T = unknown>(topic: string, handler: (data: T) => unknown, options: SubscribeOptions = {}): HandlerWithTrigger {
    const config: DurableSubscriberConfig = { topic };
    if (options.condition_function_id !== undefined) config.condition_function_id = options.condition_function_id;
    if (options.queue_config !== undefined) config.queue_config = options.queue_config;
    const functionId = options.function_id ?? `on-message::${randomUUID()}`;
    return handlerWithTrigger(
      this.worker,
      functionId,
      handler as (input: never) => unknown,
      `Handles messages of topic ${topic}`,
      'durable:subscriber',
      config,
    );
  }

  /** Depth, in flight, delayed, dead, unrouted, consumers and rates of a topic or named queue. */
  stats(topic: string): Promise<Record<string, unknown>> {
    return this.worker.trigger({ function_id: 'engine::queue::topic_stats', payload: { topic } });
  }

  deadLetters<T = unknown>(topic: string, options: { offset?: number; limit?: number } = {}): Promise<DeadLetterInfo<T>[]> {
    return this.worker.trigger({ function_id: 'engine::queue::dlq_messages', payload: { topic, ...options } });
  }

  /** Moves the dead letters of a topic or named queue (and a topic's unrouted messages) back to be handled. */
  redrive(queue: string): Promise<{ queue: string; redriven: number; unrouted_redriven?: number }> {
    return this.worker.trigger({ function_id: 'flint::queue::redrive', payload: { queue } });
  }
}
