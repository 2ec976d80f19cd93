import { describe, expect, test } from 'vitest';
import type { Span } from '../../dist/modules/observability/span.js';
import { SpanStore } from '../../dist/modules/observability/span-store.js';
import { type SpanTreeNode, isInternalSpan, listTraces, traceTree } from '../../dist/modules/observability/trace-query.js';
import { T0_MS, span } from '../support/observability/spans.js';
import { thrownBy } from '../support/util.js';

/**
 * The traces every listTraces test reads (times in ms after T0):
 *
 *   get     GET /orders        api      ok     0–120    http.method=GET http.route=/orders
 *             db.query         db       ok     10–50    db.system=postgres
 *             cache.get        api      ok     60–61
 *   post    POST /orders       api      error  200–700  http.method=POST
 *             payments.charge  payments error  250–650  customer=c-42
 *   queue   process-queue      worker   unset  1000–1010 queue=emails function_id=my_engine::drain
 *   orphan  (parent gone)
 *             late-callback    api      error  1500–1600
 *               late-child     api      ok     1510–1520
 *             retry-callback   Billing  ok     1700–1748
 *   and the engine's own: engine::state::set (function_id engine::…), housekeeping (kind internal),
 *   engine::cron::tick (function_id engine::…).
 *
 * Times are nanoseconds in a JS number: the instants used at a duration boundary are multiples of 4 ms,
 * which the number holds exactly (T0 is a multiple of 2^11 ms).
 */
function fixture(): SpanStore {
  const store = new SpanStore();
  const spans: Span[] = [
    span({
      trace_id: 'get',
      span_id: 'get-root',
      name: 'GET /orders',
      service: 'api',
      status: 'ok',
      start: 0,
      end: 120,
      attributes: [
        ['http.method', 'GET'],
        ['http.route', '/orders'],
      ],
    }),
    span({
      trace_id: 'get',
      span_id: 'get-db',
      parent: 'get-root',
      name: 'db.query',
      service: 'db',
      status: 'ok',
      start: 10,
      end: 50,
      attributes: [['db.system', 'postgres']],
    }),
    span({ trace_id: 'get', span_id: 'get-cache', parent: 'get-root', name: 'cache.get', service: 'api', status: 'ok', start: 60, end: 61 }),
    span({
      trace_id: 'post',
      span_id: 'post-root',
      name: 'POST /orders',
      service: 'api',
      status: 'error',
      start: 200,
      end: 700,
      attributes: [['http.method', 'POST']],
    }),
    span({
      trace_id: 'post',
      span_id: 'post-pay',
      parent: 'post-root',
      name: 'payments.charge',
      service: 'payments',
      status: 'error',
      start: 250,
      end: 650,
      attributes: [['customer', 'c-42']],
    }),
    span({
      trace_id: 'engine',
      span_id: 'engine-root',
      name: 'engine::state::set',
      service: 'flint',
      status: 'ok',
      start: 300,
      end: 301,
      attributes: [['function_id', 'engine::state::set']],
    }),
    span({
      trace_id: 'house',
      span_id: 'house-root',
      name: 'housekeeping',
      service: 'api',
      status: 'ok',
      start: 400,
      end: 405,
      attributes: [['flint.function.kind', 'internal']],
    }),
    span({
      trace_id: 'tick',
      span_id: 'tick-root',
      name: 'engine::cron::tick',
      service: 'flint',
      status: 'ok',
      start: 450,
      end: 451,
      attributes: [['function_id', 'engine::cron::tick']],
    }),
    span({
      trace_id: 'queue',
      span_id: 'queue-root',
      name: 'process-queue',
      service: 'worker',
      status: 'unset',
      start: 1000,
      end: 1010,
      attributes: [
        ['queue', 'emails'],
        ['function_id', 'my_engine::drain'],
      ],
    }),
    span({ trace_id: 'orphan', span_id: 'late', parent: 'gone', name: 'late-callback', service: 'api', status: 'error', start: 1500, end: 1600 }),
    span({ trace_id: 'orphan', span_id: 'late-child', parent: 'late', name: 'late-child', service: 'api', status: 'ok', start: 1510, end: 1520 }),
    span({ trace_id: 'orphan', span_id: 'retry', parent: 'also-gone', name: 'retry-callback', service: 'Billing', status: 'ok', start: 1700, end: 1748 }),
  ];
  for (const s of spans) store.add(s);
  return store;
}

