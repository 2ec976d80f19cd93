/**
 * The console's JSON API on its own port (`/_console/*`), shared by the server and the web app (types only).
 *
 * Every error is `{error, code}` with an HTTP status: 400 `invalid_request`, 401 `token_required`,
 * 403 `origin_forbidden` / `same_origin_header_required`, 404 `not_found`, 413 `payload_too_large`,
 * 503 `engine_unavailable` (the bridge is not connected), 504 `engine_timeout`, 502 `engine_error`
 * (an engine function failed; `engine_code` carries its code).
 *
 * Mutating calls (POST, PUT, DELETE) must carry the header `x-flint-console: 1`: a page of another
 * origin cannot add it without a CORS preflight, which the console never grants.
 */

import type { ClusterMember, FunctionInfo, TriggerInfo, TriggerTypeInfo, WorkerInfo } from '@flint/protocol';

/** The header every mutating call must carry. */
export const MUTATION_HEADER = 'x-flint-console';

export interface ApiError {
  error: string;
  code: string;
  /** For `engine_error`: the engine function's error code. */
  engine_code?: string;
}

/** GET /_console/config: what the console was started with (no engine call). */
export interface ConsoleConfig {
  version: string;
  console: { host: string; port: number; token_required: boolean };
  engine: { host: string; http_port: number; ws_port: number; bridge_port: number; bridge_url: string };
  otel: { enabled: boolean; service_name: string };
  enable_flow: boolean;
}

import type { BridgeState } from './types/bridge.js';

export type { BridgeState };

/** A listener's reachability as seen from the console server. */
export interface Reachability {
  url: string;
  reachable: boolean;
  /** Why it is not, or the HTTP status seen. */
  detail: string | null;
}

/** GET /_console/status: engine connectivity and what the engine reports about itself. */
export interface ConsoleStatus {
  bridge: BridgeState;
  http: Reachability;
  stream: Reachability;
  /** From `engine::config::get`; null while the bridge is down. */
  engine: EngineAbout | null;
  /** From `engine::health::check` when flint-observability is loaded, else null. */
  health: unknown;
}

export interface EngineAbout {
  version: string;
  started_at: number;
  listeners: { name: string; url: string }[];
  /** Loaded modules with their config, secrets replaced by `***`. */
  modules: { name: string; config: unknown }[];
}

/** The engine's own shapes, as its listing functions return them. */
export type { FunctionInfo, TriggerInfo, TriggerTypeInfo, WorkerInfo };

/** GET /_console/workers */
export interface WorkersResponse {
  workers: WorkerInfo[];
}

/** GET /_console/functions?include_internal=true|false */
export interface FunctionsResponse {
  functions: FunctionInfo[];
}

/** GET /_console/triggers?include_internal=true|false */
export interface TriggersResponse {
  triggers: TriggerInfo[];
  trigger_types: TriggerTypeInfo[];
}

/** GET /_console/cron: `engine::cron::list` (empty when flint-cron is not loaded). */
export interface CronJob {
  trigger_id: string;
  function_id: string;
  job_id: string;
  expression: string;
  timezone?: string;
  next_runs: string[];
  last_run: null | Record<string, unknown>;
}
export interface CronResponse {
  available: boolean;
  jobs: CronJob[];
}

export type { ClusterMember };

/**
 * GET /_console/cluster: `engine::cluster::members`. Outside a cluster (the function is not
 * registered) `available` is false, `cluster` and `node_id` null and `members` empty.
 */
export interface ClusterResponse {
  available: boolean;
  /** The cluster's name. */
  cluster: string | null;
  /** The `node_id` of the engine the console is connected to. */
  node_id: string | null;
  /** That engine first, then every other engine it knows. */
  members: ClusterMember[];
}

/** POST /_console/invoke */
export interface InvokeRequest {
  function_id: string;
  input?: unknown;
  timeout_ms?: number;
}
/** A finished call: the function's result or its error, with the time the engine took (200 either way). */
export type InvokeResponse =
  | { status: 'ok'; result: unknown; duration_ms: number }
  | { status: 'error'; error: { code: string; message: string }; duration_ms: number };

