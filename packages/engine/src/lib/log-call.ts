import { FlintError } from '@flint/protocol';
import type { Logger } from '../core/logger.js';
import type { InvocationContext } from '../core/module-api.js';
import { payloadObject } from './payload.js';

/** The input of `engine::log::<level>`. */
export const LOG_CALL_FORMAT = {
  type: 'object',
  properties: { message: { type: 'string' }, data: {}, trace_id: { type: 'string' }, span_id: { type: 'string' }, service_name: { type: 'string' } },
  required: ['message'],
};

export interface LogCall {
  message: string;
  data: unknown;
  trace_id: unknown;
  span_id: unknown;
  service_name: unknown;
}

/** Checks an `engine::log::<level>` call and writes its line to the engine log (`source: worker`). */
export function writeLogCall(logger: Logger, level: 'info' | 'warn' | 'error' | 'debug' | 'trace', data: unknown, call: InvocationContext): LogCall {
  const d = payloadObject(data, { optional: true });
  if (typeof d.message !== 'string') throw new FlintError('invalid_payload', 'message must be a string');
  const line: LogCall = { message: d.message, data: d.data, trace_id: d.trace_id, span_id: d.span_id, service_name: d.service_name };
  logger[level](
    { source: 'worker', worker_id: call.callerWorkerId, trace_id: line.trace_id, span_id: line.span_id, service_name: line.service_name, data: line.data },
    line.message,
  );
  return line;
}