const store = fixture();

/** The span ids listTraces returns for `query` over the fixture, in order. */
const list = (query: unknown): string[] => listTraces(store, query).spans.map((s) => s.span_id);

/** The user roots of the fixture, by start time. */
const USER_ROOTS = ['get-root', 'post-root', 'queue-root', 'late', 'retry'];

describe('listTraces: which spans are rows', () => {
  test('with no filter: every root span but the engine’s own, by start time; total, offset and limit reported', () => {
    const result = listTraces(store, {});
    expect(result.spans.map((s) => s.span_id)).toEqual(USER_ROOTS);
    expect(result).toMatchObject({ total: 5, offset: 0, limit: 100 });
    expect(list(undefined)).toEqual(USER_ROOTS);
  });

  test('children never are rows; a span whose parent is not held is a root, so a trace can give several rows', () => {
    expect(list({ trace_id: 'orphan' })).toEqual(['late', 'retry']);
    expect(list({ name: 'child' })).toEqual([]);
    expect(list({ name: 'db.query' })).toEqual([]);
  });

  test('a root whose parent was evicted becomes a row', () => {
    const small = new SpanStore({ max_spans: 2 });
    small.add(span({ trace_id: 't', span_id: 'root' }));
    small.add(span({ trace_id: 't', span_id: 'child', parent: 'root', start: 1 }));
    expect(listTraces(small, {}).spans.map((s) => s.span_id)).toEqual(['root']);
    small.add(span({ trace_id: 't', span_id: 'grandchild', parent: 'child', start: 2 })); // evicts root
    expect(listTraces(small, {}).spans.map((s) => s.span_id)).toEqual(['child']);
  });

  test('trace_id: the roots of that trace only; an unknown trace gives nothing', () => {
    expect(list({ trace_id: 'post' })).toEqual(['post-root']);
    expect(listTraces(store, { trace_id: 'missing' })).toEqual({ spans: [], total: 0, offset: 0, limit: 100 });
  });

  test('include_internal: the engine’s own traces (kind internal, function id engine::) only when asked', () => {
    expect(list({ include_internal: true })).toEqual(['get-root', 'post-root', 'engine-root', 'house-root', 'tick-root', 'queue-root', 'late', 'retry']);
    expect(list({ include_internal: false })).toEqual(USER_ROOTS);
    expect(list({ trace_id: 'engine' })).toEqual([]);
    expect(list({ trace_id: 'engine', include_internal: true })).toEqual(['engine-root']);
  });

  test('isInternalSpan: the prefix must start the function id; other kinds are not internal', () => {
    const withAttributes = (attributes: [string, string][]) => isInternalSpan(span({ trace_id: 't', span_id: 's', attributes }));
    expect(withAttributes([['function_id', 'engine::queue::push']])).toBe(true);
    // flint:: functions (publish, redrive, Trigger Now) are work an application asks for: not internal.
    expect(withAttributes([['function_id', 'flint::durable::publish']])).toBe(false);
    expect(withAttributes([['flint.function.kind', 'internal']])).toBe(true);
    expect(withAttributes([['function_id', 'my_engine::drain']])).toBe(false);
    expect(withAttributes([['function_id', 'engine:single-colon']])).toBe(false);
    expect(withAttributes([['flint.function.kind', 'user']])).toBe(false);
    expect(withAttributes([['component', 'engine::x']])).toBe(false);
    expect(withAttributes([])).toBe(false);
  });
});

