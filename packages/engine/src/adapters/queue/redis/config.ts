import { z } from 'zod';

/** The config of the `redis` queue adapter. */
export const redisQueueConfigSchema = z
  .strictObject({
    redis_url: z.string().min(1).default('redis://127.0.0.1:6379'),
    /** Every key (and wake channel) of this adapter starts with `${prefix}:`; engines sharing a prefix share the queues. */
    prefix: z.string().min(1).default('flint:queue'),
    /** A command that gets no answer within this time fails with queue_unavailable. */
    command_timeout_ms: z.number().int().positive().default(2000),
    /** How long opening waits for Redis before it fails with queue_unavailable. */
    connect_timeout_ms: z.number().int().positive().default(5000),
    /**
     * Consumers are woken by a notification on every publish and by a timer for the earliest due
     * delayed message or lease; this poll only covers notifications lost while a connection was down.
     */
    poll_interval_ms: z.number().int().positive().default(2000),
    /** A topic binding of an engine that stops renewing it (crashed) lapses after this time; renewed every third of it. */
    binding_ttl_ms: z.number().int().min(300).default(30_000),
  })
  .prefault({});

export type RedisQueueConfig = z.output<typeof redisQueueConfigSchema>;
