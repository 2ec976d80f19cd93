/**
 * The log store (src/modules/observability/log-store.ts): its two caps and what each drops, the trace
 * index kept in step with evictions, sweeps and clears, retention, and the byte estimate.
 *
 * The store is not part of the package's public entry, so this file imports the built modules (dist/,
 * the same copies `@flint/engine` loads; run `npx tsc -b` first).
 */
import { describe, expect, test } from 'vitest';
import { RECORD_OVERHEAD_BYTES, estimateLogBytes } from '../../dist/modules/observability/log-size.js';
import { LogStore } from '../../dist/modules/observability/log-store.js';
import { BASE_MS, logRecord, prng } from '../support/observability/log-records.js';

const BIG = 1 << 30;

const bodies = (store: LogStore): string[] => store.entries().map((e) => e.record.body);

/** The index answers, for every trace id, exactly what a scan of the store finds, and holds no other id. */
function expectIndexConsistent(store: LogStore, traceIds: Iterable<string>): void {
  const all = store.entries();
  const present = new Set<string>();
  for (const id of traceIds) {
    const scanned = all.filter((e) => e.record.trace_id === id);
    expect(store.byTraceId(id)).toEqual(scanned);
    if (scanned.length > 0) present.add(id);
  }
  expect(store.indexedTraces).toBe(present.size);
}

describe('options', () => {
  test.each([
    [{ max_count: 0, max_bytes: 100 }, /max_count must be a positive integer/],
    [{ max_count: 1.5, max_bytes: 100 }, /max_count must be a positive integer/],
    [{ max_count: 10, max_bytes: 0 }, /max_bytes must be a positive integer/],
    [{ max_count: 10, max_bytes: Number.NaN }, /max_bytes must be a positive integer/],
    [{ max_count: 10, max_bytes: 100, retention_seconds: -1 }, /retention_seconds must be a non-negative number/],
  ])('%o is refused', (options, message) => {
    expect(() => new LogStore(options)).toThrow(message);
  });
});

describe('count cap', () => {
  test('the oldest records go first; each one counts as dropped by count', () => {
    const store = new LogStore({ max_count: 3, max_bytes: BIG });
    for (let i = 1; i <= 5; i++) expect(store.add(logRecord({ body: `r${i}` }))).toBe(true);
    expect(bodies(store)).toEqual(['r3', 'r4', 'r5']);
    expect(store.stats()).toMatchObject({ logs: 3, dropped_by_count: 2, dropped_by_bytes: 0 });
  });

  test('a cap of one keeps only the newest', () => {
    const store = new LogStore({ max_count: 1, max_bytes: BIG });
    store.add(logRecord({ body: 'a' }));
    store.add(logRecord({ body: 'b' }));
    expect(bodies(store)).toEqual(['b']);
  });
});

describe('byte cap', () => {
  test('the oldest records go until the new one fits; each counts as dropped by bytes; bytes add up', () => {
    const record = (spanId: string, body: string) => logRecord({ body, span_id: spanId });
    const size = estimateLogBytes(record('s0', 'x'.repeat(100)));
    const store = new LogStore({ max_count: 100, max_bytes: size * 3 });
    for (let i = 0; i < 3; i++) store.add(record(`s${i}`, 'x'.repeat(100)));
    expect(store.stats()).toMatchObject({ logs: 3, bytes: size * 3, dropped_by_bytes: 0 });
    // A record twice the size pushes two of them out.
    const double = record('sd', 'y'.repeat(100 + size));
    expect(estimateLogBytes(double)).toBe(size * 2);
    expect(store.add(double)).toBe(true);
    const stats = store.stats();
    expect(stats.dropped_by_bytes).toBe(2);
    expect(stats.dropped_by_count).toBe(0);
    expect(store.entries().map((e) => e.record.span_id)).toEqual(['s2', 'sd']);
    expect(stats.bytes).toBe(store.entries().reduce((sum, e) => sum + e.bytes, 0));
    expect(stats.bytes).toBeLessThanOrEqual(size * 3);
  });

  test('a record larger than the cap on its own is refused and counted, the store is left alone', () => {
    const store = new LogStore({ max_count: 10, max_bytes: 2000 });
    store.add(logRecord({ body: 'kept' }));
    expect(store.add(logRecord({ body: 'z'.repeat(5000) }))).toBe(false);
    expect(bodies(store)).toEqual(['kept']);
    expect(store.stats()).toMatchObject({ logs: 1, dropped_by_bytes: 1, dropped_by_count: 0 });
  });

  test('the estimate is charged once, at insert: changing a record later does not move the total', () => {
    const store = new LogStore({ max_count: 10, max_bytes: BIG });
    const record = logRecord({ body: 'short' });
    store.add(record);
    const before = store.stats().bytes;
    record.body = 'much longer now'.repeat(100);
    expect(store.stats().bytes).toBe(before);
    expect(store.entries()[0]!.bytes).toBe(before);
  });
});

