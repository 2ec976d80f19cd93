import { z } from 'zod';
import { HTTP_METHODS } from './config.js';

/**
 * The config of an `http` trigger. Strict: the engine refuses an unknown key or a wrong type before
 * the route table sees the trigger. `description` and `metadata` are accepted because iii-based
 * route helpers send them; they are kept in the trigger listing and not used otherwise.
 */
export const httpTriggerConfigSchema = z.strictObject({
  api_path: z.string().refine((path) => path.trim() !== '', 'must not be empty (e.g. "/users/:id")'),
  http_method: z
    .string()
    .transform((method) => method.toUpperCase())
    .pipe(z.enum(HTTP_METHODS, { error: (issue) => `must be one of ${HTTP_METHODS.join(', ')} (got ${JSON.stringify(issue.input)})` })),
  condition_function_id: z.string().min(1).optional(),
  middleware_function_ids: z.array(z.string().min(1)).optional(),
  description: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export type HttpTriggerConfig = z.output<typeof httpTriggerConfigSchema>;

/** The same, as JSON Schema for `engine::trigger-types::list`. */
export const httpTriggerRequestFormat = {
  type: 'object',
  required: ['api_path', 'http_method'],
  additionalProperties: false,
  properties: {
    api_path: { type: 'string' },
    http_method: { type: 'string', enum: [...HTTP_METHODS] },
    condition_function_id: { type: 'string' },
    middleware_function_ids: { type: 'array', items: { type: 'string' } },
    description: { type: 'string' },
    metadata: { type: 'object' },
  },
};
