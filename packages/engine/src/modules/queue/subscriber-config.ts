import { z } from 'zod';
import type { DeliveryDefaults } from './config.js';
import type { RetryPolicy } from './policy.js';

const count = z.number().int().min(0);
const positive = z.number().int().positive();

/**
 * A `durable:subscriber` trigger's `queue_config`: the camelCase keys iii-sdk workers send (`type`,
 * `maxRetries`, `concurrency`, `visibilityTimeout` in seconds, `delaySeconds`, `backoffType`,
 * `backoffDelayMs`) and Flint's snake_case ones. Giving one setting both ways is refused.
 */
const queueConfigSchema = z
  .strictObject({
    type: z.enum(['standard', 'fifo', 'concurrent']).optional(),
    concurrency: positive.optional(),
    maxRetries: count.optional(),
    max_retries: count.optional(),
    visibilityTimeout: positive.optional(),
    visibility_timeout_ms: positive.optional(),
    delaySeconds: count.optional(),
    delay_ms: count.optional(),
    backoffType: z.enum(['exponential', 'linear', 'fixed']).optional(),
    backoff_type: z.enum(['exponential', 'linear', 'fixed']).optional(),
    backoffDelayMs: count.optional(),
    backoff_ms: count.optional(),
    backoff_max_ms: count.optional(),
    message_group_field: z.string().min(1).optional(),
  })
  .superRefine((c, ctx) => {
    const pairs = [
      ['maxRetries', 'max_retries'],
      ['visibilityTimeout', 'visibility_timeout_ms'],
      ['delaySeconds', 'delay_ms'],
      ['backoffType', 'backoff_type'],
      ['backoffDelayMs', 'backoff_ms'],
    ] as const;
    for (const [camel, snake] of pairs) {
      if (c[camel] !== undefined && c[snake] !== undefined)
        ctx.addIssue({ code: 'custom', path: [snake], message: `give either ${camel} or ${snake}, not both` });
    }
    if (c.message_group_field !== undefined && c.type !== 'fifo') {
      ctx.addIssue({ code: 'custom', path: ['message_group_field'], message: 'only applies to type: fifo' });
    }
  });

export const subscriberConfigSchema = z.strictObject({
  topic: z.string().min(1, { error: 'topic must be a non-empty string' }),
  condition_function_id: z.string().min(1).optional(),
  queue_config: queueConfigSchema.optional(),
});

export type SubscriberConfig = z.output<typeof subscriberConfigSchema>;

/** How one subscriber's messages are delivered. */
export interface DeliverySettings extends RetryPolicy {
  concurrency: number;
  visibilityTimeoutMs: number;
  fifo: boolean;
  groupField: string | undefined;
  /** Each message waits this long after its publish before this subscriber handles it. */
  delayMs: number;
}

/** A subscriber's settings: its `queue_config` over the module's defaults. */
export function subscriberSettings(config: SubscriberConfig, defaults: DeliveryDefaults): DeliverySettings {
  const q = config.queue_config ?? {};
  const fifo = q.type === 'fifo';
  return {
    maxRetries: q.maxRetries ?? q.max_retries ?? defaults.max_retries,
    backoffType: q.backoffType ?? q.backoff_type ?? defaults.backoff_type,
    backoffMs: q.backoffDelayMs ?? q.backoff_ms ?? defaults.backoff_ms,
    backoffMaxMs: q.backoff_max_ms ?? defaults.backoff_max_ms,
    concurrency: q.concurrency ?? defaults.concurrency,
    visibilityTimeoutMs: q.visibilityTimeout !== undefined ? q.visibilityTimeout * 1000 : (q.visibility_timeout_ms ?? defaults.visibility_timeout_ms),
    fifo,
    groupField: fifo ? q.message_group_field : undefined,
    delayMs: q.delaySeconds !== undefined ? q.delaySeconds * 1000 : (q.delay_ms ?? 0),
  };
}
