import { z } from 'zod';
import { host, port, positiveInt } from '../../lib/config-fields.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

const httpConfigFields = z.strictObject({
  host: host(),
  port: port(3111),
  /** Time the handler has to answer (or start streaming) before a 504. */
  default_timeout_ms: positiveInt(30_000),
  /** Time each middleware and condition function has before a 504. */
  middleware_timeout_ms: positiveInt(5_000),
  /** Larger bodies get 413. Half of the bridge's default frame cap, so a handler can send back the JSON body it got. */
  max_body_bytes: positiveInt(4 * 1024 * 1024),
  /** Connections served at once; one more is answered 503 too_many_connections. Independent of the bridge's cap. */
  max_connections: positiveInt(4096),
  /** Time a connection has to send a request's headers (408 and closed after). */
  headers_timeout_ms: positiveInt(10_000),
  /** Time a client has to send a whole request, body included (408 and closed after). */
  request_timeout_ms: positiveInt(60_000),
  /** An idle keep-alive connection is closed after this long. */
  keep_alive_timeout_ms: positiveInt(5_000),
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

export const httpConfigSchema = httpConfigFields.refine((c) => c.request_timeout_ms >= c.headers_timeout_ms, {
  path: ['request_timeout_ms'],
  message: 'must not be shorter than headers_timeout_ms (the headers are part of the request)',
});

export type HttpConfig = z.output<typeof httpConfigSchema>;
export type CorsConfig = NonNullable<HttpConfig['cors']>;