describe('byte estimate', () => {
  test('grows with the body, the attributes and the resource', () => {
    const base = estimateLogBytes(logRecord({ body: '' }));
    expect(base).toBeGreaterThanOrEqual(RECORD_OVERHEAD_BYTES);
    expect(estimateLogBytes(logRecord({ body: 'a'.repeat(1000) }))).toBe(base + 1000);
    expect(estimateLogBytes(logRecord({ body: '', attributes: { key: 'v'.repeat(500) } }))).toBeGreaterThan(base + 500);
    expect(estimateLogBytes(logRecord({ body: '', resource: { 'service.name': 'svc', big: 'r'.repeat(800) } }))).toBeGreaterThan(base + 800);
    expect(estimateLogBytes(logRecord({ body: '', attributes: { buf: new Uint8Array(4096) } }))).toBeGreaterThan(base + 4096);
  });

  test('stays bounded for cyclic, deep and very wide attributes', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    cyclic.again = cyclic;
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 10_000; i++) deep = { next: deep };
    const wide: Record<string, number> = {};
    for (let i = 0; i < 200_000; i++) wide[`k${i}`] = i;
    for (const attributes of [{ cyclic }, { deep }, { wide }]) {
      const bytes = estimateLogBytes(logRecord({ attributes }));
      expect(Number.isFinite(bytes)).toBe(true);
      expect(bytes).toBeLessThan(50_000_000);
    }
  });
});

describe('trace index', () => {
  test('the records of a trace, oldest first; unknown trace: none', () => {
    const store = new LogStore({ max_count: 10, max_bytes: BIG });
    store.add(logRecord({ body: 'a1', trace_id: 'aa' }));
    store.add(logRecord({ body: 'b1', trace_id: 'bb' }));
    store.add(logRecord({ body: 'n1' }));
    store.add(logRecord({ body: 'a2', trace_id: 'aa' }));
    expect(store.byTraceId('aa').map((e) => e.record.body)).toEqual(['a1', 'a2']);
    expect(store.byTraceId('bb').map((e) => e.record.body)).toEqual(['b1']);
    expect(store.byTraceId('cc')).toEqual([]);
    expect(store.indexedTraces).toBe(2);
  });

  test('evictions by count take records out of the index; a trace whose records are all gone leaves it', () => {
    const store = new LogStore({ max_count: 3, max_bytes: BIG });
    store.add(logRecord({ body: 'a1', trace_id: 'aa' }));
    store.add(logRecord({ body: 'b1', trace_id: 'bb' }));
    store.add(logRecord({ body: 'a2', trace_id: 'aa' }));
    store.add(logRecord({ body: 'c1', trace_id: 'cc' }));
    expect(store.byTraceId('aa').map((e) => e.record.body)).toEqual(['a2']);
    store.add(logRecord({ body: 'c2', trace_id: 'cc' }));
    expect(store.byTraceId('bb')).toEqual([]);
    store.add(logRecord({ body: 'c3', trace_id: 'cc' }));
    expect(store.byTraceId('aa')).toEqual([]);
    expect(store.indexedTraces).toBe(1);
    expect(store.byTraceId('cc').map((e) => e.record.body)).toEqual(['c1', 'c2', 'c3']);
  });

  test('stays equal to a scan through thousands of evictions by count and by bytes (seeded random mix)', () => {
    const rng = prng(20240611);
    const store = new LogStore({ max_count: 200, max_bytes: 90_000 });
    const ids = Array.from({ length: 25 }, (_, i) => `trace${i}`);
    for (let i = 0; i < 20_000; i++) {
      const r = rng();
      const traceId = r < 0.15 ? null : ids[Math.floor(rng() * ids.length)]!;
      // Mostly small records (the count cap binds), now and then a large one (the byte cap binds).
      const length = rng() < 0.05 ? 3000 : Math.floor(rng() * 50);
      store.add(logRecord({ body: 'b'.repeat(length), trace_id: traceId }));
      if (i % 997 === 0) expectIndexConsistent(store, ids);
    }
    const stats = store.stats();
    expect(stats.dropped_by_count).toBeGreaterThan(0);
    expect(stats.dropped_by_bytes).toBeGreaterThan(0);
    expect(stats.logs + stats.dropped_by_count + stats.dropped_by_bytes).toBe(20_000);
    expectIndexConsistent(store, ids);
  });

  test('one trace holding every record stays right while its oldest keep going (its list is compacted)', () => {
    const store = new LogStore({ max_count: 100, max_bytes: BIG });
    for (let i = 0; i < 50_000; i++) store.add(logRecord({ body: `r${i}`, trace_id: 'one' }));
    const traced = store.byTraceId('one');
    expect(traced).toHaveLength(100);
    expect(traced[0]!.record.body).toBe('r49900');
    expect(traced[99]!.record.body).toBe('r49999');
    expect(traced).toEqual(store.entries());
  });
});

