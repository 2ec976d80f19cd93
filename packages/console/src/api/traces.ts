import { FlintError } from '@flint/sdk';
import type {
  TraceDetailResponse,
  TraceListRequest,
  TraceListResponse,
  TraceLogRecord,
  TraceSpan,
  TraceSummary,
  TracesUnavailableReason,
} from '../api-types.js';
import type { EngineLink } from '../engine-link.js';
import { ApiFailure, badRequest } from '../http/failure.js';
import type { Route } from '../http/router.js';

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;
/** Trees read at once while counting the spans of a page of traces. */
const TREE_CONCURRENCY = 8;
/** A trace whose root ended less than this long ago may still gain spans (workers send theirs in batches, queue deliveries come later). */
const SETTLING_MS = 30_000;
/** How long a trace's counts are reused: while it settles, and once it has. */
const FRESH_SETTLING_MS = 2_000;
const FRESH_SETTLED_MS = 60_000;
/** Traces whose counts are remembered (the oldest looked-at go first). */
const CACHE_SIZE = 5000;

const UNAVAILABLE: Record<TracesUnavailableReason, string> = {
  module_not_loaded: 'flint-observability is not loaded, so the engine keeps no spans: load flint-observability with exporter memory or both',
  memory_exporter_not_enabled: 'flint-observability keeps no spans in memory: load flint-observability with exporter memory or both (and enabled: true)',
};

interface EngineSpanNode extends TraceSpan {
  children: EngineSpanNode[];
}

/** What the console remembers of a trace for its list row: counted from `engine::traces::tree`. */
interface TraceCounts {
  span_count: number;
  error_count: number;
  services: string[];
  /** When counted, and when the trace's root ended (ms). */
  checked_at: number;
  root_end_ms: number;
}

/** Per console (per engine link): trace id → counts, in the order last looked at. */
const countsByLink = new WeakMap<EngineLink, Map<string, TraceCounts>>();

const STRING_FILTERS = ['trace_id', 'service_name', 'name'] as const;
const NUMBER_FILTERS = ['min_duration_ms', 'max_duration_ms', 'start_time', 'end_time'] as const;
const STATUSES = ['ok', 'error', 'unset'];

/** The filters of a POST /_console/traces body, checked, as `engine::traces::list` takes them (absent and empty fields left out). */
export function traceListQuery(
  body: Record<string, unknown>,
): Required<Pick<TraceListRequest, 'offset' | 'limit' | 'sort_by' | 'sort_order'>> & TraceListRequest {
  const query: TraceListRequest = {};
  for (const key of STRING_FILTERS) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw badRequest(`${key} must be a string`);
    const text = v.trim();
    if (text !== '') query[key] = key === 'trace_id' ? text.toLowerCase() : text;
  }
  const status = body.status;
  if (status !== undefined && status !== null && status !== '') {
    if (typeof status !== 'string' || !STATUSES.includes(status.toLowerCase())) throw badRequest(`status must be one of ${STATUSES.join(', ')}`);
    query.status = status.toLowerCase() as TraceListRequest['status'];
  }
  for (const key of NUMBER_FILTERS) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw badRequest(`${key} must be a non-negative number`);
    query[key] = v;
  }
  if (query.min_duration_ms !== undefined && query.max_duration_ms !== undefined && query.min_duration_ms > query.max_duration_ms)
    throw badRequest('min_duration_ms must not exceed max_duration_ms');
  if (query.start_time !== undefined && query.end_time !== undefined && query.start_time > query.end_time)
    throw badRequest('start_time must not be after end_time');
  const attributes = body.attributes;
  if (attributes !== undefined && attributes !== null) {
    const isPair = (p: unknown) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && p[0] !== '' && typeof p[1] === 'string';
    if (!Array.isArray(attributes) || !attributes.every(isPair)) throw badRequest('attributes must be an array of [key, value] string pairs');
    if (attributes.length > 0) query.attributes = attributes as [string, string][];
  }
  for (const key of ['search_all_spans', 'include_internal'] as const) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'boolean') throw badRequest(`${key} must be a boolean`);
    query[key] = v;
  }
  const sortBy = body.sort_by ?? 'start_time';
  if (sortBy !== 'start_time' && sortBy !== 'duration' && sortBy !== 'name') throw badRequest('sort_by must be start_time, duration or name');
  const sortOrder = body.sort_order ?? 'desc';
  if (sortOrder !== 'asc' && sortOrder !== 'desc') throw badRequest('sort_order must be asc or desc');
  const count = (key: 'offset' | 'limit', fallback: number, max: number): number => {
    const v = body[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) throw badRequest(`${key} must be an integer from 0 to ${max}`);
    return v;
  };
  return { ...query, sort_by: sortBy, sort_order: sortOrder, offset: count('offset', 0, 1e9), limit: count('limit', DEFAULT_LIMIT, MAX_LIMIT) };
}

