import { z } from 'zod';
import { adapterRef } from '../../lib/adapter-ref.js';
import { positiveInt } from '../../lib/config-fields.js';

const nonNegativeInt = (defaultValue: number) => z.number().int().min(0).default(defaultValue);
const backoffType = z.enum(['exponential', 'linear', 'fixed']);

/** Delivery settings shared by topic subscribers (module `defaults`, per trigger `queue_config`) and named queues. */
const deliveryFields = {
  /** Retries after the first attempt; then the message is dead. */
  max_retries: nonNegativeInt(3),
  /** Messages handled at once, per subscriber trigger (per named queue). */
  concurrency: positiveInt(10),
  backoff_type: backoffType.default('exponential'),
  backoff_ms: nonNegativeInt(1000),
  backoff_max_ms: nonNegativeInt(60_000),
  /** A handler that has not answered after this long has failed (its message is retried); also the lease on the backend. */
  visibility_timeout_ms: positiveInt(30_000),
};

export const deliveryDefaultsSchema = z.strictObject(deliveryFields).prefault({});
export type DeliveryDefaults = z.output<typeof deliveryDefaultsSchema>;

/** A named function queue (`queue_configs.<name>`), fed by `TriggerAction.Enqueue({queue})`. */
const namedQueueSchema = z
  .strictObject({
    ...deliveryFields,
    type: z.enum(['standard', 'fifo']).default('standard'),
    /** FIFO: the field of the enqueued data that names a message's group (strict order per group). */
    message_group_field: z.string().min(1).optional(),
  })
  .refine((q) => q.type !== 'fifo' || q.message_group_field !== undefined, {
    path: ['message_group_field'],
    message: 'is required for a fifo queue (the field of the data that names the message group)',
  });

export type NamedQueueConfig = z.output<typeof namedQueueSchema>;

export const queueConfigSchema = z.strictObject({
  /** A `queue` adapter: `{name: builtin}` (default, in memory), `{name: redis, config: {...}}`, `{name: rabbitmq, config: {...}}`. */
  adapter: adapterRef({ name: 'builtin', config: { store_method: 'in_memory' } }),
  /** Named function queues. */
  queue_configs: z.record(z.string().min(1), namedQueueSchema).default({}),
  /** Delivery settings of topic subscribers; a trigger's `queue_config` overrides them. */
  defaults: deliveryDefaultsSchema,
  /** Messages a topic with no subscriber keeps (beyond that, publishes are refused with `unrouted_full`). */
  unrouted_max: positiveInt(10_000),
});

export type QueueConfig = z.output<typeof queueConfigSchema>;
