/**
 * The log query (`listLogs`, src/modules/observability/log-query.ts): each filter alone, filters
 * together, order, pagination and its limits, the normalised echo, and input it refuses.
 *
 * Not part of the package's public entry: this file imports the built modules (dist/; `npx tsc -b` first).
 */
import { FlintError } from '@flint/protocol';
import { beforeEach, describe, expect, test } from 'vitest';
import { listLogs } from '../../dist/modules/observability/log-query.js';
import { LogStore } from '../../dist/modules/observability/log-store.js';
import { BASE_MS, logRecord } from '../support/observability/log-records.js';

const TRACE_A = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACE_B = '0af7651916cd43dd8448eb211c80319c';

/** Six records, added in time order; their bodies name them in the assertions. */
function fixtureStore(): LogStore {
  const store = new LogStore({ max_count: 100, max_bytes: 1 << 24 });
  const records = [
    logRecord({
      at_ms: BASE_MS + 1000,
      body: 'user signed in',
      attributes: { user: 'alice' },
      trace_id: TRACE_A,
      span_id: 'a000000000000001',
      service_name: 'auth-service',
    }),
    logRecord({
      at_ms: BASE_MS + 2000,
      severity_number: 13,
      severity_text: 'WARN',
      body: 'disk almost full',
      attributes: { disk: '/dev/sda', free_pct: 37 },
      trace_id: TRACE_A,
      span_id: 'a000000000000002',
      service_name: 'storage',
    }),
    logRecord({
      at_ms: BASE_MS + 3000,
      severity_number: 17,
      severity_text: 'ERROR',
      body: 'payment failed',
      attributes: { order: { id: 'ORD-42', lines: 3 } },
      trace_id: TRACE_B,
      span_id: 'b000000000000001',
      service_name: 'billing',
    }),
    logRecord({ at_ms: BASE_MS + 4000, severity_number: 5, severity_text: 'DEBUG', body: 'cache miss', service_name: 'auth-service' }),
    logRecord({
      at_ms: BASE_MS + 5000,
      severity_number: 21,
      severity_text: 'FATAL',
      body: 'out of memory',
      trace_id: TRACE_B,
      span_id: 'b000000000000002',
      service_name: 'Billing-Worker',
    }),
    logRecord({
      at_ms: BASE_MS + 6000,
      severity_number: 13,
      severity_text: 'WARNING',
      body: 'slow query',
      attributes: { function_id: 'db::query' },
      service_name: 'storage',
    }),
  ];
  for (const record of records) store.add(record);
  return store;
}

let store: LogStore;
beforeEach(() => {
  store = fixtureStore();
});

/** The bodies `listLogs` returns for `query`. */
const bodiesFor = (query: unknown): string[] => listLogs(store, query).logs.map((log) => log.body);

const ALL_NEWEST_FIRST = ['slow query', 'out of memory', 'cache miss', 'payment failed', 'disk almost full', 'user signed in'];

/** A store whose full scan throws: a query that answers from it used the trace index. */
class IndexOnlyStore extends LogStore {
  override entries(): never {
    throw new Error('the query scanned the whole store');
  }
}

describe('no filter', () => {
  test('every record, newest first, with the total, the echo of the defaults and the time of the answer', () => {
    const before = Date.now();
    const result = listLogs(store, {});
    expect(result.logs.map((log) => log.body)).toEqual(ALL_NEWEST_FIRST);
    expect(result.total).toBe(6);
    expect(result.query).toEqual({ offset: 0, limit: 100 });
    expect(result.timestamp).toBeGreaterThanOrEqual(before);
    expect(result.timestamp).toBeLessThanOrEqual(Date.now());
  });

  test('null or undefined input is no filter; null and empty-string fields are no filter', () => {
    expect(bodiesFor(null)).toEqual(ALL_NEWEST_FIRST);
    expect(bodiesFor(undefined)).toEqual(ALL_NEWEST_FIRST);
    const result = listLogs(store, { start_time: null, trace_id: null, text: '', service_name: '', severity_min: null, limit: null });
    expect(result.total).toBe(6);
    expect(result.query).toEqual({ offset: 0, limit: 100 });
  });

  test('the records come back whole, as stored', () => {
    const [newest] = listLogs(store, { limit: 1 }).logs;
    expect(newest).toEqual(store.entries().at(-1)!.record);
  });
});

