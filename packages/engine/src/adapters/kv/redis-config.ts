import { z } from 'zod';

/** The config of the `redis` kv adapter. */
export const redisKvConfigSchema = z
  .strictObject({
    redis_url: z.string().min(1).default('redis://127.0.0.1:6379'),
    key_prefix: z.string().default('flint:state:'),
    /** A command that gets no answer within this time fails with store_unavailable. */
    command_timeout_ms: z.number().int().positive().default(2000),
  })
  .prefault({});

export type RedisKvConfig = z.output<typeof redisKvConfigSchema>;
