/** A trace as a map: what ran (per service) as nodes, who called whom as edges (pure: no DOM). */
import type { TraceSpan } from '../../../../../src/api-types.js';
import { type TraceModel, operationOf } from './tree.js';

export interface MapNode {
  id: string;
  service: string;
  /** The function id, or the span's name (see operationOf). */
  label: string;
  /** Spans of this node. */
  count: number;
  errors: number;
  /** Sum of the spans' durations (ns). */
  totalNs: number;
  /** True when one of its spans is a root of the trace. */
  root: boolean;
}

export interface MapEdge {
  id: string;
  from: string;
  to: string;
  /** Calls: child spans of a `from` span that are `to` spans. */
  count: number;
  errors: number;
  /** Sum and longest of those calls' durations (ns). */
  totalNs: number;
  maxNs: number;
}

export interface TraceMap {
  nodes: MapNode[];
  edges: MapEdge[];
}

const nodeKey = (service: string, label: string) => `${service}\u0000${label}`;

/** The id of the map node a span belongs to. */
export const mapNodeId = (span: TraceSpan): string => nodeKey(span.service_name, operationOf(span));

/** Aggregates the spans of a trace into nodes (service + operation) and parent → child edges, in order of first appearance. */
export function traceMap(model: TraceModel): TraceMap {
  const nodes = new Map<string, MapNode>();
  const edges = new Map<string, MapEdge>();
  const keys: string[] = new Array(model.nodes.length);
  for (const n of model.nodes) {
    const label = operationOf(n.span);
    const id = nodeKey(n.span.service_name, label);
    keys[n.index] = id;
    let node = nodes.get(id);
    if (!node) {
      node = { id, service: n.span.service_name, label, count: 0, errors: 0, totalNs: 0, root: false };
      nodes.set(id, node);
    }
    const duration = n.end - n.start;
    const error = n.span.status === 'error';
    node.count++;
    if (error) node.errors++;
    node.totalNs += duration;
    if (n.parent === -1) {
      node.root = true;
      continue;
    }
    const from = keys[n.parent]!;
    const edgeId = `${from}\u0001${id}`;
    let edge = edges.get(edgeId);
    if (!edge) {
      edge = { id: edgeId, from, to: id, count: 0, errors: 0, totalNs: 0, maxNs: 0 };
      edges.set(edgeId, edge);
    }
    edge.count++;
    if (error) edge.errors++;
    edge.totalNs += duration;
    if (duration > edge.maxNs) edge.maxNs = duration;
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}

export interface PlacedNode extends MapNode {
  /** Column (0: the roots) and place in it. */
  layer: number;
  row: number;
  /** Top-left corner. */
  x: number;
  y: number;
}

export interface MapLayout {
  nodes: PlacedNode[];
  width: number;
  height: number;
}

export interface LayoutOptions {
  /** `down`: the roots on top, each level of calls a row below (default); `right`: the roots on the left, a column per level. */
  direction: 'down' | 'right';
  nodeWidth: number;
  nodeHeight: number;
  gapX: number;
  gapY: number;
  margin: number;
}

const DEFAULT_LAYOUT: LayoutOptions = { direction: 'down', nodeWidth: 200, nodeHeight: 56, gapX: 40, gapY: 60, margin: 20 };

/**
 * A layered layout: each node's layer is its distance (fewest calls) from a root node, nodes unreached
 * from a root start layers of their own; within a layer, nodes keep their order of first appearance.
 * Layers are rows (`down`) centred on the widest, or columns (`right`) centred on the tallest.
 */
export function layoutMap(map: TraceMap, options: Partial<LayoutOptions> = {}): MapLayout {
  const o = { ...DEFAULT_LAYOUT, ...options };
  const out = new Map<string, string[]>();
  for (const e of map.edges) {
    if (e.from === e.to) continue;
    const list = out.get(e.from);
    if (list) list.push(e.to);
    else out.set(e.from, [e.to]);
  }
  const layer = new Map<string, number>();
  const queue: string[] = [];
  const starts = map.nodes.filter((n) => n.root);
  for (const n of starts.length > 0 ? starts : map.nodes.slice(0, 1)) {
    layer.set(n.id, 0);
    queue.push(n.id);
  }
  const bfs = () => {
    for (let q = 0; q < queue.length; q++) {
      const id = queue[q]!;
      for (const to of out.get(id) ?? []) {
        if (layer.has(to)) continue;
        layer.set(to, layer.get(id)! + 1);
        queue.push(to);
      }
    }
    queue.length = 0;
  };
  bfs();
  for (const n of map.nodes) {
    if (layer.has(n.id)) continue;
    layer.set(n.id, 0);
    queue.push(n.id);
    bfs();
  }
  const columns: MapNode[][] = [];
  for (const n of map.nodes) {
    const l = layer.get(n.id)!;
    while (columns.length <= l) columns.push([]);
    columns[l]!.push(n);
  }
  const most = Math.max(0, ...columns.map((c) => c.length));
  const placed: PlacedNode[] = [];
  if (o.direction === 'right') {
    const columnHeight = (k: number) => k * o.nodeHeight + Math.max(0, k - 1) * o.gapY;
    columns.forEach((column, l) => {
      const top = o.margin + (columnHeight(most) - columnHeight(column.length)) / 2;
      column.forEach((n, row) => {
        placed.push({ ...n, layer: l, row, x: o.margin + l * (o.nodeWidth + o.gapX), y: top + row * (o.nodeHeight + o.gapY) });
      });
    });
    const width = o.margin * 2 + columns.length * o.nodeWidth + Math.max(0, columns.length - 1) * o.gapX;
    return { nodes: placed, width, height: o.margin * 2 + columnHeight(most) };
  }
  const rowWidth = (k: number) => k * o.nodeWidth + Math.max(0, k - 1) * o.gapX;
  columns.forEach((layer, l) => {
    const left = o.margin + (rowWidth(most) - rowWidth(layer.length)) / 2;
    layer.forEach((n, row) => {
      placed.push({ ...n, layer: l, row, x: left + row * (o.nodeWidth + o.gapX), y: o.margin + l * (o.nodeHeight + o.gapY) });
    });
  });
  const height = o.margin * 2 + columns.length * o.nodeHeight + Math.max(0, columns.length - 1) * o.gapY;
  return { nodes: placed, width: o.margin * 2 + rowWidth(most), height };
}
