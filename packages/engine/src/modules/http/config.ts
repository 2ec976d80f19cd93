import { z } from 'zod';
import { host, port, positiveInt } from '../../lib/config-fields.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const httpConfigSchema = z.strictObject({
  host: host(),
  port: port(3111),
  /** Time the handler has to answer (or start streaming) before a 504. */
  default_timeout_ms: positiveInt(30_000),
  /** Time each middleware and condition function has before a 504. */
  middleware_timeout_ms: positiveInt(5_000),
  /** Larger bodies get 413. Half of the bridge's default frame cap, so a handler can send back the JSON body it got. */
  max_body_bytes: positiveInt(4 * 1024 * 1024),
  cors: z
    .strictObject({
      origins: z.array(z.string().min(1)).min(1).default(['*']),
      methods: z
        .array(z.enum(HTTP_METHODS))
        .min(1)
        .default([...HTTP_METHODS]),
      headers: z.array(z.string().min(1)).default(['*']),
      credentials: z.boolean().default(false),
      max_age_seconds: z.number().int().min(0).default(600),
    })
    .optional(),
  middleware: z
    .array(
      z.strictObject({
        function_id: z.string().min(1),
        phase: z.literal('preHandler').default('preHandler'),
        priority: z.number().int().default(0),
      }),
    )
    .default([]),
});

export type HttpConfig = z.output<typeof httpConfigSchema>;
export type CorsConfig = NonNullable<HttpConfig['cors']>;
