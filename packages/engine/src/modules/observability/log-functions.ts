import { LOG_LEVELS } from '@flint/protocol';
import type { ModuleContext } from '../../core/module-api.js';
import { LOG_CALL_FORMAT, writeLogCall } from '../../lib/log-call.js';
import { workerRecord } from './log-intake.js';
import { listLogs } from './log-query.js';
import type { StoredLogRecord } from './log-record.js';
import type { LogStore } from './log-store.js';

/**
 * `engine::log::<level>` (taken over from the engine's defaults: the line still goes to the engine log,
 * and into the store with its data as attributes) and `engine::logs::list|clear`.
 */
export function registerLogFunctions(
  ctx: ModuleContext,
  store: LogStore | undefined,
  resource: Record<string, unknown>,
  keep: (r: StoredLogRecord) => void,
): void {
  for (const level of LOG_LEVELS) {
    ctx.registerFunction(
      {
        id: `engine::log::${level}`,
        description: `Write a ${level} line to the engine log and the log store`,
        request_format: LOG_CALL_FORMAT,
      },
      (data, call) => {
        const line = writeLogCall(ctx.logger, level, data, call);
        keep(workerRecord({ level, ...line, worker_id: call.callerWorkerId, traceparent: call.traceparent, baggage: call.baggage }, resource));
        return undefined;
      },
    );
  }
  ctx.registerFunction(
    {
      id: 'engine::logs::list',
      description:
        'Stored log records, newest first: filters start_time, end_time, trace_id, span_id, severity_min, severity_text, text, service_name; offset, limit',
      request_format: { type: 'object' },
    },
    (input) => (store ? listLogs(store, input ?? {}) : { logs: [], total: 0, query: {}, timestamp: Date.now() }),
  );
  ctx.registerFunction({ id: 'engine::logs::clear', description: 'Empty the log store', request_format: { type: 'object' } }, () => {
    store?.clear();
    return { success: true };
  });
}
