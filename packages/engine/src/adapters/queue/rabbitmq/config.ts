import { z } from 'zod';

/** The config of the `rabbitmq` queue adapter. */
export const rabbitmqQueueConfigSchema = z
  .strictObject({
    /** `amqp[s]://user:password@host:port[/vhost]`; shown only with the password redacted. */
    amqp_url: z.string().min(1).default('amqp://guest:guest@127.0.0.1:5672'),
    /** Every exchange and queue the adapter declares is named `<prefix>.…`: engines sharing a prefix share queues. */
    prefix: z.string().min(1).max(100).default('flint'),
    /** How long opening waits for the broker before failing with queue_unavailable. */
    connect_timeout_ms: z.number().int().positive().default(5000),
    /** A publish the broker has not confirmed within this time fails with queue_unavailable (never hangs). */
    publish_timeout_ms: z.number().int().positive().default(5000),
    /** Reconnect back-off after a lost connection: doubles from 100 ms up to this cap. */
    reconnect_max_ms: z.number().int().positive().default(5000),
    /** FIFO consumers prefetch this many (at least `concurrency`): later messages of a busy group wait in the adapter, unacked. */
    fifo_prefetch: z.number().int().positive().max(65535).default(1000),
    /** A FIFO consumer that finds another consumer active on its queue tries again after this long. */
    fifo_standby_retry_ms: z.number().int().positive().default(1000),
  })
  .prefault({});

export type RabbitmqQueueConfig = z.output<typeof rabbitmqQueueConfigSchema>;
