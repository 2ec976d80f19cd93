import type { LogRecord, LogsRequest } from '../../../../src/api-types.js';
import { LOG_LEVELS, type LogLevelName, type LogRange, type LogsSearch } from './search.js';

/** One line of the tail: a record with an id of the page's own (records have none) and its instant in milliseconds. */
export interface LogLine {
  id: number;
  ms: number;
  record: LogRecord;
}

/** The most lines the page holds (the engine keeps 10,000 by default); the oldest go first. */
export const MAX_LINES = 10_000;
/** Records asked for per call (the engine's maximum). */
export const PAGE_SIZE = 1000;
/** Each poll asks again for this much before the newest line held, so records that arrive a little late are not missed. */
export const LOOKBACK_MS = 5000;

export const RANGE_LABELS: Record<LogRange, string> = {
  '15m': 'Last 15 minutes',
  '1h': 'Last hour',
  '6h': 'Last 6 hours',
  '24h': 'Last 24 hours',
  all: 'Any time',
  custom: 'Custom…',
};
const RANGE_MS: Partial<Record<LogRange, number>> = { '15m': 15 * 60_000, '1h': 3_600_000, '6h': 6 * 3_600_000, '24h': 24 * 3_600_000 };

/** The range a search shows: as given, else one trace's lines at any time, else the last hour. */
export const rangeOf = (s: LogsSearch): LogRange => s.range ?? (s.trace_id ? 'all' : '1h');

/** The filters of a search, in the API's terms, without the time window (which moves). */
export interface LogFilters {
  severity?: LogLevelName;
  range: LogRange;
  from?: string;
  to?: string;
  text?: string;
  trace_id?: string;
  span_id?: string;
}

export function filtersOf(s: LogsSearch): LogFilters {
  return { severity: s.severity, range: rangeOf(s), from: s.from, to: s.to, text: s.q, trace_id: s.trace_id, span_id: s.span_id };
}

/** The time window of `filters` at `now` (epoch ms, both ends included; absent: open). */
export function windowOf(filters: LogFilters, now: number): { start?: number; end?: number } {
  if (filters.range === 'custom') {
    const start = filters.from ? Date.parse(filters.from) : Number.NaN;
    const end = filters.to ? Date.parse(filters.to) : Number.NaN;
    return { start: Number.isFinite(start) ? start : undefined, end: Number.isFinite(end) ? end : undefined };
  }
  const span = RANGE_MS[filters.range];
  return span === undefined ? {} : { start: now - span };
}

/** The request body for `filters` over [start, end]. */
export function requestOf(filters: LogFilters, start: number | undefined, end: number | undefined, limit = PAGE_SIZE): LogsRequest {
  const body: LogsRequest = { limit };
  if (filters.severity) body.severity_min = filters.severity;
  if (filters.text) body.text = filters.text;
  if (filters.trace_id) body.trace_id = filters.trace_id;
  if (filters.span_id) body.span_id = filters.span_id;
  if (start !== undefined) body.start_time = Math.max(0, Math.floor(start));
  if (end !== undefined) body.end_time = Math.floor(end);
  return body;
}

/** The instant of a record in milliseconds (its timestamp, or when it has none its observed timestamp), as the engine filters. */
export function recordMs(r: LogRecord): number {
  const nanos = r.timestamp_unix_nano > 0 ? r.timestamp_unix_nano : r.observed_timestamp_unix_nano;
  // As the engine rounds (plain Math.floor(ns / 1e6) can land one below an exact millisecond): the
  // page asks for time windows in these milliseconds, so they must be the engine's.
  let ms = Math.floor(nanos / 1e6);
  if (ms * 1e6 > nanos) ms -= 1;
  else if ((ms + 1) * 1e6 <= nanos) ms += 1;
  return ms;
}
const recordNanos = (r: LogRecord) => (r.timestamp_unix_nano > 0 ? r.timestamp_unix_nano : r.observed_timestamp_unix_nano);

/** What tells two records apart (records have no id); identical records are counted, not merged. */
const recordKey = (r: LogRecord) =>
  `${r.timestamp_unix_nano}|${r.observed_timestamp_unix_nano}|${r.severity_number}|${r.trace_id}|${r.span_id}|${r.service_name}|${r.body}`;

