/** The shapes flint-observability's query functions answer with (`engine::traces::*`, `engine::logs::list`). */

/**
 * A finished span as the observability module stores it and as `engine::traces::*` return it. Times are
 * nanoseconds since the Unix epoch held in a JS number (exact to about 0.25 µs at today's dates).
 */
export interface SpanInfo {
  trace_id: string;
  span_id: string;
  /** The span this one runs under, or null for the first span of a trace. */
  parent_span_id: string | null;
  name: string;
  start_time_unix_nano: number;
  end_time_unix_nano: number;
  status: SpanStatus;
  status_description?: string;
  /** Attributes as key/value pairs, values rendered as strings. */
  attributes: [string, string][];
  service_name: string;
  events: SpanEvent[];
  links: SpanLink[];
  instrumentation_scope_name?: string;
  instrumentation_scope_version?: string;
  /** W3C trace flags (bit 0: sampled). */
  flags?: number;
}

export type SpanStatus = 'ok' | 'error' | 'unset';

/** Something that happened at one instant during a span (an exception, a log line, …). */
export interface SpanEvent {
  name: string;
  timestamp_unix_nano: number;
  attributes: Record<string, unknown>;
}

/** A span of another (or the same) trace this span relates to. */
export interface SpanLink {
  trace_id: string;
  span_id: string;
  trace_state?: string;
  attributes: Record<string, unknown>;
}

/**
 * One stored log record, in the OpenTelemetry log data model's terms: what `engine::logs::list`
 * returns and what the `log` trigger sees. Timestamps are nanoseconds since the epoch (a JavaScript
 * number: precise to a fraction of a microsecond at today's dates, which is all a log needs).
 */
export interface LogRecordInfo {
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
