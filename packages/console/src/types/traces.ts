/** API types of the traces pages (see api-types.ts for the conventions shared by every route). */
import type { SpanEvent, SpanInfo, SpanLink, SpanStatus } from '@flint/protocol';

/** A span as `engine::traces::*` return it (times in nanoseconds since the epoch; `unset` status shows as "pending"). */
export type TraceSpan = SpanInfo;
export type TraceSpanStatus = SpanStatus;
/** `exception` events carry `exception.type`, `.message`, `.stacktrace`. */
export type TraceSpanEvent = SpanEvent;
export type TraceSpanLink = SpanLink;

/**
 * POST /_console/traces: every filter optional, combined with AND, passed to `engine::traces::list`.
 * Text filters are case-insensitive substrings; `service_name` and `status` test the root span, `name`
 * and `attributes` the root span too unless `search_all_spans` (then any one span must match: its name,
 * and all the pairs on that one span). Times are epoch milliseconds (the root span overlaps the window).
 */
export interface TraceListRequest {
  trace_id?: string;
  service_name?: string;
  name?: string;
  status?: TraceSpanStatus;
  min_duration_ms?: number;
  max_duration_ms?: number;
  start_time?: number;
  end_time?: number;
  /** `[key, value]` pairs, each exactly (values as text). */
  attributes?: [string, string][];
  search_all_spans?: boolean;
  /** Include traces whose root is the engine's own work (default false). */
  include_internal?: boolean;
  /** Default `start_time`. */
  sort_by?: 'start_time' | 'duration' | 'name';
  /** Default `desc` (newest first). */
  sort_order?: 'asc' | 'desc';
  offset?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

/** One row of the trace list: a root span and what the console learnt of its trace. */
export interface TraceSummary {
  trace_id: string;
  /** The root span of this row (a trace whose first span is not held can give several rows). */
  span_id: string;
  /** The root span's name (`GET /users`, `call orders::create`). */
  root_name: string;
  /** The root span's service. */
  service_name: string;
  /** Every service with a span in the trace, the root's first (just the root's when `span_count` is null). */
  services: string[];
  duration_ms: number;
  status: TraceSpanStatus;
  /** Spans held for the whole trace; null when the console could not read the trace. */
  span_count: number | null;
  /** Spans of the trace with status error (null with span_count). */
  error_count: number | null;
  start_time_ms: number;
}

/**
 * Why traces cannot be read: flint-observability is not loaded (`module_not_loaded`), or it keeps no
 * spans in memory (`memory_exporter_not_enabled`: `exporter: otlp`, or `enabled: false`).
 */
export type TracesUnavailableReason = 'module_not_loaded' | 'memory_exporter_not_enabled';

/** The answer of POST /_console/traces; `total` counts the rows matching before paging. */
export interface TraceListResponse {
  available: boolean;
  reason?: TracesUnavailableReason;
  /** A sentence saying why, when not available. */
  detail?: string;
  traces: TraceSummary[];
  total: number;
  offset: number;
  limit: number;
}

/** A log record of a trace, as `engine::logs::list` returns it. */
export interface TraceLogRecord {
  timestamp_unix_nano: number;
  observed_timestamp_unix_nano?: number;
  severity_number: number;
  severity_text: string;
  body: string;
  attributes: Record<string, unknown>;
  trace_id: string | null;
  span_id: string | null;
  service_name: string;
  resource?: Record<string, unknown>;
}

/**
 * GET /_console/traces/:trace_id: every span held of the trace (flat, parents before their children,
 * siblings by start time; build the tree from `parent_span_id`, a span whose parent is absent being a
 * root), and its log records (newest first, at most 1000) when flint-observability keeps logs.
 * An unknown trace answers 404 `trace_not_found`.
 */
export interface TraceDetailResponse {
  available: boolean;
  reason?: TracesUnavailableReason;
  detail?: string;
  trace_id: string;
  spans: TraceSpan[];
  logs: TraceLogRecord[];
  /** Records of the trace in all (more than `logs.length` when capped). */
  logs_total: number;
  /** False when the engine keeps no log records (logs then empty). */
  logs_available: boolean;
}
