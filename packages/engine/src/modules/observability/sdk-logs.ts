import type { StoredLogRecord } from './log-record.js';
import { anyValue, arrayOf, attributesOf, idOf, isObject, nanosOf, text } from './otlp-json.js';

export interface SdkLogBatch {
  records: StoredLogRecord[];
  rejected: number;
}

/**
 * The records of an OTLP/JSON `ExportLogsServiceRequest` (what SDKs send in `LOGS` frames) as stored
 * records: the body as text (a structured body as JSON), the resource's `service.name` as the service.
 */
export function readSdkLogs(request: unknown, now = Date.now()): SdkLogBatch {
  const records: StoredLogRecord[] = [];
  let rejected = 0;
  for (const rl of arrayOf(isObject(request) ? request.resourceLogs : undefined)) {
    if (!isObject(rl)) continue;
    const resource = attributesOf(isObject(rl.resource) ? rl.resource.attributes : undefined);
    const service = typeof resource['service.name'] === 'string' ? resource['service.name'] : 'unknown';
    for (const sl of arrayOf(rl.scopeLogs)) {
      if (!isObject(sl)) continue;
      const scope = isObject(sl.scope) ? sl.scope : {};
      for (const r of arrayOf(sl.logRecords)) {
        if (!isObject(r)) {
          rejected++;
          continue;
        }
        const body = anyValue(r.body);
        const record: StoredLogRecord = {
          timestamp_unix_nano: nanosOf(r.timeUnixNano),
          observed_timestamp_unix_nano: nanosOf(r.observedTimeUnixNano) || now * 1e6,
          severity_number: typeof r.severityNumber === 'number' ? r.severityNumber : 0,
          severity_text: text(r.severityText) ?? '',
          body: typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body),
          attributes: attributesOf(r.attributes),
          trace_id: idOf(r.traceId, 32) ?? null,
          span_id: idOf(r.spanId, 16) ?? null,
          resource,
          service_name: service,
        };
        const scopeName = text(scope.name);
        if (scopeName !== undefined) record.instrumentation_scope_name = scopeName;
        const scopeVersion = text(scope.version);
        if (scopeVersion !== undefined) record.instrumentation_scope_version = scopeVersion;
        records.push(record);
      }
    }
  }
  return { records, rejected };
}