/** The level of a record: from its severity number (1–24), else from its text when that is a level name. */
export function levelOf(r: Pick<LogRecord, 'severity_number' | 'severity_text'>): LogLevelName | undefined {
  if (Number.isInteger(r.severity_number) && r.severity_number >= 1 && r.severity_number <= 24) return LOG_LEVELS[Math.floor((r.severity_number - 1) / 4)];
  const text = r.severity_text.toLowerCase();
  return LOG_LEVELS.find((l) => l === text || (l === 'warn' && text === 'warning'));
}

/** The badge tone of a level. */
export function levelTone(level: LogLevelName | undefined): string {
  if (level === 'error' || level === 'fatal') return 'error';
  if (level === 'warn') return 'warn';
  if (level === 'info') return 'info';
  return '';
}

/** Counts of each record key among `lines` for which `inOverlap` holds. */
function keyCounts(lines: LogLine[], inOverlap: (l: LogLine) => boolean): Map<string, number> {
  const counts = new Map<string, number>();
  for (const l of lines) {
    if (!inOverlap(l)) continue;
    const k = recordKey(l.record);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/** The records of `fetched` not already among the held lines counted in `counts` (each held copy matches one fetched copy). */
function unseen(fetched: LogRecord[], counts: Map<string, number>): LogRecord[] {
  const out: LogRecord[] = [];
  for (const r of fetched) {
    const k = recordKey(r);
    const n = counts.get(k) ?? 0;
    if (n > 0) counts.set(k, n - 1);
    else out.push(r);
  }
  return out;
}

export interface Merged {
  lines: LogLine[];
  added: number;
  /** Fetched records that were held already (0: the fetched page does not reach the lines held). */
  matched: number;
  nextId: number;
}

/**
 * Merges `fetched` (newest first: every record at or after `since`) into `held` (newest first), keeping
 * the order newest first; a record held already is not added again. New records sort before held ones
 * at the same instant (they arrived later, as the engine orders them).
 */
export function mergeNewer(held: LogLine[], fetched: LogRecord[], since: number, nextId: number): Merged {
  const fresh = unseen(
    fetched,
    keyCounts(held, (l) => l.ms >= since),
  );
  const matched = fetched.length - fresh.length;
  if (fresh.length === 0) return { lines: held, added: 0, matched, nextId };
  const incoming: LogLine[] = fresh.map((record) => ({ id: nextId++, ms: recordMs(record), record }));
  const lines: LogLine[] = [];
  let i = 0;
  let j = 0;
  while (i < incoming.length || j < held.length) {
    const a = incoming[i];
    const b = held[j];
    if (a && (!b || recordNanos(a.record) >= recordNanos(b.record))) {
      lines.push(a);
      i++;
    } else if (b) {
      lines.push(b);
      j++;
    }
  }
  return { lines, added: incoming.length, matched, nextId };
}

/** Appends `fetched` (newest first: records at or before the oldest held instant) after `held`, skipping those held already. */
export function mergeOlder(held: LogLine[], fetched: LogRecord[], nextId: number): Merged {
  const oldest = held.at(-1)?.ms ?? Number.POSITIVE_INFINITY;
  const older = unseen(
    fetched,
    keyCounts(held, (l) => l.ms <= oldest),
  );
  const lines = held.concat(older.map((record) => ({ id: nextId++, ms: recordMs(record), record })));
  return { lines, added: older.length, matched: fetched.length - older.length, nextId };
}

/** A record's timestamp as `HH:MM:SS.mmm` (local time). */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A nanosecond timestamp in ISO 8601 with its microseconds (`2026-05-01T10:00:00.123456Z`), or "—" for 0. */
export function isoNanos(nanos: number): string {
  if (!nanos) return '—';
  const ms = Math.floor(nanos / 1e6);
  const micros = Math.floor((nanos - ms * 1e6) / 1e3);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, -1)}${String(Math.max(0, micros)).padStart(3, '0')}Z`;
}

/** ISO text ↔ the value of an `<input type="datetime-local">` (local time, minutes). */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
export function fromLocalInput(value: string): string | undefined {
  if (value === '') return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}