describe('listTraces: each filter', () => {
  test('service_name: a case-insensitive substring of the root’s service', () => {
    expect(list({ service_name: 'API' })).toEqual(['get-root', 'post-root', 'late']);
    expect(list({ service_name: 'billing' })).toEqual(['retry']);
    expect(list({ service_name: 'ork' })).toEqual(['queue-root']);
    expect(list({ service_name: 'payments' })).toEqual([]); // a child's service
  });

  test('name: a case-insensitive substring of the root’s name', () => {
    expect(list({ name: 'orders' })).toEqual(['get-root', 'post-root']);
    expect(list({ name: 'POST /ORD' })).toEqual(['post-root']);
    expect(list({ name: 'callback' })).toEqual(['late', 'retry']);
    expect(list({ name: 'charge' })).toEqual([]);
  });

  test('status: a case-insensitive substring of the root’s status', () => {
    expect(list({ status: 'error' })).toEqual(['post-root', 'late']);
    expect(list({ status: 'OK' })).toEqual(['get-root', 'retry']);
    expect(list({ status: 'uns' })).toEqual(['queue-root']);
    expect(list({ status: 'failed' })).toEqual([]);
  });

  test('min_duration_ms and max_duration_ms: the root’s duration, both ends included', () => {
    expect(list({ min_duration_ms: 100 })).toEqual(['get-root', 'post-root', 'late']);
    expect(list({ min_duration_ms: 100.5 })).toEqual(['get-root', 'post-root']);
    expect(list({ max_duration_ms: 50 })).toEqual(['queue-root', 'retry']);
    expect(list({ max_duration_ms: 48 })).toEqual(['queue-root', 'retry']);
    expect(list({ max_duration_ms: 47.9 })).toEqual(['queue-root']);
    expect(list({ max_duration_ms: 9.9 })).toEqual([]);
    expect(list({ min_duration_ms: 120, max_duration_ms: 120 })).toEqual(['get-root']);
    expect(list({ min_duration_ms: 11, max_duration_ms: 99 })).toEqual(['retry']);
  });

  test('start_time and end_time: the root overlaps the window, both ends included', () => {
    expect(list({ start_time: T0_MS + 100, end_time: T0_MS + 250 })).toEqual(['get-root', 'post-root']);
    expect(list({ start_time: T0_MS + 120, end_time: T0_MS + 200 })).toEqual(['get-root', 'post-root']); // touching both ends
    expect(list({ start_time: T0_MS + 121, end_time: T0_MS + 199 })).toEqual([]);
    expect(list({ start_time: T0_MS + 800 })).toEqual(['queue-root', 'late', 'retry']);
    expect(list({ end_time: T0_MS + 150 })).toEqual(['get-root']);
    expect(list({ start_time: T0_MS + 1005, end_time: T0_MS + 1005 })).toEqual(['queue-root']); // an instant inside a span
  });

  test('attributes: every pair must be on the root, keys and values matched exactly', () => {
    expect(list({ attributes: [['http.method', 'GET']] })).toEqual(['get-root']);
    expect(
      list({
        attributes: [
          ['http.method', 'GET'],
          ['http.route', '/orders'],
        ],
      }),
    ).toEqual(['get-root']);
    expect(
      list({
        attributes: [
          ['http.method', 'GET'],
          ['http.route', '/other'],
        ],
      }),
    ).toEqual([]);
    expect(list({ attributes: [['http.method', 'get']] })).toEqual([]);
    expect(list({ attributes: [['http.method', 'GE']] })).toEqual([]);
    expect(list({ attributes: [['HTTP.method', 'GET']] })).toEqual([]);
    expect(list({ attributes: [['db.system', 'postgres']] })).toEqual([]); // a child's attribute
    expect(list({ attributes: [] })).toEqual(USER_ROOTS);
  });

  test('null fields and unknown fields do not filter', () => {
    expect(list({ service_name: null, limit: null, attributes: null, sort_by: null, shoe_size: 44 })).toEqual(USER_ROOTS);
  });
});

