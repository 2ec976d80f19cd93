import { z } from 'zod';
import { positiveInt } from '../../lib/config-fields.js';

export const httpFunctionsSecuritySchema = z
  .strictObject({
    /**
     * Globs on the whole (normalised) URL a function may name, `*` standing for any run of characters
     * (`https://hooks.example.com/*`). Empty: any URL.
     */
    url_allowlist: z.array(z.string().min(1)).default([]),
    /** Refuse a call whose host resolves (at call time) to a loopback, private, link-local or otherwise reserved address. */
    block_private_addresses: z.boolean().default(true),
    /** Refuse `http:` URLs at registration. */
    require_https: z.boolean().default(false),
    /** A response body larger than this fails the call with `response_too_large`. */
    max_response_bytes: positiveInt(1024 * 1024),
  })
  .prefault({});

export const httpFunctionsConfigSchema = z
  .strictObject({
    /** Time a call has when the function's `invocation` sets no `timeout_ms`. */
    default_timeout_ms: positiveInt(30_000),
    /** Upper bound of a function's `timeout_ms` (a larger one is capped to this). */
    max_timeout_ms: positiveInt(300_000),
    security: httpFunctionsSecuritySchema,
  })
  .refine((c) => c.default_timeout_ms <= c.max_timeout_ms, {
    path: ['default_timeout_ms'],
    message: 'must not be larger than max_timeout_ms',
  });

export type HttpFunctionsConfig = z.output<typeof httpFunctionsConfigSchema>;
export type HttpFunctionsSecurity = HttpFunctionsConfig['security'];
