/**
 * A trace's spans as a tree the views draw from (pure: no React, no DOM). Everything is computed once per
 * trace in linear or n·log n time without recursion, so a 10,000-span trace (or a chain 10,000 calls
 * deep) builds in a few milliseconds.
 */
import type { TraceSpan } from '../../../../../src/api-types.js';

export interface SpanNode {
  span: TraceSpan;
  /** Position in `TraceModel.nodes` (depth-first, parents before children, siblings by start). */
  index: number;
  /** Index of the parent node, -1 for a root. */
  parent: number;
  /** Indexes of the children, by start time. */
  children: number[];
  /** 0 for a root. */
  depth: number;
  /** Nanoseconds from the trace's start (`end >= start`: a span ending before it starts is read as instant). */
  start: number;
  end: number;
  /** Time spent in this span while none of its children ran (ns). */
  self: number;
  /** Spans under this one (children, their children…). */
  descendants: number;
  /** On the critical path: the chain of work the trace's end waited for. */
  critical: boolean;
}

/** A stretch of the critical path: time of span `index` during which it waited for no child (ns from the trace's start). */
export interface CriticalSegment {
  index: number;
  start: number;
  end: number;
}

export interface TraceModel {
  nodes: SpanNode[];
  /** Indexes of the roots, by start time. */
  roots: number[];
  /** Span id → node index (the first span holding an id). */
  byId: Map<string, number>;
  /** The earliest start (ns since the epoch). */
  startNs: number;
  /** From the earliest start to the latest end (ns). */
  durationNs: number;
  maxDepth: number;
  /** Services in order of first appearance (depth-first). */
  services: string[];
  errorCount: number;
  critical: CriticalSegment[];
}

/**
 * Builds the tree of a trace from its spans, in any order. A span whose parent is not among them is a
 * root; in a loop of parents (corrupt data) the loop's earliest-starting span becomes a root.
 */
export function buildTraceModel(spans: readonly TraceSpan[]): TraceModel {
  const n = spans.length;
  const indexOfId = new Map<string, number>();
  for (let i = 0; i < n; i++) if (!indexOfId.has(spans[i]!.span_id)) indexOfId.set(spans[i]!.span_id, i);
  const parent = parentsOf(spans, indexOfId);

  let startNs = Number.POSITIVE_INFINITY;
  let endNs = Number.NEGATIVE_INFINITY;
  for (const s of spans) {
    if (s.start_time_unix_nano < startNs) startNs = s.start_time_unix_nano;
    const end = Math.max(s.start_time_unix_nano, s.end_time_unix_nano);
    if (end > endNs) endNs = end;
  }
  if (n === 0) startNs = endNs = 0;

  // Children of each input span, and roots, by start (then input order).
  const kids: number[][] = Array.from({ length: n }, () => []);
  const rootInputs: number[] = [];
  for (let i = 0; i < n; i++) (parent[i] === -1 ? rootInputs : kids[parent[i]!]!).push(i);
  const byStart = (a: number, b: number) => spans[a]!.start_time_unix_nano - spans[b]!.start_time_unix_nano || a - b;
  rootInputs.sort(byStart);
  for (const k of kids) if (k.length > 1) k.sort(byStart);

  // Depth-first order, without recursion.
  const order: number[] = [];
  const depthOf = new Int32Array(n);
  const stack: number[] = [];
  for (let r = rootInputs.length - 1; r >= 0; r--) stack.push(rootInputs[r]!);
  while (stack.length > 0) {
    const i = stack.pop()!;
    order.push(i);
    const k = kids[i]!;
    for (let c = k.length - 1; c >= 0; c--) {
      depthOf[k[c]!] = depthOf[i]! + 1;
      stack.push(k[c]!);
    }
  }
  const nodeOf = new Int32Array(n);
  order.forEach((input, index) => {
    nodeOf[input] = index;
  });

  const nodes: SpanNode[] = order.map((input, index) => {
    const span = spans[input]!;
    const start = span.start_time_unix_nano - startNs;
    return {
      span,
      index,
      parent: parent[input] === -1 ? -1 : nodeOf[parent[input]!]!,
      children: kids[input]!.map((c) => nodeOf[c]!),
      depth: depthOf[input]!,
      start,
      end: Math.max(start, span.end_time_unix_nano - startNs),
      self: 0,
      descendants: 0,
      critical: false,
    };
  });

  // Descendant counts: children come after their parent, so one backwards pass adds them up.
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i]!;
    if (node.parent !== -1) nodes[node.parent]!.descendants += node.descendants + 1;
  }
  for (const node of nodes) node.self = selfTime(node, nodes);

  const byId = new Map<string, number>();
  for (const node of nodes) if (!byId.has(node.span.span_id)) byId.set(node.span.span_id, node.index);
  const services: string[] = [];
  const seen = new Set<string>();
  let maxDepth = 0;
  let errorCount = 0;
  for (const node of nodes) {
    if (!seen.has(node.span.service_name)) {
      seen.add(node.span.service_name);
      services.push(node.span.service_name);
    }
    if (node.depth > maxDepth) maxDepth = node.depth;
    if (node.span.status === 'error') errorCount++;
  }
  const roots = rootInputs.map((i) => nodeOf[i]!);
  const critical = criticalPath(nodes, roots);
  for (const index of critical.spans) nodes[index]!.critical = true;
  return { nodes, roots, byId, startNs, durationNs: endNs - startNs, maxDepth, services, errorCount, critical: critical.segments };
}