describe('listTraces: search_all_spans', () => {
  test('name matches a trace when any of its spans has it; the root is the row', () => {
    expect(list({ name: 'charge', search_all_spans: true })).toEqual(['post-root']);
    expect(list({ name: 'DB.QUERY', search_all_spans: true })).toEqual(['get-root']);
    expect(list({ name: 'orders', search_all_spans: true })).toEqual(['get-root', 'post-root']);
    expect(list({ name: 'late-child', search_all_spans: true })).toEqual(['late', 'retry']); // every root of the trace
    expect(list({ name: 'nowhere', search_all_spans: true })).toEqual([]);
  });

  test('attributes match a trace when one of its spans carries every pair', () => {
    expect(list({ attributes: [['db.system', 'postgres']], search_all_spans: true })).toEqual(['get-root']);
    expect(list({ attributes: [['customer', 'c-42']], search_all_spans: true })).toEqual(['post-root']);
    // The two pairs are on different spans of the trace: no single span carries both.
    expect(
      list({
        attributes: [
          ['db.system', 'postgres'],
          ['http.method', 'GET'],
        ],
        search_all_spans: true,
      }),
    ).toEqual([]);
  });

  test('the other filters still apply to the root', () => {
    expect(list({ name: 'charge', status: 'ok', search_all_spans: true })).toEqual([]);
    expect(list({ name: 'charge', service_name: 'api', status: 'error', search_all_spans: true })).toEqual(['post-root']);
    expect(list({ name: 'db', max_duration_ms: 50, search_all_spans: true })).toEqual([]);
    expect(list({ name: 'state::set', search_all_spans: true })).toEqual([]);
    expect(list({ name: 'state::set', search_all_spans: true, include_internal: true })).toEqual(['engine-root']);
  });
});

describe('listTraces: filters combined', () => {
  const all = {
    service_name: 'api',
    status: 'error',
    min_duration_ms: 400,
    max_duration_ms: 600,
    attributes: [['http.method', 'POST']],
    start_time: T0_MS + 650,
    end_time: T0_MS + 5_000,
  };

  test('every filter must hold: the one root meeting them all', () => {
    expect(list(all)).toEqual(['post-root']);
  });

  test.each([
    ['service_name', 'worker'],
    ['status', 'ok'],
    ['min_duration_ms', 501],
    ['max_duration_ms', 499],
    ['attributes', [['http.method', 'GET']]],
    ['start_time', T0_MS + 701],
    ['end_time', T0_MS + 199],
    ['name', 'GET'],
    ['trace_id', 'get'],
  ])('changing %s alone leaves nothing', (field, value) => {
    const query: Record<string, unknown> = { ...all, [field]: value };
    if (field === 'start_time') query.end_time = T0_MS + 5_000;
    if (field === 'end_time') query.start_time = T0_MS + 100;
    expect(list(query)).toEqual([]);
  });

  test('service and status together narrow what each allows', () => {
    expect(list({ service_name: 'api', status: 'ok' })).toEqual(['get-root']);
    expect(list({ service_name: 'api', status: 'error', min_duration_ms: 150 })).toEqual(['post-root']);
    expect(list({ service_name: 'api', status: 'error', start_time: T0_MS + 1000 })).toEqual(['late']);
  });
});

