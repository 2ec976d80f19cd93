/** API types of the Dashboard and Flow pages (see api-types.ts for the conventions shared by every route). */

import type { BridgeState } from './bridge.js';

/** Calls counted by flint-observability: every call since the engine started (`engine::*` functions left out). */
export interface InvocationCounts {
  total: number;
  success: number;
  error: number;
}

/**
 * One reading of `engine::metrics::list`, taken by the console's sampler every 2 s while the bridge is
 * connected. `total`, `success` and `error` are cumulative (since the engine started); the rates are
 * computed from this reading and the one before it, and are absent on the first reading after a gap
 * (the bridge was down) or an engine restart (the counts went down).
 */
export interface MetricsSample {
  /** The engine's clock, epoch milliseconds. */
  t: number;
  total: number;
  success: number;
  error: number;
  in_flight: number;
  /** Calls per second since the previous reading. */
  rate?: number;
  /** Failed calls per second since the previous reading. */
  error_rate?: number;
  /** The share of the calls since the previous reading that failed (0 to 1); absent when there were none. */
  error_ratio?: number;
  /** Call durations (ms) over the engine's most recent 10,000 calls; absent before the first call. */
  p50_ms?: number;
  p95_ms?: number;
  p99_ms?: number;
  avg_ms?: number;
  workers_active: number;
  heap_used_bytes?: number;
  /** Event-loop lag p99 of the engine process over its last complete 10-second window. */
  event_loop_lag_p99_ms?: number;
}

/** Why the metrics are not available: flint-observability is not loaded, or runs with `metrics_enabled: false`. */
export type MetricsUnavailableReason = 'module_not_loaded' | 'metrics_disabled';

/** `engine::metrics::list`'s `engine_metrics` as last read (SDK metric points left out). */
export interface EngineMetricsSnapshot {
  /** The engine's clock, epoch milliseconds. */
  timestamp: number;
  invocations: InvocationCounts & {
    in_flight: number;
    by_function: Record<string, InvocationCounts>;
    /** Trigger firings per trigger type (`skipped`: their condition said no). */
    by_trigger_type: Record<string, InvocationCounts & { skipped?: number }>;
  };
  workers: { spawns: number; deaths: number; active: number };
  /** Durations over the most recent 10,000 calls; null with `metrics_enabled: false`. */
  performance: {
    avg_duration_ms: number;
    p50_duration_ms: number;
    p95_duration_ms: number;
    p99_duration_ms: number;
    min_duration_ms: number;
    max_duration_ms: number;
    sample_size: number;
  } | null;
  process: {
    heap_used_bytes: number;
    rss_bytes: number;
    event_loop_lag_p50_ms: number;
    event_loop_lag_p99_ms: number;
    event_loop_lag_max_ms: number;
    uptime_seconds: number;
  } | null;
}

/**
 * GET /_console/metrics[?by_function=false]: the sampler's history (the last 10 minutes, oldest first)
 * and the latest reading (`by_function=false` leaves its per-function counts empty). When flint-observability is not loaded (or counts nothing) `available` is false and
 * `reason`/`detail` say why; `latest` may still show workers and the process.
 */
export interface MetricsResponse {
  available: boolean;
  reason?: MetricsUnavailableReason;
  detail?: string;
  /** The console's connection to the engine now: while it is not connected no readings are taken. */
  bridge: BridgeState;
  /** Time between readings (ms). */
  interval_ms: number;
  /** How far back the history goes at most (ms). */
  window_ms: number;
  samples: MetricsSample[];
  latest: EngineMetricsSnapshot | null;
}

/** A failed trace: its root span (`engine::traces::list` with status `error`). */
export interface RecentError {
  trace_id: string;
  span_id: string;
  /** The root span's name (`GET /orders`, `call orders::create`, `process orders`…). */
  name: string;
  function_id: string | null;
  trigger_type: string | null;
  /** `error.type`: the error code. */
  code: string | null;
  /** The span's status description (`<code>: <message>`). */
  message: string | null;
  service_name: string;
  /** Epoch milliseconds. */
  start_ms: number;
  duration_ms: number;
}

