/**
 * The Flow page's graph: trigger, function, topic and scope nodes from the live registry, and the edges
 * learned from traces (flow-edges.ts) added to the ones the registry declares. Pure.
 */
import { type FunctionInfo, type TriggerInfo, isInternal } from '@flint/protocol';
import type { FlowEdge, FlowNode } from './api-types.js';
import { type EdgeTotals, type TriggerSighting, edgeId, fnNode, scopeNode, topicNode, triggerNode } from './flow-edges.js';
import type { FunctionStats } from './metrics-history.js';

export interface FlowGraphInput {
  /** Every function, internal ones included (they are needed to know what to leave out). */
  functions: FunctionInfo[];
  /** Every trigger, internal ones included. */
  triggers: TriggerInfo[];
  /** Edges learned from traces. */
  learned: Iterable<EdgeTotals>;
  /** Triggers seen in traces (for those no longer registered). */
  sightings: Iterable<TriggerSighting>;
  /** Call counts per function (flint-observability's metrics), if available. */
  stats?: Record<string, FunctionStats>;
}

const SUBSCRIBER_TYPES = new Set(['durable:subscriber', 'subscribe']);

const configOf = (t: Pick<TriggerInfo, 'config'>): Record<string, unknown> =>
  t.config && typeof t.config === 'object' && !Array.isArray(t.config) ? (t.config as Record<string, unknown>) : {};

const configString = (t: Pick<TriggerInfo, 'config'>, key: string): string | undefined => {
  const v = configOf(t)[key];
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
};

/** What a trigger listens to, in a few words (`GET /orders/:id`, `cron 0 7 * * *`, `topic orders`…). */
export function triggerLabel(t: Pick<TriggerInfo, 'trigger_type' | 'config' | 'id'>): string {
  switch (t.trigger_type) {
    case 'http': {
      const path = (configString(t, 'api_path') ?? '').split('/').filter((s) => s !== '');
      return `${(configString(t, 'http_method') ?? 'GET').toUpperCase()} /${path.join('/')}`;
    }
    case 'cron':
      return `cron ${configString(t, 'expression') ?? ''}`.trim();
    case 'durable:subscriber':
      return `queue ${configString(t, 'topic') ?? '(no topic)'}`;
    case 'subscribe':
      return `subscribe ${configString(t, 'topic') ?? '(no topic)'}`;
    case 'state': {
      const scope = configString(t, 'scope');
      const key = configString(t, 'key');
      return `state ${scope ?? '*'}${key ? `/${key}` : ''}`;
    }
    case 'log':
      return `log ${configString(t, 'min_level') ?? configString(t, 'level') ?? 'all'}`;
    default: {
      const name = configString(t, 'stream_name');
      return name ? `${t.trigger_type} ${name}` : t.trigger_type;
    }
  }
}

/** Whether a function is served by a worker (not only by an engine module). */
const servedByWorker = (f: FunctionInfo) => (f.providers ?? []).some((p) => 'worker_id' in p);

/**
 * The graph: every trigger that is not internal with its function; every function a worker serves;
 * a topic node before each queue or pub/sub subscriber (and a scope node before each scoped state
 * trigger); the learned edges with their endpoints. Internal triggers and functions (the engine's,
 * the console's own listeners) are left out, and so are learned calls to functions only a module
 * serves (`state::get`…): every handler calls those, they would bury the application's flow.
 */
