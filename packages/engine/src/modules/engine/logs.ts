import { FlintError, LOG_LEVELS } from '@flint/protocol';
import type { ModuleContext } from '../../core/module-api.js';
import { payloadObject } from '../../lib/payload.js';

/**
 * `engine::log::<level>`: a worker's log line, written to the engine log with `source: worker`.
 * Registered as replaceable defaults, so that a module that keeps logs (observability) can own them.
 */
const LEVEL_NOUNS: Record<(typeof LOG_LEVELS)[number], string> = {
  info: 'an info line',
  warn: 'a warning',
  error: 'an error line',
  debug: 'a debug line',
  trace: 'a trace line',
};

export function registerLogFunctions(ctx: ModuleContext): void {
  for (const level of LOG_LEVELS) {
    ctx.registerFunction(
      {
        id: `engine::log::${level}`,
        description: `Write ${LEVEL_NOUNS[level]} to the engine log`,
        request_format: {
          type: 'object',
          properties: { message: { type: 'string' }, data: {}, trace_id: { type: 'string' }, span_id: { type: 'string' }, service_name: { type: 'string' } },
          required: ['message'],
        },
      },
      (data, call) => {
        const d = payloadObject(data, { optional: true });
        if (typeof d.message !== 'string') throw new FlintError('invalid_payload', 'message must be a string');
        const fields = {
          source: 'worker',
          worker_id: call.callerWorkerId,
          trace_id: d.trace_id,
          span_id: d.span_id,
          service_name: d.service_name,
          data: d.data,
        };
        ctx.logger[level](fields, d.message);
        return undefined;
      },
      { replaceable: true },
    );
  }
}