describe('listTraces: sorting', () => {
  test.each([
    ['start_time', 'asc', ['get-root', 'post-root', 'queue-root', 'late', 'retry']],
    ['start_time', 'desc', ['retry', 'late', 'queue-root', 'post-root', 'get-root']],
    // Durations: get 120, post 500, queue 10, late 100, retry 48.
    ['duration', 'asc', ['queue-root', 'retry', 'late', 'get-root', 'post-root']],
    ['duration', 'desc', ['post-root', 'get-root', 'late', 'retry', 'queue-root']],
    // Names: GET /orders, POST /orders, process-queue, late-callback, retry-callback (code unit order: capitals first).
    ['name', 'asc', ['get-root', 'post-root', 'late', 'queue-root', 'retry']],
    ['name', 'desc', ['retry', 'queue-root', 'late', 'post-root', 'get-root']],
  ])('sort_by %s, %s', (sortBy, sortOrder, expected) => {
    expect(list({ sort_by: sortBy, sort_order: sortOrder })).toEqual(expected);
  });

  test('the defaults are start_time ascending', () => {
    expect(list({ sort_by: 'start_time' })).toEqual(list({}));
    expect(list({ sort_order: 'asc' })).toEqual(list({}));
    expect(list({ sort_order: 'desc' })).toEqual([...USER_ROOTS].reverse());
  });

  test('ties fall back to start time, then span id, in the order asked', () => {
    const tied = new SpanStore();
    tied.add(span({ trace_id: 'x', span_id: 'b', name: 'same', start: 8, end: 24 }));
    tied.add(span({ trace_id: 'y', span_id: 'c', name: 'same', start: 0, end: 16 }));
    tied.add(span({ trace_id: 'z', span_id: 'a', name: 'same', start: 8, end: 24 }));
    const order = (query: Record<string, unknown>) => listTraces(tied, query).spans.map((s) => s.span_id);
    expect(order({ sort_by: 'name' })).toEqual(['c', 'a', 'b']);
    expect(order({ sort_by: 'name', sort_order: 'desc' })).toEqual(['b', 'a', 'c']);
    expect(order({ sort_by: 'duration' })).toEqual(['c', 'a', 'b']);
    expect(order({ sort_by: 'start_time', sort_order: 'desc' })).toEqual(['b', 'a', 'c']);
  });
});

describe('listTraces: paging', () => {
  test('offset and limit cut the sorted rows; total counts them all', () => {
    expect(listTraces(store, { offset: 1, limit: 2 })).toMatchObject({ total: 5, offset: 1, limit: 2 });
    expect(list({ offset: 1, limit: 2 })).toEqual(['post-root', 'queue-root']);
    expect(list({ offset: 4, limit: 2 })).toEqual(['retry']);
    expect(list({ offset: 1, limit: 2, sort_order: 'desc' })).toEqual(['late', 'queue-root']);
    expect(listTraces(store, { offset: 10 })).toEqual({ spans: [], total: 5, offset: 10, limit: 100 });
    expect(listTraces(store, { limit: 0 })).toEqual({ spans: [], total: 5, offset: 0, limit: 0 });
  });

  test('the pages of a filtered list, put together, are the whole list', () => {
    const query = { service_name: 'api', include_internal: true, sort_by: 'duration', sort_order: 'desc' };
    const whole = list(query);
    const pages = [0, 2].flatMap((offset) => list({ ...query, offset, limit: 2 }));
    expect(whole).toEqual(['post-root', 'get-root', 'late', 'house-root']);
    expect(pages).toEqual(whole);
    expect(listTraces(store, { ...query, limit: 1 }).total).toBe(4);
  });

  test('limit defaults to 100 and reads as 1000 above that', () => {
    const many = new SpanStore();
    for (let i = 0; i < 1_500; i++) many.add(span({ trace_id: `t${i}`, span_id: `s${i}`, start: i }));
    const byDefault = listTraces(many, {});
    expect(byDefault.spans).toHaveLength(100);
    expect(byDefault.total).toBe(1_500);
    const capped = listTraces(many, { limit: 5_000, offset: 100 });
    expect(capped.limit).toBe(1_000);
    expect(capped.spans).toHaveLength(1_000);
    expect(capped.spans[0]!.span_id).toBe('s100');
    expect(capped.total).toBe(1_500);
  });
});