/** Why recent errors cannot be read: flint-observability is not loaded, or keeps no spans in memory. */
export type SpanStoreUnavailableReason = 'module_not_loaded' | 'traces_not_stored';

/** GET /_console/metrics/errors?limit=: the newest failed traces first (limit 10 by default, at most 100). */
export interface RecentErrorsResponse {
  available: boolean;
  reason?: SpanStoreUnavailableReason;
  detail?: string;
  errors: RecentError[];
}

/** A box of the Flow graph. Ids are `trigger:<id>`, `fn:<id>`, `topic:<name>`, `scope:<name>`. */
export type FlowNodeKind = 'trigger' | 'function' | 'topic' | 'scope';

export interface FlowNode {
  id: string;
  kind: FlowNodeKind;
  /** What the box says: an HTTP route, a cron expression, a function id, a topic… */
  label: string;
  function_id?: string;
  trigger_id?: string;
  trigger_type?: string;
  /** A trigger's status (`parked`: its type has no provider yet). */
  status?: string;
  topic?: string;
  scope?: string;
  /** Seen in traces but not in the registry now (its worker disconnected, the trigger was removed). */
  missing?: boolean;
  /**
   * A function's calls from `engine::metrics::list` (since the engine started), with the call rate and
   * failures per second over the last ~10 s of the console's readings. Absent without flint-observability's metrics.
   */
  stats?: InvocationCounts & { rate?: number; error_rate?: number };
}

/**
 * An arrow of the Flow graph:
 * - `trigger`: a trigger runs its function (from the registry, with counts from traces);
 * - `call`: a function called another while it ran;
 * - `enqueue`: a function enqueued a call of another (`TriggerAction.Enqueue`; `via` is the named queue);
 * - `publish`: a function published to a topic; `write`: a function's state write fired triggers of a scope;
 * - `deliver`: a topic's (or a scope's) message reached a subscriber trigger;
 * - `fires`: something a function did fired a trigger (a log line, an HTTP request carrying its trace).
 */
export type FlowEdgeKind = 'trigger' | 'call' | 'enqueue' | 'publish' | 'write' | 'deliver' | 'fires';

export interface FlowEdge {
  /** `<source>|<kind>|<target>` */
  id: string;
  source: string;
  target: string;
  kind: FlowEdgeKind;
  /** The registry declares it (a trigger's function, a subscriber's topic); otherwise learned from traces only. */
  registered: boolean;
  via?: string;
  /** Seen in the traces read: how many times, how many failed, and the average duration (ms) of the target's span. */
  calls: number;
  errors: number;
  avg_ms: number | null;
  /** The newest trace with this edge, and the newest one where it failed. */
  last_trace_id?: string;
  last_error_trace_id?: string;
  /** Epoch milliseconds of the newest sighting. */
  last_seen_ms?: number;
}

/** GET /_console/flow (only with --enable-flow; else 404 `flow_disabled`). */
export interface FlowResponse {
  nodes: FlowNode[];
  edges: FlowEdge[];
  traces: {
    /** Edges are learned from traces (flint-observability with spans kept in memory). */
    available: boolean;
    reason?: SpanStoreUnavailableReason;
    detail?: string;
    /** Distinct traces the edges come from (the newest the engine holds, up to a bound). */
    window: number;
    /** Traces read for this answer. */
    read: number;
    /** Traces not read yet (bounded work per request): the next answers read them. */
    pending: number;
  };
  /** Function nodes carry call counts (flint-observability's metrics). */
  metrics_available: boolean;
  generated_at: number;
}

export interface FlowPosition {
  x: number;
  y: number;
}

/** PUT /_console/flow/layout {positions}: replaces the saved positions (node id → position). */
export interface FlowLayoutRequest {
  positions: Record<string, FlowPosition>;
}

/**
 * GET and PUT /_console/flow/layout: the node positions saved by dragging, kept with `state::set` in
 * scope `flint-console`, key `flow-layout` (`stored: 'state'`), or in the console server's memory
 * when flint-state is not loaded (`stored: 'memory'`, lost on restart).
 */
export interface FlowLayout {
  positions: Record<string, FlowPosition>;
  stored: 'state' | 'memory';
}
