import type { LogRecordInfo } from '@flint/protocol';
import type { LogLevelName } from '../../core/module-api.js';

/** One stored log record (its shape is public: `engine::logs::list` answers with it). */
export type StoredLogRecord = LogRecordInfo;

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
