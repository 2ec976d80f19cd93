import type { LogLevelName } from '../../core/module-api.js';

/**
 * One stored log record, in the OpenTelemetry log data model's terms: what `engine::logs::list`
 * returns and what the `log` trigger sees. Timestamps are nanoseconds since the epoch (a JavaScript
 * number: precise to a fraction of a microsecond at today's dates, which is all a log needs).
 */
export interface StoredLogRecord {
  /** When the event happened (0 when the source did not say; `observed_timestamp_unix_nano` then stands in). */
  timestamp_unix_nano: number;
  /** When the record reached the engine. */
  observed_timestamp_unix_nano: number;
  /** OTLP severity number: 1–4 trace, 5–8 debug, 9–12 info, 13–16 warn, 17–20 error, 21–24 fatal (0: unspecified). */
  severity_number: number;
  /** The severity as the source wrote it (`INFO`, `WARN`, or a source's own word such as `WARNING`). */
  severity_text: string;
  body: string;
  attributes: Record<string, unknown>;
  /** Lower-case hex, or null (never the all-zero id: see normaliseId). */
  trace_id: string | null;
  span_id: string | null;
  resource: Record<string, unknown>;
  service_name: string;
  instrumentation_scope_name?: string;
  instrumentation_scope_version?: string;
}

/** Every level name, lowest first. */
export const LOG_LEVEL_NAMES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const satisfies readonly LogLevelName[];

/** The severity number each level is written with (the lowest of its OTLP range). */
export const SEVERITY_NUMBER: Readonly<Record<LogLevelName, number>> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 };

/** The severity text each level is written with. */
export const SEVERITY_TEXT: Readonly<Record<LogLevelName, string>> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  fatal: 'FATAL',
};

/** Whether `value` is a level name (lower case, as configs and the log tap write them). */
export function isLevelName(value: unknown): value is LogLevelName {
  return typeof value === 'string' && (LOG_LEVEL_NAMES as readonly string[]).includes(value);
}

/** The level of an OTLP severity number (1–24), or null outside that range (0 is "unspecified"). */
export function levelOfSeverityNumber(severityNumber: number): LogLevelName | null {
  if (!Number.isInteger(severityNumber) || severityNumber < 1 || severityNumber > 24) return null;
  return LOG_LEVEL_NAMES[Math.floor((severityNumber - 1) / 4)] ?? null;
}

/**
 * The level of a record: from its severity number when that is in 1–24, else from its severity text
 * when the text (in any case) is a level name, else null. So a source writing `WARNING` with number 13
 * is a `warn` record.
 */
export function levelOfRecord(record: Pick<StoredLogRecord, 'severity_number' | 'severity_text'>): LogLevelName | null {
  const fromNumber = levelOfSeverityNumber(record.severity_number);
  if (fromNumber !== null) return fromNumber;
  const text = record.severity_text.toLowerCase();
  return isLevelName(text) ? text : null;
}

/** Where `level` stands among the levels: 0 for trace up to 5 for fatal. */
export function levelRank(level: LogLevelName): number {
  return LOG_LEVEL_NAMES.indexOf(level);
}

const ALL_ZEROS = /^0+$/;

/**
 * A trace or span id as records store it: lower-case hex; null for a missing or empty id and for the
 * all-zero id (which OTLP sources send to say "no trace").
 */
export function normaliseId(id: unknown): string | null {
  if (typeof id !== 'string') return null;
  const trimmed = id.trim().toLowerCase();
  if (trimmed === '' || ALL_ZEROS.test(trimmed)) return null;
  return trimmed;
}

/**
 * Whole milliseconds since the epoch of a nanosecond timestamp (rounded down). Plain `Math.floor(ns / 1e6)`
 * can land one below an exact millisecond because `ms * 1e6` is not always representable; this cannot.
 */
export function nanosToMillis(nanos: number): number {
  let ms = Math.floor(nanos / 1e6);
  if (ms * 1e6 > nanos) ms -= 1;
  else if ((ms + 1) * 1e6 <= nanos) ms += 1;
  return ms;
}

/** The instant of a record in milliseconds: its timestamp, or when that is unset (0), its observed timestamp. */
export function recordTimeMillis(record: Pick<StoredLogRecord, 'timestamp_unix_nano' | 'observed_timestamp_unix_nano'>): number {
  const nanos = record.timestamp_unix_nano > 0 ? record.timestamp_unix_nano : record.observed_timestamp_unix_nano;
  return nanosToMillis(nanos);
}