describe('clear', () => {
  test('empties the store and the index; the dropped totals stay; the store works after', () => {
    const store = new LogStore({ max_count: 2, max_bytes: BIG });
    for (let i = 0; i < 4; i++) store.add(logRecord({ body: `r${i}`, trace_id: 't' }));
    store.clear();
    expect(store.stats()).toEqual({ logs: 0, bytes: 0, dropped_by_count: 2, dropped_by_bytes: 0, dropped_by_retention: 0 });
    expect(store.entries()).toEqual([]);
    expect(store.byTraceId('t')).toEqual([]);
    expect(store.indexedTraces).toBe(0);
    for (let i = 0; i < 3; i++) store.add(logRecord({ body: `s${i}`, trace_id: 't' }));
    expect(bodies(store)).toEqual(['s1', 's2']);
    expect(store.byTraceId('t').map((e) => e.record.body)).toEqual(['s1', 's2']);
  });
});

describe('retention', () => {
  test('without retention (unset or 0) a sweep drops nothing', () => {
    for (const retention_seconds of [undefined, 0]) {
      const store = new LogStore({ max_count: 10, max_bytes: BIG, retention_seconds });
      store.add(logRecord({ at_ms: BASE_MS - 10 * 86_400_000 }));
      expect(store.sweep(BASE_MS)).toBe(0);
      expect(store.size).toBe(1);
    }
  });

  test('drops records older than retention wherever they sit, keeps the one exactly at the limit', () => {
    const store = new LogStore({ max_count: 10, max_bytes: BIG, retention_seconds: 60 });
    const now = BASE_MS + 3_600_000;
    store.add(logRecord({ body: 'old', at_ms: now - 120_000, trace_id: 'old-trace' }));
    store.add(logRecord({ body: 'recent', at_ms: now - 30_000, trace_id: 'shared' }));
    store.add(logRecord({ body: 'edge', at_ms: now - 60_000, trace_id: 'shared' }));
    // Late arrival of an old record (an SDK flushing a backlog): after newer ones in the ring.
    store.add(logRecord({ body: 'late-old', at_ms: now - 61_000, trace_id: 'shared' }));
    store.add(logRecord({ body: 'unset-time', timestamp_unix_nano: 0, observed_timestamp_unix_nano: (now - 1000) * 1e6 }));
    expect(store.sweep(now)).toBe(2);
    expect(bodies(store)).toEqual(['recent', 'edge', 'unset-time']);
    expect(store.stats()).toMatchObject({ logs: 3, dropped_by_retention: 2 });
    expect(store.stats().bytes).toBe(store.entries().reduce((sum, e) => sum + e.bytes, 0));
    expectIndexConsistent(store, ['old-trace', 'shared']);
    expect(store.sweep(now)).toBe(0);
  });

  test('the ring and index keep working after a sweep rebuilt them', () => {
    const store = new LogStore({ max_count: 5, max_bytes: BIG, retention_seconds: 10 });
    for (let i = 0; i < 5; i++) store.add(logRecord({ body: `r${i}`, at_ms: BASE_MS + i * 5000, trace_id: i % 2 === 0 ? 'even' : 'odd' }));
    expect(store.sweep(BASE_MS + 20_000)).toBe(2);
    for (let i = 5; i < 12; i++) store.add(logRecord({ body: `r${i}`, at_ms: BASE_MS + i * 5000, trace_id: i % 2 === 0 ? 'even' : 'odd' }));
    expect(bodies(store)).toEqual(['r7', 'r8', 'r9', 'r10', 'r11']);
    expect(store.stats()).toMatchObject({ logs: 5, dropped_by_retention: 2, dropped_by_count: 5 });
    expectIndexConsistent(store, ['even', 'odd']);
  });
});

