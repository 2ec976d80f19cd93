/** API types of the logs-streams pages (see api-types.ts for the conventions shared by every route). */
import type { LogRecordInfo } from '@flint/protocol';

/** A log level name, lowest first: `severity_min` takes one of these (or an OTLP severity number 1–24). */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** One stored log record, as `engine::logs::list` returns it (OpenTelemetry's log data model). */
export type LogRecord = LogRecordInfo;

/**
 * POST /_console/logs: every filter optional, combined with AND (passed to `engine::logs::list`).
 * Times are epoch milliseconds, both ends included.
 */
export interface LogsRequest {
  start_time?: number;
  end_time?: number;
  /** Exact (compared in lower case). */
  trace_id?: string;
  span_id?: string;
  /** This level and above: a level name or a severity number (1–24). */
  severity_min?: LogLevel | number;
  /** Exact, any case (`WARN`). */
  severity_text?: string;
  /** A case-insensitive substring of the body or of any attribute key or value. */
  text?: string;
  /** A case-insensitive substring of the service name. */
  service_name?: string;
  offset?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

/** Why logs cannot be read: flint-observability is not loaded, `logs_enabled: false`, or `logs_exporter: otlp` (records are exported, not kept). */
export type LogsUnavailableReason = 'module_not_loaded' | 'logs_disabled' | 'logs_not_stored';

/** The answer of POST /_console/logs: newest first; `total` counts the matches before paging. */
export interface LogsResponse {
  available: boolean;
  reason?: LogsUnavailableReason;
  /** A sentence saying why, when not available. */
  detail?: string;
  logs: LogRecord[];
  total: number;
}

/** Message counters of one stream (or of all), as `engine::streams::stats` reports them. */
export interface StreamCounters {
  /** Frames received from clients (joins and leaves). */
  messages_in: number;
  /** Frames sent to clients (syncs, changes, custom events). */
  messages_out: number;
  bytes_in: number;
  bytes_out: number;
  /** Changes and custom events published. */
  events: number;
}

/** `engine::streams::stats`: the engine's stream listener since it started. */
export interface StreamStats {
  timestamp: number;
  totals: StreamCounters & {
    /** Open client connections. */
    connections: number;
    subscriptions: number;
    /** Bytes queued for clients and not yet written to their sockets. */
    buffered_bytes: number;
    slow_disconnects: number;
  };
  /** Sorted by name; the streams past the first 1,000 share the line `(other)`. */
  streams: (StreamCounters & { name: string; subscriptions: number })[];
}

/**
 * `system`: the engine's own streams, by name: those starting with `flint:` (the names the engine
 * reserves, e.g. `flint:streams:stats`), `flint.`, `flint-`, `flint_`, `engine:`, `engine.`, `engine-`,
 * `engine_` or `__`; every other stream is `user`.
 */
export type StreamKind = 'user' | 'system';

export interface StreamEntry {
  name: string;
  /** Groups holding at least one item (sorted); empty for a stream seen only in the live counters. */
  groups: string[];
  type: StreamKind;
  /** This stream's line of `engine::streams::stats`, when it has one. */
  stats?: StreamCounters & { subscriptions: number };
}

/**
 * GET /_console/streams: the streams of `stream::list_all` merged with those the live counters know
 * (a stream that only carries custom events has no stored groups), sorted by name.
 * `available` is false when flint-stream is not loaded.
 */
export interface StreamsResponse {
  available: boolean;
  streams: StreamEntry[];
  /** Null when flint-stream is not loaded. */
  stats: StreamStats | null;
}
