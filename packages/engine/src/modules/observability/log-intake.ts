import type { LogRecord } from '../../core/module-api.js';
import { idsOfTraceparent } from '../../lib/trace-context.js';
import { SEVERITY_NUMBER, SEVERITY_TEXT, type StoredLogRecord, normaliseId } from './log-record.js';
import { TRIGGER_TYPE_ATTRIBUTE } from './log-trigger-match.js';

/** The engine's scope name on the records it writes itself. */
const ENGINE_SCOPE = 'flint-engine';

/** Whether W3C baggage carries the mark of a `log` trigger's invocation (see LogTriggers). */
export function baggageMarksLogTrigger(baggage: string | undefined): boolean {
  return (baggage ?? '').split(',').some((entry) => entry.split(';')[0]?.trim() === `${TRIGGER_TYPE_ATTRIBUTE}=log`);
}

const nanos = (ms: number) => Math.round(ms * 1e6);

/** A record at `timeMs` of `level` (both timestamps the same: the line was observed as it was written). */
function recordAt(
  timeMs: number,
  level: keyof typeof SEVERITY_NUMBER,
  body: string,
): Pick<StoredLogRecord, 'timestamp_unix_nano' | 'observed_timestamp_unix_nano' | 'severity_number' | 'severity_text' | 'body'> {
  const at = nanos(timeMs);
  return { timestamp_unix_nano: at, observed_timestamp_unix_nano: at, severity_number: SEVERITY_NUMBER[level], severity_text: SEVERITY_TEXT[level], body };
}

/** One of the engine's own log lines (from the log tap) as a stored record; `fields` become attributes. */
export function engineRecord(record: LogRecord, serviceName: string, resource: Record<string, unknown>): StoredLogRecord {
  const { trace_id, span_id, ...rest } = record.fields;
  const attributes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) attributes[key] = value instanceof Error ? { name: value.name, message: value.message } : value;
  // A failure of a log trigger's own firing is logged with trigger_type: it must not fire log triggers again.
  if (rest.trigger_type === 'log') attributes[TRIGGER_TYPE_ATTRIBUTE] = 'log';
  return {
    ...recordAt(record.time, record.level, record.msg),
    attributes,
    trace_id: normaliseId(trace_id),
    span_id: normaliseId(span_id),
    resource,
    service_name: serviceName,
    instrumentation_scope_name: ENGINE_SCOPE,
  };
}

/** What a worker sends with `engine::log::<level>`. */
export interface WorkerLogCall {
  level: keyof typeof SEVERITY_NUMBER;
  message: string;
  data: unknown;
  trace_id: unknown;
  span_id: unknown;
  service_name: unknown;
  worker_id: string | undefined;
  traceparent: string | undefined;
  baggage: string | undefined;
}

/** A worker's `engine::log::<level>` call as a stored record: `data`'s keys become attributes; ids from the call or its trace context. */
export function workerRecord(call: WorkerLogCall, resource: Record<string, unknown>, now = Date.now()): StoredLogRecord {
  const attributes: Record<string, unknown> =
    call.data !== null && typeof call.data === 'object' && !Array.isArray(call.data)
      ? { ...(call.data as Record<string, unknown>) }
      : call.data === undefined
        ? {}
        : { data: call.data };
  if (call.worker_id) attributes['flint.worker.id'] = call.worker_id;
  if (baggageMarksLogTrigger(call.baggage)) attributes[TRIGGER_TYPE_ATTRIBUTE] = 'log';
  const fromContext = idsOfTraceparent(call.traceparent);
  return {
    ...recordAt(now, call.level, call.message),
    attributes,
    trace_id: normaliseId(call.trace_id) ?? fromContext.trace_id,
    span_id: normaliseId(call.span_id) ?? fromContext.span_id,
    resource,
    service_name: typeof call.service_name === 'string' && call.service_name !== '' ? call.service_name : 'unknown',
  };
}