describe('listTraces: input checks', () => {
  test.each([
    ['a string', 'x', 'the query must be an object'],
    ['an array', [], 'the query must be an object'],
    ['trace_id', { trace_id: 7 }, 'trace_id must be a string'],
    ['offset < 0', { offset: -1 }, 'offset must be a non-negative integer'],
    ['offset as text', { offset: '2' }, 'offset must be a non-negative integer'],
    ['limit < 0', { limit: -5 }, 'limit must be a non-negative integer'],
    ['limit fractional', { limit: 1.5 }, 'limit must be a non-negative integer'],
    ['service_name', { service_name: 5 }, 'service_name must be a string'],
    ['name', { name: ['GET'] }, 'name must be a string'],
    ['status', { status: true }, 'status must be a string'],
    ['min_duration_ms as text', { min_duration_ms: '10' }, 'min_duration_ms must be a finite number'],
    ['min_duration_ms < 0', { min_duration_ms: -1 }, 'min_duration_ms must be at least 0'],
    ['max_duration_ms NaN', { max_duration_ms: Number.NaN }, 'max_duration_ms must be a finite number'],
    ['min above max', { min_duration_ms: 10, max_duration_ms: 5 }, 'min_duration_ms must not exceed max_duration_ms'],
    ['start_time as text', { start_time: '2026-01-01' }, 'start_time must be a finite number'],
    ['end_time infinite', { end_time: Number.POSITIVE_INFINITY }, 'end_time must be a finite number'],
    ['start after end', { start_time: 10, end_time: 5 }, 'start_time must not be after end_time'],
    ['sort_by', { sort_by: 'size' }, 'sort_by must be one of start_time, duration, name'],
    ['sort_order', { sort_order: 'ASC' }, 'sort_order must be one of asc, desc'],
    ['attributes as text', { attributes: 'a=b' }, 'attributes must be an array of [key, value] string pairs'],
    ['attributes, a lone key', { attributes: [['a']] }, 'attributes must be an array of [key, value] string pairs'],
    ['attributes, a number', { attributes: [['a', 1]] }, 'attributes must be an array of [key, value] string pairs'],
    ['attributes, an object', { attributes: [{ key: 'a', value: 'b' }] }, 'attributes must be an array of [key, value] string pairs'],
    ['include_internal', { include_internal: 'yes' }, 'include_internal must be a boolean'],
    ['search_all_spans', { search_all_spans: 1 }, 'search_all_spans must be a boolean'],
  ])('%s is refused', (_label, query, message) => {
    const err = thrownBy(() => listTraces(store, query));
    expect(err.code).toBe('invalid_payload');
    expect(err.message).toBe(message);
  });
});

/** A tree as nested span ids: `id` or `[id, ...children]`. */
type Shape = string | [string, ...Shape[]];
const shape = (node: SpanTreeNode): Shape => (node.children.length === 0 ? node.span_id : [node.span_id, ...node.children.map(shape)]);
const shapeOf = (s: SpanStore, traceId: string): Shape[] => traceTree(s, traceId).roots.map(shape);

