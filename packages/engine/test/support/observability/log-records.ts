/**
 * Stored log records for the observability tests: a record with every field set to something plain,
 * overridable field by field, and its instant given in milliseconds.
 */
import type { StoredLogRecord } from '../../../dist/modules/observability/log-record.js';

/** 2023-11-14T22:13:20.000Z: the instant the fixtures count from. */
export const BASE_MS = 1_700_000_000_000;

export interface RecordFields extends Partial<StoredLogRecord> {
  /** The record's instant in milliseconds (sets both timestamps); ignored when `timestamp_unix_nano` is given. */
  at_ms?: number;
}

export function logRecord(fields: RecordFields = {}): StoredLogRecord {
  const { at_ms = BASE_MS, ...rest } = fields;
  return {
    timestamp_unix_nano: at_ms * 1e6,
    observed_timestamp_unix_nano: at_ms * 1e6,
    severity_number: 9,
    severity_text: 'INFO',
    body: 'a log line',
    attributes: {},
    trace_id: null,
    span_id: null,
    resource: { 'service.name': 'svc' },
    service_name: 'svc',
    ...rest,
  };
}

export { prng } from '../util.js';
