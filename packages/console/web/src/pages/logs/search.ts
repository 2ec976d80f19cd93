/** The Logs page's URL search params (every filter is a deep link: `/logs?trace_id=…` shows one trace's lines). */

/** Minimum levels, lowest first (OTLP severity numbers 1, 5, 9, 13, 17, 21). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** The time ranges offered: the last 15 minutes … 24 hours, any time, or a custom `from`–`to`. */
export const LOG_RANGES = ['15m', '1h', '6h', '24h', 'all', 'custom'] as const;
export type LogRange = (typeof LOG_RANGES)[number];

export interface LogsSearch {
  /** Minimum level (that level and above). */
  severity?: LogLevelName;
  /** Default: `1h`, or `all` when the view is one trace's lines. */
  range?: LogRange;
  /** The custom range's ends: ISO 8601 instants (`2026-05-01T10:00:00.000Z`); either may be absent. */
  from?: string;
  to?: string;
  /** Free text: a substring of the body or of an attribute's key or value. */
  q?: string;
  trace_id?: string;
  span_id?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' ? String(v) : undefined);
const oneOf = <T extends string>(values: readonly T[], v: unknown): T | undefined => {
  const s = str(v)?.toLowerCase();
  return values.find((x) => x === s);
};
/** An instant: ISO text or epoch milliseconds, kept as ISO text; anything else is dropped. */
const instant = (v: unknown): string | undefined => {
  const s = str(v);
  if (s === undefined) return undefined;
  const ms = /^\d+$/.test(s) ? Number(s) : Date.parse(s);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
};

/** Keeps the params the page knows, each checked (an unknown level or range is dropped). */
export function validateLogsSearch(s: Record<string, unknown>): LogsSearch {
  const out: LogsSearch = {};
  const severity = oneOf(LOG_LEVELS, s.severity);
  if (severity) out.severity = severity;
  const range = oneOf(LOG_RANGES, s.range);
  if (range) out.range = range;
  const from = instant(s.from);
  if (from) out.from = from;
  const to = instant(s.to);
  if (to) out.to = to;
  const q = typeof s.q === 'string' && s.q !== '' ? s.q : undefined;
  if (q) out.q = q;
  const trace = str(s.trace_id);
  if (trace) out.trace_id = trace.toLowerCase();
  const span = str(s.span_id);
  if (span) out.span_id = span.toLowerCase();
  return out;
}
