import { FlintError } from '@flint/protocol';

/** The input of `listTraces` (`engine::traces::list`). Absent or null fields do not filter. */
export interface TraceListQuery {
  /** Only this trace. */
  trace_id?: string;
  /** Rows skipped, after sorting (default 0). */
  offset?: number;
  /** Rows returned at most (default 100, at most 1000). */
  limit?: number;
  /** Case-insensitive substring of the root span's service name. */
  service_name?: string;
  /** Case-insensitive substring of the root span's name (of any span's, with `search_all_spans`). */
  name?: string;
  /** Case-insensitive substring of the root span's status (`ok`, `error`, `unset`). */
  status?: string;
  /** The root span lasted at least this long (milliseconds). */
  min_duration_ms?: number;
  /** The root span lasted at most this long (milliseconds). */
  max_duration_ms?: number;
  /** The root span overlaps the window from this instant (ms since the epoch). */
  start_time?: number;
  /** The root span overlaps the window up to this instant (ms since the epoch). */
  end_time?: number;
  sort_by?: TraceSortKey;
  sort_order?: 'asc' | 'desc';
  /** [key, value] pairs the root span carries, every one exactly (any one span, with `search_all_spans`). */
  attributes?: [string, string][];
  /** Include the engine's own traces (default false). */
  include_internal?: boolean;
  /** `name` and `attributes` match a trace when any of its spans matches (default false: the root only). */
  search_all_spans?: boolean;
}

export type TraceSortKey = 'start_time' | 'duration' | 'name';

/** A TraceListQuery checked, with the defaults filled in and the text filters lower-cased. */
export interface ParsedTraceListQuery {
  trace_id: string | undefined;
  offset: number;
  limit: number;
  service_name: string | undefined;
  name: string | undefined;
  status: string | undefined;
  min_duration_ms: number | undefined;
  max_duration_ms: number | undefined;
  start_time: number | undefined;
  end_time: number | undefined;
  sort_by: TraceSortKey;
  sort_order: 'asc' | 'desc';
  attributes: [string, string][];
  include_internal: boolean;
  search_all_spans: boolean;
}

export const DEFAULT_TRACE_LIMIT = 100;
export const MAX_TRACE_LIMIT = 1000;

const SORT_KEYS: readonly TraceSortKey[] = ['start_time', 'duration', 'name'];
const SORT_ORDERS = ['asc', 'desc'] as const;

/** Checks a `listTraces` input: a wrong type throws FlintError('invalid_payload') naming the field. Unknown fields are ignored. */
export function parseTraceListQuery(input: unknown): ParsedTraceListQuery {
  if (input === undefined || input === null) input = {};
  if (typeof input !== 'object' || Array.isArray(input)) throw invalid('the query must be an object');
  const q = input as Record<string, unknown>;
  const parsed: ParsedTraceListQuery = {
    trace_id: optionalString(q, 'trace_id'),
    offset: optionalCount(q, 'offset') ?? 0,
    limit: Math.min(optionalCount(q, 'limit') ?? DEFAULT_TRACE_LIMIT, MAX_TRACE_LIMIT),
    service_name: optionalString(q, 'service_name')?.toLowerCase(),
    name: optionalString(q, 'name')?.toLowerCase(),
    status: optionalString(q, 'status')?.toLowerCase(),
    min_duration_ms: optionalNumber(q, 'min_duration_ms', 0),
    max_duration_ms: optionalNumber(q, 'max_duration_ms', 0),
    start_time: optionalNumber(q, 'start_time'),
    end_time: optionalNumber(q, 'end_time'),
    sort_by: optionalChoice(q, 'sort_by', SORT_KEYS) ?? 'start_time',
    sort_order: optionalChoice(q, 'sort_order', SORT_ORDERS) ?? 'asc',
    attributes: optionalPairs(q, 'attributes') ?? [],
    include_internal: optionalBoolean(q, 'include_internal') ?? false,
    search_all_spans: optionalBoolean(q, 'search_all_spans') ?? false,
  };
  if (parsed.min_duration_ms !== undefined && parsed.max_duration_ms !== undefined && parsed.min_duration_ms > parsed.max_duration_ms)
    throw invalid('min_duration_ms must not exceed max_duration_ms');
  if (parsed.start_time !== undefined && parsed.end_time !== undefined && parsed.start_time > parsed.end_time)
    throw invalid('start_time must not be after end_time');
  return parsed;
}

function invalid(reason: string): FlintError {
  return new FlintError('invalid_payload', reason);
}

function present(q: Record<string, unknown>, field: string): unknown {
  const value = q[field];
  return value === null ? undefined : value;
}

function optionalString(q: Record<string, unknown>, field: string): string | undefined {
  const value = present(q, field);
  if (value !== undefined && typeof value !== 'string') throw invalid(`${field} must be a string`);
  return value;
}

function optionalBoolean(q: Record<string, unknown>, field: string): boolean | undefined {
  const value = present(q, field);
  if (value !== undefined && typeof value !== 'boolean') throw invalid(`${field} must be a boolean`);
  return value;
}

function optionalCount(q: Record<string, unknown>, field: string): number | undefined {
  const value = present(q, field);
  if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 0))
    throw invalid(`${field} must be a non-negative integer`);
  return value;
}

function optionalNumber(q: Record<string, unknown>, field: string, min?: number): number | undefined {
  const value = present(q, field);
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`${field} must be a finite number`);
  if (min !== undefined && value < min) throw invalid(`${field} must be at least ${min}`);
  return value;
}

function optionalChoice<T extends string>(q: Record<string, unknown>, field: string, choices: readonly T[]): T | undefined {
  const value = present(q, field);
  if (value !== undefined && !choices.includes(value as T)) throw invalid(`${field} must be one of ${choices.join(', ')}`);
  return value as T | undefined;
}

function optionalPairs(q: Record<string, unknown>, field: string): [string, string][] | undefined {
  const value = present(q, field);
  if (value === undefined) return undefined;
  const isPair = (pair: unknown) => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string';
  if (!Array.isArray(value) || !value.every(isPair)) throw invalid(`${field} must be an array of [key, value] string pairs`);
  return value as [string, string][];
}