/** The parent of each span (input index, -1 for a root), loops of parents broken at their earliest-starting span. */
function parentsOf(spans: readonly TraceSpan[], indexOfId: Map<string, number>): Int32Array {
  const n = spans.length;
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const id = spans[i]!.parent_span_id;
    parent[i] = id === null || id === undefined || id === '' ? -1 : (indexOfId.get(id) ?? -1);
  }
  const state = new Uint8Array(n); // 0 new, 1 on the current walk, 2 settled
  const path: number[] = [];
  for (let start = 0; start < n; start++) {
    if (state[start] !== 0) continue;
    path.length = 0;
    let i = start;
    while (i !== -1 && state[i] === 0) {
      state[i] = 1;
      path.push(i);
      i = parent[i]!;
    }
    if (i !== -1 && state[i] === 1) {
      let root = i;
      for (let k = path.indexOf(i) + 1; k < path.length; k++) {
        const c = path[k]!;
        if (spans[c]!.start_time_unix_nano < spans[root]!.start_time_unix_nano) root = c;
      }
      parent[root] = -1;
    }
    for (const k of path) state[k] = 2;
  }
  return parent;
}

/** A span's duration minus the time covered by at least one of its children (clipped to the span). */
export function selfTime(node: SpanNode, nodes: readonly SpanNode[]): number {
  let covered = 0;
  let runStart = 0;
  let runEnd = -1;
  // Children are sorted by start: merge their intervals as they come.
  for (const c of node.children) {
    const child = nodes[c]!;
    const s = Math.max(child.start, node.start);
    const e = Math.min(child.end, node.end);
    if (e <= s) continue;
    if (runEnd < runStart || s > runEnd) {
      if (runEnd > runStart) covered += runEnd - runStart;
      runStart = s;
      runEnd = e;
    } else if (e > runEnd) runEnd = e;
  }
  if (runEnd > runStart) covered += runEnd - runStart;
  return Math.max(0, node.end - node.start - covered);
}

/**
 * The critical path of each root: from the span's end backwards, the child that ended last (before the
 * point reached) is followed into, then the walk goes on from that child's start; time where the span
 * waited for no child is its own segment. Iterative, so deep chains are fine. `spans` holds every node
 * on the path (a span whose children cover all its time has no segment of its own but is on it).
 */
export function criticalPath(nodes: readonly SpanNode[], roots: readonly number[]): { segments: CriticalSegment[]; spans: number[] } {
  const segments: CriticalSegment[] = [];
  const spans: number[] = [];
  const work: { index: number; limit: number }[] = roots.map((index) => ({ index, limit: nodes[index]!.end }));
  while (work.length > 0) {
    const { index, limit } = work.pop()!;
    spans.push(index);
    const node = nodes[index]!;
    let t = Math.min(node.end, limit);
    const byEnd =
      node.children.length > 1 ? [...node.children].sort((a, b) => nodes[b]!.end - nodes[a]!.end || nodes[b]!.start - nodes[a]!.start) : node.children;
    for (const c of byEnd) {
      if (t <= node.start) break;
      const child = nodes[c]!;
      if (child.start >= t) continue;
      const childEnd = Math.min(child.end, t);
      if (t > childEnd) segments.push({ index, start: childEnd, end: t });
      work.push({ index: c, limit: childEnd });
      t = Math.max(node.start, child.start);
    }
    if (t > node.start) segments.push({ index, start: node.start, end: t });
  }
  segments.sort((a, b) => a.start - b.start || a.index - b.index);
  spans.sort((a, b) => a - b);
  return { segments, spans };
}

/** The node indexes shown as rows when the spans in `collapsed` (span ids) hide their descendants. */
export function visibleRows(model: TraceModel, collapsed: ReadonlySet<string>): number[] {
  const rows: number[] = [];
  const { nodes } = model;
  let i = 0;
  while (i < nodes.length) {
    const node = nodes[i]!;
    rows.push(i);
    i += collapsed.size > 0 && collapsed.has(node.span.span_id) ? node.descendants + 1 : 1;
  }
  return rows;
}

/** The span ids of a node's ancestors, nearest first. */
export function ancestorIds(model: TraceModel, index: number): string[] {
  const ids: string[] = [];
  let p = model.nodes[index]?.parent ?? -1;
  while (p !== -1) {
    const node = model.nodes[p]!;
    ids.push(node.span.span_id);
    p = node.parent;
  }
  return ids;
}

/** The span ids of the spans that have children (to collapse them all). */
export function parentIds(model: TraceModel): string[] {
  return model.nodes.filter((n) => n.children.length > 0).map((n) => n.span.span_id);
}

/** The value of an attribute of a span, or undefined. */
export function attributeOf(span: TraceSpan, key: string): string | undefined {
  for (const [k, v] of span.attributes) if (k === key) return v;
  return undefined;
}

/**
 * What a span ran, for breakdowns and the map: the function id of the engine's `call <fn>` and the SDK's
 * `handle <fn>` spans; the span's name for the rest (a trigger's `GET /users`, a span of the worker's own).
 */
export function operationOf(span: TraceSpan): string {
  if (span.name.startsWith('call ') || span.name.startsWith('handle ')) return attributeOf(span, 'function_id') ?? span.name;
  return span.name;
}