export function buildFlowGraph(input: FlowGraphInput): { nodes: FlowNode[]; edges: FlowEdge[] } {
  const functions = new Map(input.functions.map((f) => [f.function_id, f]));
  const internalFunction = (id: string) => {
    const f = functions.get(id);
    return isInternal(id, f?.metadata ?? null);
  };
  const moduleOnly = (id: string) => {
    const f = functions.get(id);
    return f !== undefined && !servedByWorker(f);
  };
  const nodes = new Map<string, FlowNode>();
  const edges = new Map<string, FlowEdge>();

  const addFunction = (id: string): string => {
    const nodeId = fnNode(id);
    if (!nodes.has(nodeId)) {
      const node: FlowNode = { id: nodeId, kind: 'function', label: id, function_id: id };
      if (!functions.has(id)) node.missing = true;
      const s = input.stats?.[id];
      if (s) node.stats = { ...s };
      else if (input.stats) node.stats = { total: 0, success: 0, error: 0 };
      nodes.set(nodeId, node);
    }
    return nodeId;
  };
  const addChannel = (kind: 'topic' | 'scope', name: string): string => {
    const nodeId = kind === 'topic' ? topicNode(name) : scopeNode(name);
    if (!nodes.has(nodeId))
      nodes.set(nodeId, kind === 'topic' ? { id: nodeId, kind, label: name, topic: name } : { id: nodeId, kind, label: name, scope: name });
    return nodeId;
  };
  const addEdge = (e: Omit<FlowEdge, 'id' | 'calls' | 'errors' | 'avg_ms'> & Partial<FlowEdge>) => {
    const id = edgeId(e.source, e.kind, e.target);
    const existing = edges.get(id);
    if (existing) {
      existing.registered ||= e.registered;
      return existing;
    }
    const edge: FlowEdge = { calls: 0, errors: 0, avg_ms: null, ...e, id };
    edges.set(id, edge);
    return edge;
  };

  // The registry: triggers with their functions, subscribers behind their topic, workers' functions.
  const triggerIds = new Set<string>();
  const allTriggerIds = new Set(input.triggers.map((t) => t.id));
  for (const t of input.triggers) {
    if (isInternal(t.function_id, t.metadata ?? null) || internalFunction(t.function_id)) continue;
    triggerIds.add(t.id);
    const nodeId = triggerNode(t.id);
    nodes.set(nodeId, {
      id: nodeId,
      kind: 'trigger',
      label: triggerLabel(t),
      trigger_id: t.id,
      trigger_type: t.trigger_type,
      function_id: t.function_id,
      status: t.status,
    });
    addEdge({ source: nodeId, target: addFunction(t.function_id), kind: 'trigger', registered: true });
    const topic = SUBSCRIBER_TYPES.has(t.trigger_type) ? configString(t, 'topic') : undefined;
    if (topic) addEdge({ source: addChannel('topic', topic), target: nodeId, kind: 'deliver', registered: true });
    const scope = t.trigger_type === 'state' ? configString(t, 'scope') : undefined;
    if (scope) addEdge({ source: addChannel('scope', scope), target: nodeId, kind: 'deliver', registered: true });
  }
  for (const f of input.functions) if (!isInternal(f.function_id, f.metadata) && servedByWorker(f)) addFunction(f.function_id);

  // Triggers seen in traces but not registered now (internal ones are not among them either: skipped below).
  const sighted = new Map<string, TriggerSighting>();
  for (const s of input.sightings) sighted.set(s.trigger_id, s);

  const endpointOk = (nodeId: string): boolean => {
    if (nodeId.startsWith('fn:')) {
      const id = nodeId.slice(3);
      return !internalFunction(id) && !moduleOnly(id);
    }
    if (nodeId.startsWith('trigger:')) {
      const id = nodeId.slice(8);
      if (triggerIds.has(id)) return true;
      // Registered but internal (the console's listeners, …): left out; unknown now: shown if its function is not internal.
      if (allTriggerIds.has(id)) return false;
      const s = sighted.get(id);
      return s !== undefined && (s.function_id === undefined || !internalFunction(s.function_id));
    }
    return true;
  };
  const ensure = (nodeId: string) => {
    if (nodes.has(nodeId)) return;
    if (nodeId.startsWith('fn:')) addFunction(nodeId.slice(3));
    else if (nodeId.startsWith('topic:')) addChannel('topic', nodeId.slice(6));
    else if (nodeId.startsWith('scope:')) addChannel('scope', nodeId.slice(6));
    else if (nodeId.startsWith('trigger:')) {
      const id = nodeId.slice(8);
      const s = sighted.get(id);
      nodes.set(nodeId, {
        id: nodeId,
        kind: 'trigger',
        label: s?.name ?? id,
        trigger_id: id,
        trigger_type: s?.trigger_type,
        function_id: s?.function_id,
        missing: true,
      });
    }
  };

  for (const e of input.learned) {
    if (!endpointOk(e.source) || !endpointOk(e.target)) continue;
    ensure(e.source);
    ensure(e.target);
    const edge = addEdge({ source: e.source, target: e.target, kind: e.kind, registered: false });
    if (e.via !== undefined) edge.via = e.via;
    edge.calls = e.calls;
    edge.errors = e.errors;
    edge.avg_ms = e.calls > 0 ? Math.round((e.totalMs / e.calls) * 1000) / 1000 : null;
    if (e.lastTraceId !== undefined) edge.last_trace_id = e.lastTraceId;
    if (e.lastErrorTraceId !== undefined) edge.last_error_trace_id = e.lastErrorTraceId;
    if (e.lastSeenMs !== undefined) edge.last_seen_ms = e.lastSeenMs;
  }

  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return { nodes: [...nodes.values()].sort(byId), edges: [...edges.values()].sort(byId) };
}
