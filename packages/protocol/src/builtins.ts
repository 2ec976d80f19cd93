/** Ids of the engine's built-in functions and trigger types. */
export const EngineFunctions = {
  LIST_FUNCTIONS: 'engine::functions::list',
  LIST_TRIGGERS: 'engine::triggers::list',
  LIST_TRIGGER_TYPES: 'engine::trigger-types::list',
  LIST_WORKERS: 'engine::workers::list',
  REGISTER_WORKER: 'engine::workers::register',
  CREATE_CHANNEL: 'engine::channels::create',
} as const;

export const EngineTriggers = {
  FUNCTIONS_AVAILABLE: 'engine::functions-available',
  WORKERS_AVAILABLE: 'engine::workers-available',
  TRIGGERS_AVAILABLE: 'engine::triggers-available',
} as const;

export const LOG_LEVELS = ['info', 'warn', 'error', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Function ids starting with this prefix are internal and hidden from listings by default. */
export const INTERNAL_PREFIX = 'engine::';

/**
 * Whether a function (or a trigger, by its function) is internal, hidden from listings unless
 * `include_internal` is asked for: an `engine::` id, or `metadata.internal: true` (a worker's plumbing,
 * such as the console's own change listeners).
 */
export function isInternal(functionId: string, metadata?: Record<string, unknown> | null): boolean {
  return functionId.startsWith(INTERNAL_PREFIX) || metadata?.internal === true;
}

/**
 * Who serves a function: a connected worker (`worker_name` null until it announced itself) or a module.
 * In a cluster, `engine` names the engine (its `cluster.node_id`) the worker is connected to.
 */
export type FunctionProviderInfo = { worker_id: string; worker_name: string | null; engine?: string } | { module: string };

export interface FunctionInfo {
  function_id: string;
  description: string | null;
  request_format: unknown;
  response_format: unknown;
  metadata: Record<string, unknown> | null;
  /** Flint addition: every provider of the id (calls are balanced among them). */
  providers?: FunctionProviderInfo[];
}

export interface TriggerInfo {
  id: string;
  trigger_type: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
  status: 'active' | 'parked' | 'error';
  error?: string;
  /** In a cluster: the engine (its `cluster.node_id`) the trigger was registered on. */
  engine?: string;
}

/** One engine of a cluster, as `engine::cluster::members` lists it (this engine first). */
export interface ClusterMember {
  /** Its `cluster.node_id`. */
  node: string;
  /** Its first bridge listener's URL (where its workers connect). */
  bridge: string;
  version: string;
  started_at: number;
  /** How long before the answer it was last heard from (0 for the answering engine). */
  last_seen_ms: number;
  /** Round trip of a ping over the cluster transport (ms); null for the answering engine, or when it did not answer. */
  link_ms: number | null;
  functions: number;
  workers: number;
}

/** The answer of `engine::cluster::members`. */
export interface ClusterMembers {
  cluster: string;
  node_id: string;
  members: ClusterMember[];
}

export interface TriggerTypeInfo {
  id: string;
  description: string;
  trigger_request_format?: unknown;
  call_request_format?: unknown;
}

export interface WorkerInfo {
  id: string;
  name: string | null;
  runtime: string;
  version: string | null;
  os: string | null;
  ip_address: string | null;
  internal: boolean;
  status: 'connected' | 'available' | 'busy' | 'disconnected';
  connected_at_ms: number;
  function_count: number;
  functions: string[];
  active_invocations: number;
  latest_metrics: null | Record<string, unknown>;
  pid?: number;
  isolation?: string | null;
  /** In a cluster: the engine (its `cluster.node_id`) the worker is connected to. */
  engine?: string;
}
