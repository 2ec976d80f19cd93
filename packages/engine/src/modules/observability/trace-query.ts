import { FlintError } from '@flint/protocol';
import type { Span } from './span.js';
import { parentIndexes } from './span-parents.js';
import type { SpanStore } from './span-store.js';
import { type ParsedTraceListQuery, parseTraceListQuery } from './trace-list-query.js';

export type { TraceListQuery, TraceSortKey } from './trace-list-query.js';

/** A page of root spans, one a row, and how many matched in all. */
export interface TraceList {
  spans: Span[];
  /** The rows matching, before `offset` and `limit`. */
  total: number;
  offset: number;
  /** The limit applied (a limit above 1000 reads as 1000). */
  limit: number;
}

/** A span with the spans that ran under it, earliest start first. */
export interface SpanTreeNode extends Span {
  children: SpanTreeNode[];
}

/**
 * The root spans of the traces held that match `input` (see TraceListQuery; every filter must hold), sorted
 * and paged. A root is a span without a parent or whose parent is not held (see parentIndexes), so one trace
 * can give several rows. The engine's own spans (internal) are left out unless `include_internal`. `input`
 * is a TraceListQuery; anything else throws FlintError('invalid_payload') naming the field.
 */
export function listTraces(store: SpanStore, input: unknown): TraceList {
  const query = parseTraceListQuery(input);
  const rows: Span[] = [];
  const traceIds = query.trace_id === undefined ? store.traceIds() : [query.trace_id];
  for (const traceId of traceIds) {
    const spans = store.byTrace(traceId);
    if (query.search_all_spans && !traceMatchesSearch(spans, query)) continue;
    const parents = parentIndexes(spans);
    for (let i = 0; i < spans.length; i++) if (parents[i] === -1 && rootMatches(spans[i]!, query)) rows.push(spans[i]!);
  }
  const direction = query.sort_order === 'asc' ? 1 : -1;
  const primary = SORT_KEYS[query.sort_by];
  rows.sort((a, b) => direction * (primary(a, b) || a.start_time_unix_nano - b.start_time_unix_nano || compareText(a.span_id, b.span_id)));
  return { spans: rows.slice(query.offset, query.offset + query.limit), total: rows.length, offset: query.offset, limit: query.limit };
}

/**
 * The spans of a trace as trees: each span under its parent, the spans whose parent is not held (and one
 * span of each loop of parents) as roots, siblings and roots by start time. `{ roots: [] }` for an unknown trace.
 */
export function traceTree(store: SpanStore, traceId: string): { roots: SpanTreeNode[] } {
  if (typeof traceId !== 'string') throw new FlintError('invalid_payload', 'trace_id must be a string');
  const spans = store.byTrace(traceId);
  const parents = parentIndexes(spans);
  const nodes: SpanTreeNode[] = spans.map((span) => ({ ...span, children: [] }));
  const roots: SpanTreeNode[] = [];
  for (let i = 0; i < nodes.length; i++) {
    const parent = parents[i]!;
    (parent === -1 ? roots : nodes[parent]!.children).push(nodes[i]!);
  }
  const byStart = (a: Span, b: Span) => a.start_time_unix_nano - b.start_time_unix_nano;
  roots.sort(byStart);
  for (const node of nodes) if (node.children.length > 1) node.children.sort(byStart);
  return { roots };
}

/**
 * True for a span of the engine's own work: kind `internal`, or a function id under `engine::`. (`flint::`
 * functions such as flint::durable::publish are work an application asks for: their traces show.)
 */
export function isInternalSpan(span: Span): boolean {
  for (const [key, value] of span.attributes) {
    if (key === 'flint.function.kind' && value === 'internal') return true;
    if (key === 'function_id' && value.startsWith('engine::')) return true;
  }
  return false;
}

const durationOf = (span: Span) => span.end_time_unix_nano - span.start_time_unix_nano;

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const SORT_KEYS: Record<ParsedTraceListQuery['sort_by'], (a: Span, b: Span) => number> = {
  start_time: (a, b) => a.start_time_unix_nano - b.start_time_unix_nano,
  duration: (a, b) => durationOf(a) - durationOf(b),
  name: (a, b) => compareText(a.name, b.name),
};

/** With `search_all_spans`: some span has the name searched, and some span carries every attribute asked. */
function traceMatchesSearch(spans: Span[], query: ParsedTraceListQuery): boolean {
  const name = query.name;
  if (name !== undefined && !spans.some((span) => span.name.toLowerCase().includes(name))) return false;
  return query.attributes.length === 0 || spans.some((span) => hasAttributes(span, query.attributes));
}

function rootMatches(root: Span, query: ParsedTraceListQuery): boolean {
  if (!query.include_internal && isInternalSpan(root)) return false;
  if (query.service_name !== undefined && !root.service_name.toLowerCase().includes(query.service_name)) return false;
  if (query.status !== undefined && !root.status.toLowerCase().includes(query.status)) return false;
  if (!query.search_all_spans) {
    if (query.name !== undefined && !root.name.toLowerCase().includes(query.name)) return false;
    if (!hasAttributes(root, query.attributes)) return false;
  }
  const durationMs = durationOf(root) / 1e6;
  if (query.min_duration_ms !== undefined && durationMs < query.min_duration_ms) return false;
  if (query.max_duration_ms !== undefined && durationMs > query.max_duration_ms) return false;
  // Overlap with [start_time, end_time], both ends included.
  if (query.start_time !== undefined && root.end_time_unix_nano < query.start_time * 1e6) return false;
  if (query.end_time !== undefined && root.start_time_unix_nano > query.end_time * 1e6) return false;
  return true;
}

function hasAttributes(span: Span, wanted: [string, string][]): boolean {
  return wanted.every(([key, value]) => span.attributes.some(([k, v]) => k === key && v === value));
}