describe('order', () => {
  test("by the record's own instant, not by arrival; equal instants: the later arrival first", () => {
    const s = new LogStore({ max_count: 10, max_bytes: 1 << 20 });
    s.add(logRecord({ body: 'late', at_ms: BASE_MS + 300 }));
    s.add(logRecord({ body: 'early', at_ms: BASE_MS + 100 }));
    s.add(logRecord({ body: 'tie-first', at_ms: BASE_MS + 200 }));
    s.add(logRecord({ body: 'tie-second', at_ms: BASE_MS + 200 }));
    s.add(logRecord({ body: 'sub-ms', timestamp_unix_nano: (BASE_MS + 200) * 1e6 + 500_000 }));
    // No timestamp (0): the observed one counts.
    s.add(logRecord({ body: 'observed', timestamp_unix_nano: 0, observed_timestamp_unix_nano: (BASE_MS + 250) * 1e6 }));
    expect(listLogs(s, {}).logs.map((log) => log.body)).toEqual(['late', 'observed', 'sub-ms', 'tie-second', 'tie-first', 'early']);
  });
});

describe('time range (milliseconds, both ends inclusive)', () => {
  test('start_time', () => {
    expect(bodiesFor({ start_time: BASE_MS + 4000 })).toEqual(['slow query', 'out of memory', 'cache miss']);
  });

  test('end_time', () => {
    expect(bodiesFor({ end_time: BASE_MS + 2000 })).toEqual(['disk almost full', 'user signed in']);
  });

  test('both', () => {
    expect(bodiesFor({ start_time: BASE_MS + 2000, end_time: BASE_MS + 3000 })).toEqual(['payment failed', 'disk almost full']);
    expect(bodiesFor({ start_time: BASE_MS + 3000, end_time: BASE_MS + 3000 })).toEqual(['payment failed']);
    expect(bodiesFor({ start_time: BASE_MS + 3500, end_time: BASE_MS + 3600 })).toEqual([]);
    expect(bodiesFor({ start_time: BASE_MS + 5000, end_time: BASE_MS + 1000 })).toEqual([]);
  });

  test('a record late within the end millisecond is in; one in the next millisecond is out', () => {
    const s = new LogStore({ max_count: 10, max_bytes: 1 << 20 });
    const end = BASE_MS + 7777;
    s.add(logRecord({ body: 'in', timestamp_unix_nano: end * 1e6 + 999_000 }));
    s.add(logRecord({ body: 'out', timestamp_unix_nano: (end + 1) * 1e6 }));
    expect(listLogs(s, { end_time: end }).logs.map((log) => log.body)).toEqual(['in']);
    expect(listLogs(s, { start_time: end + 1 }).logs.map((log) => log.body)).toEqual(['out']);
  });
});

describe('trace and span', () => {
  test('trace_id, in any case, through the index (no scan of the store)', () => {
    const indexed = new IndexOnlyStore({ max_count: 100, max_bytes: 1 << 24 });
    for (const entry of fixtureStore().entries()) indexed.add(entry.record);
    const result = listLogs(indexed, { trace_id: TRACE_B.toUpperCase() });
    expect(result.logs.map((log) => log.body)).toEqual(['out of memory', 'payment failed']);
    expect(result.query.trace_id).toBe(TRACE_B);
    expect(listLogs(indexed, { trace_id: 'ffffffffffffffffffffffffffffffff' }).total).toBe(0);
    expect(() => listLogs(indexed, {})).toThrow('the query scanned the whole store');
  });

  test('span_id', () => {
    expect(bodiesFor({ span_id: 'a000000000000002' })).toEqual(['disk almost full']);
    expect(bodiesFor({ span_id: 'B000000000000001' })).toEqual(['payment failed']);
  });

  test('trace_id with span_id: both must hold', () => {
    expect(bodiesFor({ trace_id: TRACE_A, span_id: 'a000000000000001' })).toEqual(['user signed in']);
    expect(bodiesFor({ trace_id: TRACE_A, span_id: 'b000000000000001' })).toEqual([]);
  });
});

