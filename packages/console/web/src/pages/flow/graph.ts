import * as dagre from '@dagrejs/dagre';
import type { FlowEdge, FlowEdgeKind, FlowNode, FlowPosition } from '../../../../src/api-types.js';

/** The size of every node box (px), for the layout; flow.css draws them this size. */
export const NODE_WIDTH = 236;
export const NODE_HEIGHT = 64;

/**
 * The top-left position of every node: dagre's automatic layout, left to right (triggers, then the
 * functions they run, then what those call), with the saved positions (dragged by the user) over it.
 * Edges of a node to itself and edges to unknown nodes are left out of the layout.
 */
export function layoutPositions(
  nodes: readonly Pick<FlowNode, 'id'>[],
  edges: readonly Pick<FlowEdge, 'id' | 'source' | 'target'>[],
  saved: Readonly<Record<string, FlowPosition>> = {},
): Record<string, FlowPosition> {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 22, ranksep: 110, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const e of edges) if (e.source !== e.target && g.hasNode(e.source) && g.hasNode(e.target)) g.setEdge(e.source, e.target, {}, e.id);
  dagre.layout(g);
  const out: Record<string, FlowPosition> = {};
  for (const n of nodes) {
    const s = saved[n.id];
    if (s) {
      out[n.id] = { x: s.x, y: s.y };
      continue;
    }
    const p = g.node(n.id);
    out[n.id] = { x: Math.round(p.x - NODE_WIDTH / 2), y: Math.round(p.y - NODE_HEIGHT / 2) };
  }
  return out;
}

/** The saved layout after dragging `moved` nodes (rounded to 0.1 px, like the server keeps them). */
export function withMoved(
  saved: Readonly<Record<string, FlowPosition>>,
  moved: readonly { id: string; position: FlowPosition }[],
): Record<string, FlowPosition> {
  const out = { ...saved };
  for (const m of moved) out[m.id] = { x: Math.round(m.position.x * 10) / 10, y: Math.round(m.position.y * 10) / 10 };
  return out;
}

/** The nodes and edges left when nodes without any edge are hidden (`connectedOnly`). */
export function visibleGraph<N extends Pick<FlowNode, 'id'>, E extends Pick<FlowEdge, 'source' | 'target'>>(
  nodes: readonly N[],
  edges: readonly E[],
  connectedOnly: boolean,
): { nodes: N[]; edges: E[] } {
  if (!connectedOnly) return { nodes: [...nodes], edges: [...edges] };
  const linked = new Set<string>();
  for (const e of edges) {
    linked.add(e.source);
    linked.add(e.target);
  }
  return { nodes: nodes.filter((n) => linked.has(n.id)), edges: [...edges] };
}

/** Edges that stand for a message or a stored call (not a call waited for): drawn dashed. */
export const ASYNC_KINDS: ReadonlySet<FlowEdgeKind> = new Set(['publish', 'deliver', 'write', 'enqueue']);

export type Tone = 'ok' | 'warn' | 'error' | 'idle';

/** An edge's colour: failures in more than 5% of its calls are an error, any failure a warning; never seen: idle. */
export function edgeTone(e: Pick<FlowEdge, 'calls' | 'errors'>): Tone {
  if (e.calls === 0) return 'idle';
  if (e.errors === 0) return 'ok';
  return e.errors / e.calls > 0.05 ? 'error' : 'warn';
}

/** A function node's colour from its counts (since the engine started). */
export function nodeTone(n: Pick<FlowNode, 'stats' | 'missing'>): Tone {
  if (n.missing) return 'warn';
  const s = n.stats;
  if (!s || s.total === 0) return 'idle';
  return edgeTone({ calls: s.total, errors: s.error });
}

/** A count in a few characters: 999, 1.2k, 34k, 1.5M. */
export function compactCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

/** A duration for an edge label: 0.4 ms, 12 ms, 1.2 s. */
export function shortDuration(ms: number): string {
  if (ms < 1) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** What an edge's label says: how often it was seen, how often it failed, and its average time. */
export function edgeLabel(e: Pick<FlowEdge, 'calls' | 'errors' | 'avg_ms'>): string | undefined {
  if (e.calls === 0) return undefined;
  const parts = [`${compactCount(e.calls)}×`];
  if (e.errors > 0) parts.push(`${compactCount(e.errors)} err`);
  if (e.avg_ms !== null) parts.push(shortDuration(e.avg_ms));
  return parts.join(' · ');
}

/** A rate per second: 0.5/s, 12/s, 1.2k/s. */
export function formatRate(perSecond: number): string {
  if (perSecond === 0) return '0/s';
  if (perSecond < 10) return `${Math.round(perSecond * 10) / 10}/s`;
  return `${compactCount(Math.round(perSecond))}/s`;
}

/** An error ratio as a percentage: 0%, 0.4%, 12%. */
export function formatPercent(ratio: number): string {
  const p = ratio * 100;
  if (p === 0) return '0%';
  if (p < 10) return `${Math.round(p * 10) / 10}%`;
  return `${Math.round(p)}%`;
}

/** One line under a node's title. */
export function nodeSubtitle(n: FlowNode): string {
  switch (n.kind) {
    case 'function': {
      if (n.missing) return 'not registered now';
      const s = n.stats;
      if (!s) return 'function';
      const parts = [`${compactCount(s.total)} calls`];
      if (s.rate !== undefined && s.rate > 0) parts.push(formatRate(s.rate));
      if (s.error > 0) parts.push(`${formatPercent(s.error / Math.max(1, s.total))} err`);
      return parts.join(' · ');
    }
    case 'trigger':
      return `${n.trigger_type ?? 'trigger'}${n.status && n.status !== 'active' ? ` · ${n.status}` : ''}${n.missing ? ' · not registered now' : ''}`;
    case 'topic':
      return 'topic';
    case 'scope':
      return 'state scope';
  }
}

/** Where a node's "open" link goes in the console. */
export function nodeHref(n: FlowNode): { to: '/functions' | '/triggers' | '/queues' | '/states'; search: Record<string, string> } | undefined {
  switch (n.kind) {
    case 'function':
      return n.function_id ? { to: '/functions', search: { fn: n.function_id } } : undefined;
    case 'trigger':
      return n.trigger_id && !n.missing ? { to: '/triggers', search: { trigger: n.trigger_id } } : undefined;
    case 'topic':
      return n.topic ? { to: '/queues', search: { queue: n.topic } } : undefined;
    case 'scope':
      return n.scope ? { to: '/states', search: { scope: n.scope } } : undefined;
  }
}

/** What an edge kind means, for the detail panel. */
export const EDGE_KIND_TEXT: Record<FlowEdgeKind, string> = {
  trigger: 'the trigger runs this function',
  call: 'a call made while the function ran',
  enqueue: 'a call stored in a named queue',
  publish: 'messages published to the topic',
  write: 'state writes that fired triggers of the scope',
  deliver: 'deliveries to a subscriber',
  fires: 'something the function did fired the trigger',
};

/** A stable text of the graph's shape (node and edge ids), to redo the layout only when it changes. */
export function shapeKey(nodes: readonly Pick<FlowNode, 'id'>[], edges: readonly Pick<FlowEdge, 'id'>[]): string {
  return `${nodes.map((n) => n.id).join('\n')}\n--\n${edges.map((e) => e.id).join('\n')}`;
}