describe('traceTree', () => {
  test('each span under its parent, siblings by start time whatever order they came in', () => {
    const s = new SpanStore();
    s.add(span({ trace_id: 't', span_id: 'c2', parent: 'root', start: 30 }));
    s.add(span({ trace_id: 't', span_id: 'g1', parent: 'c1', start: 15 }));
    s.add(span({ trace_id: 't', span_id: 'root', start: 0, end: 100 }));
    s.add(span({ trace_id: 't', span_id: 'c1', parent: 'root', start: 10 }));
    s.add(span({ trace_id: 't', span_id: 'c0', parent: 'root', start: 5 }));
    s.add(span({ trace_id: 't', span_id: 'g0', parent: 'c1', start: 12 }));
    s.add(span({ trace_id: 'other', span_id: 'elsewhere', parent: 'root', start: 1 }));
    expect(shapeOf(s, 't')).toEqual([['root', 'c0', ['c1', 'g0', 'g1'], 'c2']]);
  });

  test('the nodes carry every field of their span', () => {
    const { roots } = traceTree(store, 'get');
    const [root] = roots;
    const { children, ...fields } = root!;
    expect(fields).toEqual(store.byTrace('get')[0]);
    expect(children.map((c) => c.name)).toEqual(['db.query', 'cache.get']);
  });

  test('spans whose parent is not held are roots, by start time, with their own children', () => {
    expect(shapeOf(store, 'orphan')).toEqual([['late', 'late-child'], 'retry']);
    const s = new SpanStore();
    s.add(span({ trace_id: 't', span_id: 'b', parent: 'missing-1', start: 20 }));
    s.add(span({ trace_id: 't', span_id: 'a', parent: 'missing-2', start: 10 }));
    s.add(span({ trace_id: 't', span_id: 'a-kid', parent: 'a', start: 11 }));
    expect(shapeOf(s, 't')).toEqual([['a', 'a-kid'], 'b']);
  });

  test('an unknown trace gives no roots; a trace id that is not a string is refused', () => {
    expect(traceTree(store, 'missing')).toEqual({ roots: [] });
    const err = thrownBy(() => traceTree(store, 42 as unknown as string));
    expect(err.code).toBe('invalid_payload');
    expect(err.message).toBe('trace_id must be a string');
  });

  test('a loop of parents is broken at its earliest-starting span, which becomes a root (listTraces agrees)', () => {
    const s = new SpanStore();
    s.add(span({ trace_id: 'loop', span_id: 'a', parent: 'b', start: 20 }));
    s.add(span({ trace_id: 'loop', span_id: 'b', parent: 'c', start: 10 }));
    s.add(span({ trace_id: 'loop', span_id: 'c', parent: 'a', start: 30 }));
    s.add(span({ trace_id: 'loop', span_id: 'leaf', parent: 'a', start: 25 }));
    expect(shapeOf(s, 'loop')).toEqual([['b', ['a', 'leaf', 'c']]]);
    expect(listTraces(s, { trace_id: 'loop' }).spans.map((x) => x.span_id)).toEqual(['b']);
  });

  test('a span that is its own parent is a root', () => {
    const s = new SpanStore();
    s.add(span({ trace_id: 'self', span_id: 'me', parent: 'me', start: 0 }));
    s.add(span({ trace_id: 'self', span_id: 'kid', parent: 'me', start: 1 }));
    expect(shapeOf(s, 'self')).toEqual([['me', 'kid']]);
    expect(listTraces(s, {}).spans.map((x) => x.span_id)).toEqual(['me']);
  });

  test('deep chains and long loops are handled without recursion', () => {
    // Far deeper than a recursive walk could go (the stack gives out near 10,000 frames).
    const depth = 30_000;
    const s = new SpanStore({ max_spans: 2 * depth });
    for (let i = 0; i < depth; i++) s.add(span({ trace_id: 'chain', span_id: `c${i}`, parent: i === 0 ? null : `c${i - 1}`, start: i }));
    // A loop of `depth` spans: l0 under l{depth-1}, each other under the one before.
    for (let i = 0; i < depth; i++) s.add(span({ trace_id: 'ring', span_id: `l${i}`, parent: `l${(i + depth - 1) % depth}`, start: i }));
    for (const [traceId, prefix] of [
      ['chain', 'c'],
      ['ring', 'l'],
    ] as const) {
      const { roots } = traceTree(s, traceId);
      expect(roots).toHaveLength(1);
      // Follow the single line of children down: every span is on it, in order.
      const line: string[] = [];
      for (let node: SpanTreeNode | undefined = roots[0]; node; node = node.children[0]) {
        line.push(node.span_id);
        if (node.children.length > 1) throw new Error(`${node.span_id} has ${node.children.length} children`);
      }
      expect(line).toEqual(Array.from({ length: depth }, (_, i) => `${prefix}${i}`));
    }
  });
});