describe('severity', () => {
  test('severity_min as a number: that severity number and above', () => {
    expect(bodiesFor({ severity_min: 13 })).toEqual(['slow query', 'out of memory', 'payment failed', 'disk almost full']);
    expect(bodiesFor({ severity_min: 18 })).toEqual(['out of memory']);
    expect(bodiesFor({ severity_min: 1 })).toEqual(ALL_NEWEST_FIRST);
  });

  test('severity_min as a level name, in any case: its number, echoed as the number', () => {
    const result = listLogs(store, { severity_min: 'ERROR' });
    expect(result.logs.map((log) => log.body)).toEqual(['out of memory', 'payment failed']);
    expect(result.query.severity_min).toBe(17);
    expect(bodiesFor({ severity_min: 'warn' })).toEqual(bodiesFor({ severity_min: 13 }));
    expect(bodiesFor({ severity_min: 'debug' })).toEqual(['slow query', 'out of memory', 'cache miss', 'payment failed', 'disk almost full', 'user signed in']);
    expect(bodiesFor({ severity_min: 'fatal' })).toEqual(['out of memory']);
  });

  test('severity_text: the whole text, case-insensitive', () => {
    expect(bodiesFor({ severity_text: 'warn' })).toEqual(['disk almost full']);
    expect(bodiesFor({ severity_text: 'Warning' })).toEqual(['slow query']);
    expect(bodiesFor({ severity_text: 'WAR' })).toEqual([]);
  });
});

describe('text', () => {
  test('a case-insensitive piece of the body', () => {
    expect(bodiesFor({ text: 'PAYMENT' })).toEqual(['payment failed']);
    expect(bodiesFor({ text: 'ou' })).toEqual(['out of memory']);
  });

  test('or of an attribute key, or of an attribute value as text (numbers and nested values included)', () => {
    expect(bodiesFor({ text: 'FREE_pct' })).toEqual(['disk almost full']);
    expect(bodiesFor({ text: 'Alice' })).toEqual(['user signed in']);
    expect(bodiesFor({ text: '37' })).toEqual(['disk almost full']);
    expect(bodiesFor({ text: 'ord-42' })).toEqual(['payment failed']);
    expect(bodiesFor({ text: '"lines":3' })).toEqual(['payment failed']);
    expect(bodiesFor({ text: 'db::' })).toEqual(['slow query']);
  });

  test('not of the service name, the severity or the ids', () => {
    expect(bodiesFor({ text: 'billing' })).toEqual([]);
    expect(bodiesFor({ text: 'fatal' })).toEqual([]);
    expect(bodiesFor({ text: TRACE_A })).toEqual([]);
  });

  test('attribute values JSON cannot write still count, by their text', () => {
    const s = new LogStore({ max_count: 10, max_bytes: 1 << 20 });
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    s.add(logRecord({ body: 'a', attributes: { big: 12345678901234567890n } }));
    s.add(logRecord({ body: 'b', attributes: { cyclic } }));
    expect(listLogs(s, { text: '12345678901234567890' }).logs.map((log) => log.body)).toEqual(['a']);
    expect(listLogs(s, { text: 'object Object' }).logs.map((log) => log.body)).toEqual(['b']);
  });
});

describe('service_name', () => {
  test('a case-insensitive piece of the service name', () => {
    expect(bodiesFor({ service_name: 'BILLING' })).toEqual(['out of memory', 'payment failed']);
    expect(bodiesFor({ service_name: 'auth' })).toEqual(['cache miss', 'user signed in']);
    expect(bodiesFor({ service_name: 'nobody' })).toEqual([]);
  });
});

describe('filters together: every one must hold', () => {
  test.each([
    [{ severity_min: 'warn', service_name: 'storage' }, ['slow query', 'disk almost full']],
    [{ trace_id: TRACE_B, severity_min: 'error', text: 'memory' }, ['out of memory']],
    [{ trace_id: TRACE_A, start_time: BASE_MS + 1500 }, ['disk almost full']],
    [{ service_name: 'auth', severity_text: 'debug', end_time: BASE_MS + 4000 }, ['cache miss']],
    [{ text: 'storage', service_name: 'storage' }, []],
    [{ severity_min: 'fatal', service_name: 'auth' }, []],
  ])('%o', (query, expected) => {
    const result = listLogs(store, query);
    expect(result.logs.map((log) => log.body)).toEqual(expected);
    expect(result.total).toBe(expected.length);
  });
});