/** POST /_console/cron/trigger {trigger_id}: runs a cron trigger now. */
export interface CronTriggerRequest {
  trigger_id: string;
}

/**
 * POST /_console/emit: delivers a payload to a trigger as its source would. A `subscribe` trigger
 * gets it through `publish` on its topic (every subscriber of the topic receives it); a
 * `durable:subscriber` trigger through `flint::durable::publish`; a trigger of a worker-defined type
 * by calling its function with the payload. Answers like /_console/invoke.
 */
export interface EmitRequest {
  trigger_id: string;
  payload: unknown;
}
export type EmitResponse = InvokeResponse & { delivered_via: 'publish' | 'durable_publish' | 'invoke' };

/** POST /_console/http: the request builder, sent by the console server to the engine's HTTP port. */
export interface HttpProbeRequest {
  method: string;
  /** Starts with `/`; path parameters already filled in. */
  path: string;
  query?: [string, string][];
  headers?: [string, string][];
  /** Sent as JSON when not undefined. */
  body?: unknown;
}
export interface HttpProbeResponse {
  status: number;
  headers: [string, string][];
  /** Parsed JSON when the response is JSON, else text. */
  body: unknown;
  body_is_json: boolean;
  duration_ms: number;
  url: string;
}

/** GET /_console/states */
export interface StateGroupsResponse {
  groups: { scope: string; count: number }[];
}
/** GET /_console/states/:scope?offset=&limit=&q= (keys sorted; q filters keys by substring) */
export interface StateEntriesResponse {
  scope: string;
  entries: { key: string; value: unknown }[];
  total: number;
}
/** PUT /_console/states/:scope/:key {value} → {old_value, new_value}; DELETE → {old_value}. */
export interface StateSetRequest {
  value: unknown;
}

/** GET /_console/queues: every topic and named queue with its stats. */
export interface QueueStats {
  name: string;
  kind: 'topic' | 'function_queue';
  broker_type: string;
  depth: number;
  waiting: number;
  in_flight: number;
  delayed: number;
  dead: number;
  unrouted?: number;
  consumer_count: number;
  rates: Record<string, number>;
  config: unknown;
  subscribers?: { function_id?: string; waiting: number; in_flight: number; delayed: number; dead: number; consumers: number }[];
}
export interface QueuesResponse {
  available: boolean;
  queues: QueueStats[];
}
/** GET /_console/queues/:name/dead?offset=&limit= */
export interface DeadLetter {
  id: string;
  payload: unknown;
  error: unknown;
  failed_at: number;
  retries: number;
  size_bytes: number;
  function_id: string | null;
}
export interface DeadLettersResponse {
  queue: string;
  messages: DeadLetter[];
}
/*
 * POST /_console/queues/:name/publish {data}       → {message_id?}
 * POST /_console/queues/:name/redrive               → engine result ({queue, redriven})
 * POST /_console/queues/:name/dead/:id/redrive      → engine result
 * DELETE /_console/queues/:name/dead/:id            → engine result ({discarded})
 */

/** POST /_console/login {token}: sets the session cookie (204); 401 `token_invalid` on a wrong token. */
export interface LoginRequest {
  token: string;
}

/**
 * WS /_console/live (same origin, token cookie when required): the server pushes JSON events.
 * On connect it sends `bridge` with the current state.
 */
export type LiveEvent =
  | { type: 'bridge'; state: BridgeState }
  | { type: 'functions' }
  | { type: 'workers' }
  | { type: 'triggers' }
  | { type: 'state'; event_type: string; scope: string; key: string };

/**
 * WS /_console/streams: a pipe to the engine's stream WebSocket (`--ws-port`); the console's Origin
 * is checked, frames pass unchanged both ways.
 */

export type * from './types/dashboard-flow.js';
export type * from './types/logs-streams.js';
export type * from './types/traces.js';
