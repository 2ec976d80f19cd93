/**
 * The Traces page's URL search params (every filter and selection is a deep link) and the list request
 * they make (pure: no DOM). The filters combine with AND.
 */
import type { TraceListRequest, TraceSpanStatus } from '../../../../../src/api-types.js';

export type TraceView = 'waterfall' | 'flame' | 'services' | 'map';
export type SpanTab = 'info' | 'tags' | 'logs' | 'errors' | 'baggage';
export type TimeRange = '15m' | '1h' | '6h' | '24h' | 'custom';
export type TraceSort = 'newest' | 'oldest' | 'slowest';

export const TRACE_VIEWS: readonly TraceView[] = ['waterfall', 'flame', 'services', 'map'];
export const SPAN_TABS: readonly SpanTab[] = ['info', 'tags', 'logs', 'errors', 'baggage'];
export const TIME_RANGES: readonly TimeRange[] = ['15m', '1h', '6h', '24h', 'custom'];
export const TRACE_SORTS: readonly TraceSort[] = ['newest', 'oldest', 'slowest'];
export const STATUSES: readonly TraceSpanStatus[] = ['ok', 'error', 'unset'];

/** Milliseconds of each relative range. */
export const RANGE_MS: Record<Exclude<TimeRange, 'custom'>, number> = { '15m': 15 * 60_000, '1h': 3_600_000, '6h': 6 * 3_600_000, '24h': 24 * 3_600_000 };

export interface TracesSearch {
  /** Filters. */
  id?: string;
  service?: string;
  name?: string;
  status?: TraceSpanStatus;
  /** Duration range of the root span, ms. */
  min?: number;
  max?: number;
  range?: TimeRange;
  /** Custom range, epoch ms (with `range: custom`). */
  from?: number;
  to?: number;
  /** `key=value` pairs, all required. */
  attr?: string[];
  /** Name and attributes must match the root span (default: any span of the trace). */
  root?: boolean;
  internal?: boolean;
  sort?: TraceSort;
  /** Selection. */
  trace?: string;
  view?: TraceView;
  span?: string;
  tab?: SpanTab;
}

/** The keys that filter the list (the others select). */
export const FILTER_KEYS = ['id', 'service', 'name', 'status', 'min', 'max', 'range', 'from', 'to', 'attr', 'root', 'internal'] as const;

const text = (v: unknown): string | undefined => {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
};
const choice = <T extends string>(v: unknown, choices: readonly T[]): T | undefined => {
  const t = text(v)?.toLowerCase();
  return t !== undefined && (choices as readonly string[]).includes(t) ? (t as T) : undefined;
};
const nonNegative = (v: unknown): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};
/** Epoch ms from a number or a date text (`2026-05-01T10:00`). */
const instant = (v: unknown): number | undefined => {
  const n = nonNegative(v);
  if (n !== undefined) return n;
  if (typeof v !== 'string') return undefined;
  const parsed = Date.parse(v);
  return Number.isFinite(parsed) ? parsed : undefined;
};
const flag = (v: unknown): boolean | undefined => (v === true || v === 'true' || v === '1' || v === 1 ? true : undefined);

/** `key=value` → `[key, value]` (split at the first `=`, the key trimmed); undefined without a key. */
export function parseAttribute(pair: string): [string, string] | undefined {
  const eq = pair.indexOf('=');
  const key = (eq < 0 ? pair : pair.slice(0, eq)).trim();
  if (key === '') return undefined;
  return [key, eq < 0 ? '' : pair.slice(eq + 1).trim()];
}

export const formatAttribute = ([key, value]: [string, string]): string => `${key}=${value}`;