describe('pagination', () => {
  test('offset and limit page through the newest-first list; total counts every match', () => {
    const pages = [0, 2, 4, 6].map((offset) => listLogs(store, { offset, limit: 2 }));
    expect(pages.map((page) => page.logs.map((log) => log.body))).toEqual([
      ['slow query', 'out of memory'],
      ['cache miss', 'payment failed'],
      ['disk almost full', 'user signed in'],
      [],
    ]);
    for (const page of pages) expect(page.total).toBe(6);
    expect(listLogs(store, { offset: 1, limit: 2, severity_min: 13 })).toMatchObject({ total: 4, query: { offset: 1, limit: 2, severity_min: 13 } });
    expect(bodiesFor({ offset: 1, limit: 2, severity_min: 13 })).toEqual(['out of memory', 'payment failed']);
  });

  test('limit 0 gives the total alone', () => {
    const result = listLogs(store, { limit: 0 });
    expect(result.logs).toEqual([]);
    expect(result.total).toBe(6);
  });

  test('limit defaults to 100 and is capped at 1000', () => {
    const big = new LogStore({ max_count: 5000, max_bytes: 1 << 26 });
    for (let i = 0; i < 1500; i++) big.add(logRecord({ body: `r${i}`, at_ms: BASE_MS + i }));
    const byDefault = listLogs(big, {});
    expect(byDefault.logs).toHaveLength(100);
    expect(byDefault.total).toBe(1500);
    expect(byDefault.logs[0]!.body).toBe('r1499');
    const capped = listLogs(big, { limit: 5000 });
    expect(capped.logs).toHaveLength(1000);
    expect(capped.query.limit).toBe(1000);
    expect(capped.logs.at(-1)!.body).toBe('r500');
    expect(listLogs(big, { offset: 1400, limit: 1000 }).logs).toHaveLength(100);
  });
});

describe('the echo', () => {
  test('holds every filter given, normalised', () => {
    const result = listLogs(store, {
      start_time: 1,
      end_time: 2,
      trace_id: ` ${TRACE_A.toUpperCase()} `,
      span_id: 'ABC',
      severity_min: 'Info',
      severity_text: 'Info',
      text: 'Hello',
      service_name: 'Svc',
      offset: 3,
      limit: 2000,
      unknown_field: 'ignored',
    });
    expect(result.query).toEqual({
      start_time: 1,
      end_time: 2,
      trace_id: TRACE_A,
      span_id: 'abc',
      severity_min: 9,
      severity_text: 'Info',
      text: 'Hello',
      service_name: 'Svc',
      offset: 3,
      limit: 1000,
    });
  });
});

describe('input it refuses', () => {
  test.each([
    ['an array', [], /^payload must be an object$/],
    ['a string', 'all', /^payload must be an object$/],
    ['start_time as a string', { start_time: '1000' }, /^start_time must be a number \(milliseconds since the epoch\)$/],
    ['end_time infinite', { end_time: Number.POSITIVE_INFINITY }, /^end_time must be a number/],
    ['trace_id as a number', { trace_id: 42 }, /^trace_id must be a string$/],
    ['span_id as an object', { span_id: {} }, /^span_id must be a string$/],
    [
      'severity_min an unknown name',
      { severity_min: 'loud' },
      /^severity_min must be a severity number or a level name \(trace, debug, info, warn, error, fatal\)$/,
    ],
    ['severity_min a boolean', { severity_min: true }, /^severity_min must be/],
    ['severity_text as a number', { severity_text: 9 }, /^severity_text must be a string$/],
    ['text as an object', { text: { q: 'x' } }, /^text must be a string$/],
    ['service_name as an array', { service_name: ['a'] }, /^service_name must be a string$/],
    ['a negative offset', { offset: -1 }, /^offset must be a non-negative integer$/],
    ['a fractional offset', { offset: 1.5 }, /^offset must be a non-negative integer$/],
    ['limit as a string', { limit: 'ten' }, /^limit must be a non-negative integer$/],
    ['a negative limit', { limit: -3 }, /^limit must be a non-negative integer$/],
  ])('%s', (_what, input, message) => {
    let thrown: unknown;
    try {
      listLogs(store, input);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(FlintError);
    expect((thrown as FlintError).code).toBe('invalid_payload');
    expect((thrown as FlintError).message).toMatch(message);
  });
});
