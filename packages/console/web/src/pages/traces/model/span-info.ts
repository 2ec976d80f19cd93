/** What the span detail panel shows of a span: its errors and its baggage (pure: no DOM). */
import type { TraceLogRecord, TraceSpan } from '../../../../../src/api-types.js';

export interface SpanError {
  /** `exception.type` (Flint writes the error code there). */
  type: string | undefined;
  message: string | undefined;
  stacktrace: string | undefined;
  /** ns since the epoch; undefined for the status description. */
  timestamp: number | undefined;
  /** `event` for an exception event, `status` for the span's error status description. */
  source: 'event' | 'status';
}

const text = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The span's errors: each `exception` event (OpenTelemetry's `exception.type`, `exception.message`,
 * `exception.stacktrace`), and the error status description when no event already says the same.
 */
export function spanErrors(span: TraceSpan): SpanError[] {
  const errors: SpanError[] = span.events
    .filter((e) => e.name === 'exception')
    .map((e) => ({
      type: text(e.attributes['exception.type']),
      message: text(e.attributes['exception.message']),
      stacktrace: text(e.attributes['exception.stacktrace']),
      timestamp: e.timestamp_unix_nano,
      source: 'event' as const,
    }));
  const description = span.status === 'error' ? span.status_description : undefined;
  if (description) {
    const said = errors.some((e) => e.message !== undefined && description.includes(e.message));
    if (!said) {
      const errorType = span.attributes.find(([k]) => k === 'error.type')?.[1];
      errors.push({ type: errorType, message: description, stacktrace: undefined, timestamp: undefined, source: 'status' });
    }
  }
  return errors;
}

/**
 * The baggage a span carries, as `[key, value]` pairs. Flint passes W3C baggage along with every call but
 * does not write it on its own spans; a span shows baggage when its producer copied it into attributes:
 * `baggage.<key>` attributes (the convention of OpenTelemetry's baggage span processors with a prefix)
 * or a `baggage` attribute holding the W3C header (`k=v;prop,k2=v2`, values percent-encoded).
 */
export function spanBaggage(span: TraceSpan): [string, string][] {
  const out: [string, string][] = [];
  for (const [key, value] of span.attributes) {
    if (key.startsWith('baggage.') && key.length > 'baggage.'.length) out.push([key.slice('baggage.'.length), value]);
    else if (key === 'baggage' || key === 'w3c.baggage') out.push(...parseBaggage(value));
  }
  return out;
}

/** Parses a W3C baggage header: members separated by commas, `key=value` before any `;properties`, both percent-decoded. */
export function parseBaggage(header: string): [string, string][] {
  const out: [string, string][] = [];
  for (const member of header.split(',')) {
    const pair = member.split(';')[0]?.trim() ?? '';
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    out.push([decode(pair.slice(0, eq).trim()), decode(pair.slice(eq + 1).trim())]);
  }
  return out;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The records of one span, oldest first. */
export function spanLogs(logs: readonly TraceLogRecord[], spanId: string): TraceLogRecord[] {
  return logs.filter((l) => l.span_id === spanId).sort((a, b) => instant(a) - instant(b));
}

const instant = (l: TraceLogRecord) => (l.timestamp_unix_nano > 0 ? l.timestamp_unix_nano : (l.observed_timestamp_unix_nano ?? 0));

/** `badge` class of a log record's severity: error and fatal, warn, info, the rest none. */
export function severityClass(severityNumber: number): 'error' | 'warn' | 'info' | '' {
  if (severityNumber >= 17) return 'error';
  if (severityNumber >= 13) return 'warn';
  if (severityNumber >= 9) return 'info';
  return '';
}