/** Keeps the params the page knows, each of its type; anything else (a bad value, an unknown key) is dropped. */
export function validateTracesSearch(s: Record<string, unknown>): TracesSearch {
  const out: TracesSearch = {};
  const id = text(s.id);
  if (id) out.id = id.toLowerCase();
  const service = text(s.service);
  if (service) out.service = service;
  const name = text(s.name);
  if (name) out.name = name;
  const status = choice(s.status, STATUSES);
  if (status) out.status = status;
  const min = nonNegative(s.min);
  if (min !== undefined) out.min = min;
  const max = nonNegative(s.max);
  if (max !== undefined) out.max = max;
  const range = choice(s.range, TIME_RANGES);
  if (range) out.range = range;
  if (range === 'custom') {
    const from = instant(s.from);
    if (from !== undefined) out.from = from;
    const to = instant(s.to);
    if (to !== undefined) out.to = to;
  }
  const attrs = (Array.isArray(s.attr) ? s.attr : s.attr === undefined ? [] : [s.attr])
    .map(text)
    .filter((a): a is string => a !== undefined && parseAttribute(a) !== undefined);
  if (attrs.length > 0) out.attr = attrs;
  if (flag(s.root)) out.root = true;
  if (flag(s.internal)) out.internal = true;
  const sort = choice(s.sort, TRACE_SORTS);
  if (sort && sort !== 'newest') out.sort = sort;
  const trace = text(s.trace);
  if (trace) out.trace = trace.toLowerCase();
  const view = choice(s.view, TRACE_VIEWS);
  if (view && view !== 'waterfall') out.view = view;
  const span = text(s.span);
  if (span) out.span = span.toLowerCase();
  const tab = choice(s.tab, SPAN_TABS);
  if (tab && tab !== 'info') out.tab = tab;
  return out;
}

/** The time window of the filters, epoch ms (a relative range ends now). */
export function timeWindow(search: TracesSearch, now: number): { start_time?: number; end_time?: number } {
  if (search.range === undefined) return {};
  if (search.range === 'custom') {
    const w: { start_time?: number; end_time?: number } = {};
    if (search.from !== undefined) w.start_time = search.from;
    if (search.to !== undefined) w.end_time = search.to;
    if (w.start_time !== undefined && w.end_time !== undefined && w.start_time > w.end_time) return { start_time: w.end_time, end_time: w.start_time };
    return w;
  }
  return { start_time: now - RANGE_MS[search.range] };
}

/** The body of POST /_console/traces for these params at instant `now`. */
export function listRequest(search: TracesSearch, now: number, limit = 100): TraceListRequest {
  const req: TraceListRequest = { limit, offset: 0 };
  if (search.id) req.trace_id = search.id;
  if (search.service) req.service_name = search.service;
  if (search.name) req.name = search.name;
  if (search.status) req.status = search.status;
  let { min, max } = search;
  if (min !== undefined && max !== undefined && min > max) [min, max] = [max, min];
  if (min !== undefined) req.min_duration_ms = min;
  if (max !== undefined) req.max_duration_ms = max;
  Object.assign(req, timeWindow(search, now));
  const attributes = (search.attr ?? []).map(parseAttribute).filter((a): a is [string, string] => a !== undefined);
  if (attributes.length > 0) req.attributes = attributes;
  if ((search.name || attributes.length > 0) && !search.root) req.search_all_spans = true;
  if (search.internal) req.include_internal = true;
  const sort = search.sort ?? 'newest';
  req.sort_by = sort === 'slowest' ? 'duration' : 'start_time';
  req.sort_order = sort === 'oldest' ? 'asc' : 'desc';
  return req;
}

/** How many filters are set (for "Clear filters"). */
export function activeFilters(search: TracesSearch): number {
  let n = 0;
  for (const key of FILTER_KEYS) {
    if (key === 'from' || key === 'to' || key === 'root') continue;
    const v = search[key];
    if (v !== undefined && !(Array.isArray(v) && v.length === 0)) n += Array.isArray(v) ? v.length : 1;
  }
  return n;
}

/** The params without any filter (the selection and the sort kept). */
export function withoutFilters(search: TracesSearch): TracesSearch {
  const out: TracesSearch = { ...search };
  for (const key of FILTER_KEYS) delete out[key];
  return out;
}

/** `datetime-local` input text of an epoch ms instant, in local time ("2026-05-01T10:00"). */
export function toLocalInput(ms: number | undefined): string {
  if (ms === undefined) return '';
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** Epoch ms of a `datetime-local` input's text (local time), undefined when empty or invalid. */
export function fromLocalInput(value: string): number | undefined {
  if (value.trim() === '') return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}
