import { FlintError } from '@flint/protocol';
import { payloadObject } from '../../lib/payload.js';
import { LOG_LEVEL_NAMES, SEVERITY_NUMBER, type StoredLogRecord, isLevelName } from './log-record.js';
import type { LogStore, StoredLog } from './log-store.js';

export const DEFAULT_LOG_LIMIT = 100;
export const MAX_LOG_LIMIT = 1000;

/** A log query, normalised: what `listLogs` filters with and echoes back. Every filter set must hold. */
export interface LogQuery {
  /** Milliseconds since the epoch, inclusive. */
  start_time?: number;
  end_time?: number;
  /** Lower case, as records store their ids. */
  trace_id?: string;
  span_id?: string;
  /** A severity number: records at or above it (a level name in the input is turned into its number, `warn` → 13). */
  severity_min?: number;
  /** Compared case-insensitively, whole text. */
  severity_text?: string;
  /** A case-insensitive substring of the body, or of an attribute's key or value. */
  text?: string;
  /** A case-insensitive substring of the service name. */
  service_name?: string;
  offset: number;
  limit: number;
}

export interface LogList {
  /** Newest first (by the record's instant, then by arrival). */
  logs: StoredLogRecord[];
  /** How many records matched, before `offset` and `limit`. */
  total: number;
  query: LogQuery;
  /** When the answer was made, in milliseconds since the epoch. */
  timestamp: number;
}

/**
 * Reads a log query from a call's input (null or undefined: no filter). Null fields count as absent,
 * as do empty strings for the text filters; unknown fields are ignored. A field of the wrong type is a
 * FlintError `invalid_payload` naming it.
 */
export function parseLogQuery(input: unknown): LogQuery {
  const d = payloadObject(input, { optional: true });
  const query: LogQuery = { offset: 0, limit: DEFAULT_LOG_LIMIT };
  const startTime = optionalNumber(d, 'start_time', 'a number (milliseconds since the epoch)');
  if (startTime !== undefined) query.start_time = startTime;
  const endTime = optionalNumber(d, 'end_time', 'a number (milliseconds since the epoch)');
  if (endTime !== undefined) query.end_time = endTime;
  const traceId = optionalString(d, 'trace_id');
  if (traceId !== undefined) query.trace_id = traceId.trim().toLowerCase();
  const spanId = optionalString(d, 'span_id');
  if (spanId !== undefined) query.span_id = spanId.trim().toLowerCase();
  const severityMin = severityMinOf(d.severity_min);
  if (severityMin !== undefined) query.severity_min = severityMin;
  const severityText = optionalString(d, 'severity_text');
  if (severityText !== undefined) query.severity_text = severityText;
  const text = optionalString(d, 'text');
  if (text !== undefined) query.text = text;
  const serviceName = optionalString(d, 'service_name');
  if (serviceName !== undefined) query.service_name = serviceName;
  const offset = optionalNumber(d, 'offset', 'a non-negative integer', true);
  if (offset !== undefined) query.offset = offset;
  const limit = optionalNumber(d, 'limit', 'a non-negative integer', true);
  if (limit !== undefined) query.limit = Math.min(limit, MAX_LOG_LIMIT);
  return query;
}

/**
 * `engine::logs::list`: the records of `store` matching every filter of `input`, newest first, the page
 * `offset`…`offset + limit` of them (limit 100 unless given, at most 1000), and how many matched in all.
 * With a trace id, only that trace's records are looked at (through the store's index).
 */
export function listLogs(store: LogStore, input: unknown): LogList {
  const query = parseLogQuery(input);
  const candidates = query.trace_id === undefined ? store.entries() : store.byTraceId(query.trace_id);
  const test = matcherOf(query);
  const matched = candidates.filter((entry) => test(entry));
  matched.sort(newestFirst);
  const logs = matched.slice(query.offset, query.offset + query.limit).map((entry) => entry.record);
  return { logs, total: matched.length, query, timestamp: Date.now() };
}

function newestFirst(a: StoredLog, b: StoredLog): number {
  return instantOf(b) - instantOf(a) || b.seq - a.seq;
}

function instantOf(entry: StoredLog): number {
  const record = entry.record;
  return record.timestamp_unix_nano > 0 ? record.timestamp_unix_nano : record.observed_timestamp_unix_nano;
}

/** One predicate holding every filter of `query` (the cheap ones first). */
function matcherOf(query: LogQuery): (entry: StoredLog) => boolean {
  const tests: ((entry: StoredLog) => boolean)[] = [];
  const { start_time, end_time, trace_id, span_id, severity_min } = query;
  if (start_time !== undefined) tests.push((e) => e.time_ms >= start_time);
  if (end_time !== undefined) tests.push((e) => e.time_ms <= end_time);
  if (trace_id !== undefined) tests.push((e) => e.record.trace_id === trace_id);
  if (span_id !== undefined) tests.push((e) => e.record.span_id === span_id);
  if (severity_min !== undefined) tests.push((e) => e.record.severity_number >= severity_min);
  if (query.severity_text !== undefined) {
    const wanted = query.severity_text.toLowerCase();
    tests.push((e) => e.record.severity_text.toLowerCase() === wanted);
  }
  if (query.service_name !== undefined) {
    const wanted = query.service_name.toLowerCase();
    tests.push((e) => e.record.service_name.toLowerCase().includes(wanted));
  }
  if (query.text !== undefined) {
    const wanted = query.text.toLowerCase();
    tests.push((e) => containsText(e.record, wanted));
  }
  return (entry) => tests.every((test) => test(entry));
}

/** Whether `needle` (lower case) is in the record's body, or in one of its attributes' keys or values. */
function containsText(record: StoredLogRecord, needle: string): boolean {
  if (record.body.toLowerCase().includes(needle)) return true;
  for (const [key, value] of Object.entries(record.attributes)) {
    if (key.toLowerCase().includes(needle)) return true;
    if (value !== undefined && stringify(value).toLowerCase().includes(needle)) return true;
  }
  return false;
}

/** A value as text: a string as it is, anything else as JSON (or String() where JSON cannot write it). */
function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function optionalString(d: Record<string, unknown>, field: string): string | undefined {
  const value = d[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new FlintError('invalid_payload', `${field} must be a string`);
  return value;
}

function optionalNumber(d: Record<string, unknown>, field: string, what: string, nonNegativeInteger = false): number | undefined {
  const value = d[field];
  if (value === undefined || value === null) return undefined;
  const ok = typeof value === 'number' && (nonNegativeInteger ? Number.isSafeInteger(value) && value >= 0 : Number.isFinite(value));
  if (!ok) throw new FlintError('invalid_payload', `${field} must be ${what}`);
  return value as number;
}

function severityMinOf(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const name = typeof value === 'string' ? value.toLowerCase() : undefined;
  if (isLevelName(name)) return SEVERITY_NUMBER[name];
  throw new FlintError('invalid_payload', `severity_min must be a severity number or a level name (${LOG_LEVEL_NAMES.join(', ')})`);
}
