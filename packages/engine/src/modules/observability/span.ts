/**
 * A finished span as the observability module stores it and as `engine::traces::*` return it. Times are
 * nanoseconds since the Unix epoch held in a JS number (exact to about 0.25 µs at today's dates).
 */
export interface Span {
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