/** Null when the engine keeps spans; else why not (the engine's own message for `memory_exporter_not_enabled`). */
function unavailableOf(err: unknown): { reason: TracesUnavailableReason; detail: string } | null {
  if (err instanceof FlintError && err.code === 'function_not_found') return { reason: 'module_not_loaded', detail: UNAVAILABLE.module_not_loaded };
  if (err instanceof FlintError && err.code === 'memory_exporter_not_enabled')
    return { reason: 'memory_exporter_not_enabled', detail: `${UNAVAILABLE.memory_exporter_not_enabled} (${err.message})` };
  return null;
}

/** The spans of trees, parents before children, without the `children` lists (iterative: a deep chain of calls does not overflow the stack). */
export function flattenTree(roots: EngineSpanNode[]): TraceSpan[] {
  const out: TraceSpan[] = [];
  const stack: EngineSpanNode[] = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]!);
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { children, ...span } = node;
    out.push(span);
    for (let i = (children?.length ?? 0) - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return out;
}

/** Counts the spans, errors and services of trees, the service of `rootService` first. */
function countTree(roots: EngineSpanNode[], rootService: string): Omit<TraceCounts, 'checked_at' | 'root_end_ms'> {
  let spanCount = 0;
  let errorCount = 0;
  const services = new Set<string>([rootService]);
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop()!;
    spanCount++;
    if (node.status === 'error') errorCount++;
    services.add(node.service_name);
    if (node.children) for (const child of node.children) stack.push(child);
  }
  return { span_count: spanCount, error_count: errorCount, services: [...services] };
}

/** Runs `work` on each item, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const run = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
}

/**
 * The span counts of the traces of `roots`: `engine::traces::list` has none, so each trace's tree is read,
 * at most TREE_CONCURRENCY at once, and its counts reused for FRESH_SETTLING_MS while the trace may still
 * grow (SETTLING_MS after its root ended), FRESH_SETTLED_MS after. A list polled every few seconds thus
 * reads each settled trace about once a minute, however large.
 */