describe('volume', () => {
  test('1,000,000 records through a store capped at 10,000: it stays at 10,000, the bytes stay bounded', { timeout: 15_000 }, () => {
    const maxBytes = 32 * 1024 * 1024;
    const store = new LogStore({ max_count: 10_000, max_bytes: maxBytes });
    const resource = { 'service.name': 'load' };
    let maxSeen = 0;
    for (let i = 0; i < 1_000_000; i++) {
      store.add(
        logRecord({
          body: `request ${i} served`,
          attributes: { function_id: 'api::get', status: 200, i },
          trace_id: `t${i % 5000}`,
          resource,
          at_ms: BASE_MS + i,
        }),
      );
      if (i % 100_000 === 0) maxSeen = Math.max(maxSeen, store.stats().bytes);
    }
    const stats = store.stats();
    expect(stats.logs).toBe(10_000);
    expect(store.size).toBe(10_000);
    expect(stats.dropped_by_count).toBe(990_000);
    expect(stats.dropped_by_bytes).toBe(0);
    expect(stats.bytes).toBe(store.entries().reduce((sum, e) => sum + e.bytes, 0));
    expect(Math.max(maxSeen, stats.bytes)).toBeLessThanOrEqual(maxBytes);
    // Each record here is a few hundred bytes: 10,000 of them are a few MB, nowhere near growing without bound.
    expect(stats.bytes).toBeLessThan(10_000 * 1000);
    const entries = store.entries();
    expect(entries[0]!.record.body).toBe('request 990000 served');
    expect(entries[9_999]!.record.body).toBe('request 999999 served');
    expect(store.indexedTraces).toBe(5000);
    expect(store.byTraceId('t4999').map((e) => e.record.body)).toEqual(['request 994999 served', 'request 999999 served']);
  });

  test('1,000,000 records through a store whose byte cap binds first: the bytes never pass the cap', { timeout: 15_000 }, () => {
    const maxBytes = 1024 * 1024;
    const store = new LogStore({ max_count: 10_000, max_bytes: maxBytes });
    for (let i = 0; i < 1_000_000; i++) {
      store.add(logRecord({ body: `line ${i} ${'p'.repeat(i % 400)}`, trace_id: `t${i % 700}`, at_ms: BASE_MS + i }));
      if (i % 50_000 === 0) expect(store.stats().bytes).toBeLessThanOrEqual(maxBytes);
    }
    const stats = store.stats();
    expect(stats.bytes).toBeLessThanOrEqual(maxBytes);
    expect(stats.logs).toBeLessThan(10_000);
    expect(stats.dropped_by_bytes).toBeGreaterThan(0);
    expect(stats.logs + stats.dropped_by_count + stats.dropped_by_bytes).toBe(1_000_000);
    expect(store.entries().at(-1)!.record.body.startsWith('line 999999 ')).toBe(true);
  });
});