async function countsFor(link: EngineLink, roots: TraceSpan[], now: number): Promise<Map<string, TraceCounts | null>> {
  let cache = countsByLink.get(link);
  if (!cache) {
    cache = new Map();
    countsByLink.set(link, cache);
  }
  const result = new Map<string, TraceCounts | null>();
  const toRead = new Map<string, TraceSpan>();
  for (const root of roots) {
    if (result.has(root.trace_id) || toRead.has(root.trace_id)) continue;
    const cached = cache.get(root.trace_id);
    const rootEnd = root.end_time_unix_nano / 1e6;
    if (cached) {
      const settled = cached.checked_at - Math.max(cached.root_end_ms, rootEnd) >= SETTLING_MS;
      if (now - cached.checked_at < (settled ? FRESH_SETTLED_MS : FRESH_SETTLING_MS)) {
        cache.delete(root.trace_id);
        cache.set(root.trace_id, cached);
        result.set(root.trace_id, cached);
        continue;
      }
    }
    toRead.set(root.trace_id, root);
  }
  await eachLimited([...toRead.values()], TREE_CONCURRENCY, async (root) => {
    try {
      const { roots: trees } = await link.call<{ roots: EngineSpanNode[] }>('engine::traces::tree', { trace_id: root.trace_id });
      const counts: TraceCounts = { ...countTree(trees, root.service_name), checked_at: now, root_end_ms: root.end_time_unix_nano / 1e6 };
      cache.delete(root.trace_id);
      cache.set(root.trace_id, counts);
      result.set(root.trace_id, counts);
    } catch {
      result.set(root.trace_id, cache.get(root.trace_id) ?? null);
    }
  });
  while (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return result;
}

function summaryOf(root: TraceSpan, counts: TraceCounts | null | undefined): TraceSummary {
  const services = counts ? [root.service_name, ...counts.services.filter((s) => s !== root.service_name)] : [root.service_name];
  return {
    trace_id: root.trace_id,
    span_id: root.span_id,
    root_name: root.name,
    service_name: root.service_name,
    services,
    duration_ms: (root.end_time_unix_nano - root.start_time_unix_nano) / 1e6,
    status: root.status,
    span_count: counts?.span_count ?? null,
    error_count: counts?.error_count ?? null,
    start_time_ms: root.start_time_unix_nano / 1e6,
  };
}

const TRACE_ID = /^[0-9a-f]{1,64}$/;

interface EnginePage {
  spans: TraceSpan[];
  total: number;
  offset: number;
  limit: number;
}

/** A root span of the console's own change listener (a `…-available` trigger firing it): the console's work, not the user's. */
function isConsoleListener(span: TraceSpan): boolean {
  for (const [key, value] of span.attributes) if (key === 'function_id') return value.startsWith('flint-console.') && value.endsWith('::changed');
  return false;
}

/**
 * `engine::traces::list`, without the traces of the console's own listeners unless `include_internal`
 * (they are registered as internal, and hidden like the engine's own work). Rows are asked from the
 * start and paged here, a few more than needed, more again while listeners' rows fill the page; `total`
 * leaves out the listeners' rows seen (exact whenever every row was read, as with up to 1000 matches).
 */
async function listRoots(link: EngineLink, query: ReturnType<typeof traceListQuery>): Promise<EnginePage> {
  if (query.include_internal) return link.call<EnginePage>('engine::traces::list', query);
  const wanted = query.offset + query.limit;
  let fetch = Math.min(MAX_LIMIT, wanted + 20);
  for (;;) {
    const page = await link.call<EnginePage>('engine::traces::list', { ...query, offset: 0, limit: fetch });
    const kept = page.spans.filter((s) => !isConsoleListener(s));
    const removed = page.spans.length - kept.length;
    const readAll = page.spans.length >= page.total;
    if (kept.length >= wanted || readAll || fetch >= MAX_LIMIT) {
      return { spans: kept.slice(query.offset, wanted), total: page.total - removed, offset: query.offset, limit: query.limit };
    }
    fetch = Math.min(MAX_LIMIT, fetch * 2 + removed);
  }
}

/** The Traces page, through flint-observability's `engine::traces::list|tree` and `engine::logs::list`. */
export const tracesRoutes: Route[] = [
  {
    method: 'POST',
    path: '/_console/traces',
    handler: async ({ link, body }): Promise<TraceListResponse> => {
      const query = traceListQuery(await body());
      let page: EnginePage;
      try {
        page = await listRoots(link, query);
      } catch (err) {
        const why = unavailableOf(err);
        if (why) return { available: false, ...why, traces: [], total: 0, offset: query.offset, limit: query.limit };
        throw err;
      }
      const counts = await countsFor(link, page.spans, Date.now());
      return {
        available: true,
        traces: page.spans.map((root) => summaryOf(root, counts.get(root.trace_id))),
        total: page.total,
        offset: page.offset,
        limit: page.limit,
      };
    },
  },
  {
    method: 'GET',
    path: '/_console/traces/:trace_id',
    handler: async ({ link, params }): Promise<TraceDetailResponse> => {
      const traceId = (params.trace_id ?? '').trim().toLowerCase();
      if (!TRACE_ID.test(traceId)) throw badRequest('the trace id must be hexadecimal (32 digits)');
      let roots: EngineSpanNode[];
      try {
        ({ roots } = await link.call<{ roots: EngineSpanNode[] }>('engine::traces::tree', { trace_id: traceId }, 30_000));
      } catch (err) {
        const why = unavailableOf(err);
        if (why) return { available: false, ...why, trace_id: traceId, spans: [], logs: [], logs_total: 0, logs_available: false };
        throw err;
      }
      if (roots.length === 0)
        throw new ApiFailure(
          404,
          'trace_not_found',
          `no span of trace ${traceId} is kept (it may have been dropped: see memory_max_spans and traces_retention_seconds)`,
        );
      const spans = flattenTree(roots);
      let logs: TraceLogRecord[] = [];
      let logsTotal = 0;
      let logsAvailable = false;
      try {
        const answer = await link.callOptional<{ logs: TraceLogRecord[]; total: number; query?: Record<string, unknown> }>('engine::logs::list', {
          trace_id: traceId,
          limit: MAX_LIMIT,
        });
        // Without a log store the engine answers an empty list without reading the filters (its echoed query has no limit).
        if (answer !== undefined && answer.query !== undefined && 'limit' in answer.query) {
          logs = answer.logs;
          logsTotal = answer.total;
          logsAvailable = true;
        }
      } catch {
        // The trace is still worth showing without its logs.
      }
      return { available: true, trace_id: traceId, spans, logs, logs_total: logsTotal, logs_available: logsAvailable };
    },
  },
];
