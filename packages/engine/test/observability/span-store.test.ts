/**
 * The span store of flint-observability (src/modules/observability/span-store.ts): the two bounds (span
 * count and bytes) with the oldest spans dropped first and counted by the bound that dropped them, the
 * trace index staying in step with evictions and sweeps, the retention sweep, and memory staying bounded
 * under a million spans.
 *
 * SpanStore is not part of the package's public entry, so this file imports the built module (dist/; run
 * `npx tsc -b` first).
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import type { Span } from '../../dist/modules/observability/span.js';
import { LazySpan, SpanStore } from '../../dist/modules/observability/span-store.js';
import { T0_MS, nanoAt, seeded, sizeOf, span } from '../support/observability/spans.js';

const ids = (spans: Iterable<Span>): string[] => [...spans].map((s) => s.span_id);

/** `count` spans s0, s1, … of trace `trace`, each starting 1 ms after the one before. */
const series = (trace: string, count: number, from = 0): Span[] =>
  Array.from({ length: count }, (_, i) => span({ trace_id: trace, span_id: `${trace}-${from + i}`, start: from + i }));

describe('adding and reading', () => {
  test('all() gives every span oldest first, byTrace the spans of one trace in insertion order', () => {
    const store = new SpanStore();
    const a1 = span({ trace_id: 'a', span_id: 'a1', start: 5 });
    const b1 = span({ trace_id: 'b', span_id: 'b1', start: 1 });
    const a2 = span({ trace_id: 'a', span_id: 'a2', parent: 'a1', start: 3 });
    for (const s of [a1, b1, a2]) store.add(s);
    expect(ids(store.all())).toEqual(['a1', 'b1', 'a2']);
    expect(store.byTrace('a')).toEqual([a1, a2]);
    expect(store.byTrace('b')).toEqual([b1]);
    expect(store.byTrace('nope')).toEqual([]);
    expect(store.size).toBe(3);
    expect(store.stats()).toEqual({
      spans: 3,
      bytes: sizeOf(a1) + sizeOf(b1) + sizeOf(a2),
      dropped_by_count: 0,
      dropped_by_bytes: 0,
      dropped_by_retention: 0,
      traces: 2,
    });
  });

  test('byTrace returns a copy: changing it leaves the store as it was', () => {
    const store = new SpanStore();
    store.add(span({ trace_id: 'a', span_id: 'a1' }));
    store.byTrace('a').pop();
    expect(ids(store.byTrace('a'))).toEqual(['a1']);
  });

  test('clear() drops every span and resets the counters; the store takes spans again after', () => {
    const store = new SpanStore({ max_spans: 2 });
    for (const s of series('a', 5)) store.add(s);
    expect(store.stats().dropped_by_count).toBe(3);
    store.clear();
    expect(store.stats()).toEqual({ spans: 0, bytes: 0, dropped_by_count: 0, dropped_by_bytes: 0, dropped_by_retention: 0, traces: 0 });
    expect(ids(store.all())).toEqual([]);
    expect(store.byTrace('a')).toEqual([]);
    const again = span({ trace_id: 'a', span_id: 'again' });
    store.add(again);
    expect(store.byTrace('a')).toEqual([again]);
    expect(store.stats().bytes).toBe(sizeOf(again));
  });

  test.each([
    ['max_spans 0', { max_spans: 0 }, 'max_spans must be a positive integer (got 0)'],
    ['max_spans 2.5', { max_spans: 2.5 }, 'max_spans must be a positive integer (got 2.5)'],
    ['max_bytes 0', { max_bytes: 0 }, 'max_bytes must be a positive number (got 0)'],
    ['max_bytes NaN', { max_bytes: Number.NaN }, 'max_bytes must be a positive number (got NaN)'],
    ['retention_seconds -1', { retention_seconds: -1 }, 'retention_seconds must be a positive number (got -1)'],
    ['retention_seconds 0', { retention_seconds: 0 }, 'retention_seconds must be a positive number (got 0)'],
  ])('%s is refused', (_label, options, message) => {
    expect(() => new SpanStore(options)).toThrow(new RangeError(message));
  });
});

describe('the count bound', () => {
  test('past max_spans the oldest spans go first, counted as dropped_by_count', () => {
    const store = new SpanStore({ max_spans: 3 });
    const spans = series('a', 5);
    for (const s of spans) store.add(s);
    expect(ids(store.all())).toEqual(['a-2', 'a-3', 'a-4']);
    expect(store.stats()).toMatchObject({ spans: 3, dropped_by_count: 2, dropped_by_bytes: 0, bytes: spans.slice(2).reduce((n, s) => n + sizeOf(s), 0) });
  });
});

describe('the byte bound', () => {
  const padded = (id: string, pad: number) => span({ trace_id: 't', span_id: id, attributes: [['pad', 'x'.repeat(pad)]] });

  test('the oldest spans go until the new one fits, each counted as dropped_by_bytes', () => {
    const small = ['s1', 's2', 's3'].map((id) => padded(id, 10));
    const big = padded('big', 10 + 2 * sizeOf(small[0]!));
    const store = new SpanStore({ max_bytes: 3 * sizeOf(small[0]!) + 10 });
    for (const s of small) store.add(s);
    expect(store.stats()).toMatchObject({ spans: 3, dropped_by_bytes: 0 });
    // big is more than two small spans: all three must go for it to fit.
    expect(sizeOf(big)).toBeGreaterThan(2 * sizeOf(small[0]!));
    expect(sizeOf(big)).toBeLessThanOrEqual(store.maxBytes);
    store.add(big);
    expect(ids(store.all())).toEqual(['big']);
    expect(store.stats()).toMatchObject({ spans: 1, bytes: sizeOf(big), dropped_by_bytes: 3, dropped_by_count: 0 });
  });

  test('the size estimate is close to the JSON length (within 10% for spans of every shape)', () => {
    const random = seeded(11);
    for (let i = 0; i < 200; i++) {
      const s = padded(`e${i}`, Math.floor(random() * 400));
      if (i % 3 === 0) s.events = [{ name: 'exception', timestamp_unix_nano: nanoAt(i), attributes: { 'exception.message': 'x'.repeat(i) } }];
      if (i % 5 === 0) s.status_description = 'failed: '.repeat(i % 7);
      const json = JSON.stringify(s).length;
      expect(Math.abs(sizeOf(s) - json) / json).toBeLessThan(0.1);
    }
  });

  test('bytes never pass max_bytes; the estimate is taken once, when the span is added', () => {
    const store = new SpanStore({ max_bytes: 5_000 });
    const random = seeded(7);
    let added = 0;
    for (let i = 0; i < 500; i++) {
      const s = padded(`p${i}`, Math.floor(random() * 400));
      store.add(s);
      added++;
      expect(store.stats().bytes).toBeLessThanOrEqual(5_000);
      // Changing a span once stored does not change the store's account of it.
      s.name = 'renamed to something much longer than before';
    }
    const held = [...store.all()];
    const stats = store.stats();
    expect(stats.spans).toBe(held.length);
    expect(stats.spans + stats.dropped_by_bytes).toBe(added);
    expect(stats.dropped_by_bytes).toBeGreaterThan(0);
    // The spans now hold the longer name: the estimate is the one taken at insert.
    expect(stats.bytes).toBeLessThan(held.reduce((n, s) => n + sizeOf(s), 0));
  });

  test('a span larger than max_bytes on its own is not kept and the spans held stay', () => {
    const store = new SpanStore({ max_bytes: 1_000 });
    const kept = padded('kept', 10);
    store.add(kept);
    store.add(padded('huge', 2_000));
    expect(ids(store.all())).toEqual(['kept']);
    expect(store.stats()).toMatchObject({ spans: 1, bytes: sizeOf(kept), dropped_by_bytes: 1, traces: 1 });
  });

  test('with both bounds, each drop is counted once, by the bound that made it', () => {
    const unit = sizeOf(padded('u0', 50));
    const store = new SpanStore({ max_spans: 4, max_bytes: 4 * unit + unit / 2 });
    for (let i = 0; i < 6; i++) store.add(padded(`u${i}`, 50)); // the count bound: u0, u1 go
    expect(store.stats()).toMatchObject({ spans: 4, dropped_by_count: 2, dropped_by_bytes: 0 });
    store.add(padded('wide', 50 + unit)); // two units: the count bound drops u2, the bytes bound u3
    expect(ids(store.all())).toEqual(['u4', 'u5', 'wide']);
    expect(store.stats()).toMatchObject({ spans: 3, dropped_by_count: 3, dropped_by_bytes: 1 });
  });
});

describe('the trace index across evictions', () => {
  test("byTrace after a trace's oldest spans were evicted gives the rest; a trace fully evicted is gone", () => {
    const store = new SpanStore({ max_spans: 4 });
    const order = ['a1', 'b1', 'a2', 'c1', 'a3', 'b2'];
    for (const id of order) store.add(span({ trace_id: id[0]!, span_id: id }));
    // Held: a2 c1 a3 b2 (a1, b1 evicted).
    expect(ids(store.byTrace('a'))).toEqual(['a2', 'a3']);
    expect(ids(store.byTrace('b'))).toEqual(['b2']);
    store.add(span({ trace_id: 'd', span_id: 'd1' })); // evicts a2
    store.add(span({ trace_id: 'd', span_id: 'd2' })); // evicts c1: trace c is gone
    expect(ids(store.byTrace('a'))).toEqual(['a3']);
    expect(store.byTrace('c')).toEqual([]);
    expect([...store.traceIds()].sort()).toEqual(['a', 'b', 'd']);
    expect(store.stats().traces).toBe(3);
  });

  test('a trace of many spans, evicted from the front for a long time, keeps the right spans', () => {
    const store = new SpanStore({ max_spans: 3_000 });
    const spans = series('long', 20_000);
    for (const s of spans) store.add(s);
    expect(store.byTrace('long')).toEqual(spans.slice(-3_000));
    expect([...store.all()]).toEqual(spans.slice(-3_000));
    expect(store.stats()).toMatchObject({ spans: 3_000, traces: 1, dropped_by_count: 17_000 });
  });

  test('random traffic under both bounds: the store matches a plain list model after every add', () => {
    const maxSpans = 20;
    const maxBytes = 12_000;
    const store = new SpanStore({ max_spans: maxSpans, max_bytes: maxBytes });
    const random = seeded(42);
    const model: Span[] = [];
    let droppedByCount = 0;
    let droppedByBytes = 0;
    const traces = Array.from({ length: 15 }, (_, i) => `t${i}`);
    for (let i = 0; i < 4_000; i++) {
      // Some traces far busier than others; mostly small spans (the count bound binds), now and then large
      // ones (the byte bound binds).
      const trace = traces[Math.floor(random() ** 2 * traces.length)]!;
      const pad = random() < 0.8 ? Math.floor(random() * 50) : 500 + Math.floor(random() * 1_500);
      const s = span({ trace_id: trace, span_id: `s${i}`, attributes: [['pad', 'y'.repeat(pad)]] });
      store.add(s);
      model.push(s);
      while (model.length > maxSpans) {
        model.shift();
        droppedByCount++;
      }
      while (model.reduce((n, m) => n + sizeOf(m), 0) > maxBytes) {
        model.shift();
        droppedByBytes++;
      }
      const seen = { all: ids(store.all()), byTrace: traces.map((t) => ids(store.byTrace(t))) };
      const expected = { all: ids(model), byTrace: traces.map((t) => ids(model.filter((m) => m.trace_id === t))) };
      expect(seen, `after span ${i}`).toEqual(expected);
    }
    expect(store.stats()).toEqual({
      spans: model.length,
      bytes: model.reduce((n, m) => n + sizeOf(m), 0),
      dropped_by_count: droppedByCount,
      dropped_by_bytes: droppedByBytes,
      dropped_by_retention: 0,
      traces: new Set(model.map((m) => m.trace_id)).size,
    });
    expect(droppedByCount).toBeGreaterThan(0);
    expect(droppedByBytes).toBeGreaterThan(0);
  });
});

describe('past its first thousand spans', () => {
  // The store keeps its spans in a circular buffer that starts at 1,024 places and doubles while full
  // (up to max_spans): these go round it many times, and make it grow while it has wrapped.
  test('the spans held, the index and the counters match a list model, checked as it goes round', () => {
    const store = new SpanStore({ max_spans: 3_000 });
    const model: Span[] = [];
    const random = seeded(7);
    const traces = Array.from({ length: 40 }, (_, i) => `t${i}`);
    for (let i = 0; i < 12_000; i++) {
      const s = span({ trace_id: traces[Math.floor(random() * traces.length)]!, span_id: `s${i}` });
      store.add(s);
      model.push(s);
      if (model.length > 3_000) model.shift();
      // Reading now and then brings the index up to date part-way round.
      if (i % 1_500 === 777 || i === 11_999) {
        expect(ids(store.all()), `after span ${i}`).toEqual(ids(model));
        for (const t of traces) expect(ids(store.byTrace(t))).toEqual(ids(model.filter((m) => m.trace_id === t)));
      }
    }
    expect(store.stats()).toMatchObject({ spans: 3_000, dropped_by_count: 9_000 });
  });

  test('a sweep after the buffer has gone round keeps the recent spans in order, and adding goes on', () => {
    const store = new SpanStore({ max_spans: 1_500, retention_seconds: 1 });
    // Span i ends at i + 1 ms: the last 1,500 of 4,000 are held (2,500 to 3,999), and a sweep 1 s after
    // 3,499.5 ms drops those that ended before it (2,500 to 3,498).
    const all = series('r', 4_000);
    for (const s of all) store.add(s);
    expect(store.sweep(T0_MS + 3_499.5 + 1_000)).toBe(999);
    expect(ids(store.all())).toEqual(ids(all.slice(3_499)));
    const more = series('r', 2_000, 4_000);
    for (const s of more) store.add(s);
    expect(ids(store.all())).toEqual(ids([...all.slice(3_499), ...more].slice(-1_500)));
    expect(ids(store.byTrace('r'))).toEqual(ids(store.all()));
  });
});

describe('recycling dropped spans', () => {
  /** A LazySpan whose object can stand for another span once the store has dropped it. */
  class Reusable extends LazySpan {
    trace_id = '';
    end_time_unix_nano = 0;
    private source: Span | undefined;

    use(source: Span): this {
      this.forget();
      this.source = source;
      this.trace_id = source.trace_id;
      this.end_time_unix_nano = source.end_time_unix_nano;
      return this;
    }

    protected make(): Span {
      return this.source as Span;
    }
  }

  test('each span the bounds drop is handed back once; objects used again read right through the index', () => {
    const free: LazySpan[] = [];
    const handedBack = new Set<LazySpan>();
    const store = new SpanStore({
      max_spans: 12,
      recycle: (dropped) => {
        expect(handedBack.has(dropped), 'handed back twice').toBe(false);
        handedBack.add(dropped);
        free.push(dropped);
      },
    });
    const random = seeded(7);
    const model: Span[] = [];
    const traces = ['t0', 't1', 't2', 't3', 't4'];
    let objects = 0;
    for (let i = 0; i < 3_000; i++) {
      const source = span({ trace_id: traces[Math.floor(random() * traces.length)]!, span_id: `s${i}` });
      const reused = free.pop() as Reusable | undefined;
      if (reused) handedBack.delete(reused);
      else objects++;
      store.addLazy((reused ?? new Reusable()).use(source), sizeOf(source));
      model.push(source);
      if (model.length > 12) model.shift();
      // Reading now and then (not after every add) leaves the index behind while objects are used again.
      if (random() < 0.3) {
        const seen = { all: ids(store.all()), byTrace: traces.map((t) => ids(store.byTrace(t))) };
        const expected = { all: ids(model), byTrace: traces.map((t) => ids(model.filter((m) => m.trace_id === t))) };
        expect(seen, `after span ${i}`).toEqual(expected);
      }
    }
    // The store never held more than 12 objects plus the one being added.
    expect(objects).toBe(13);
  });

  test('spans dropped by a sweep or clear() are not handed back: only the bounds recycle', () => {
    const recycled: LazySpan[] = [];
    const store = new SpanStore({ max_spans: 100, retention_seconds: 1, recycle: (dropped) => recycled.push(dropped) });
    const lazy = (source: Span) => store.addLazy(new Reusable().use(source), sizeOf(source));
    for (let i = 0; i < 10; i++) lazy(span({ trace_id: 't', span_id: `s${i}`, start: i }));
    expect(store.sweep(T0_MS + 60_000)).toBe(10);
    lazy(span({ trace_id: 't', span_id: 'x' }));
    store.clear();
    expect(store.size).toBe(0);
    expect(recycled).toEqual([]);
  });
});

describe('retention', () => {
  const NOW = T0_MS + 3_600_000;
  /** A span of trace `trace` that ended `ago` seconds before NOW. */
  const endedAgo = (trace: string, id: string, ago: number): Span => {
    const s = span({ trace_id: trace, span_id: id });
    s.end_time_unix_nano = (NOW - ago * 1000) * 1e6;
    s.start_time_unix_nano = s.end_time_unix_nano - 1e6;
    return s;
  };

  test('sweep(now) drops the spans that ended before now - retention_seconds, in whatever order they came', () => {
    const store = new SpanStore({ retention_seconds: 60 });
    const spans = [endedAgo('a', 'a-old', 120), endedAgo('a', 'a-new', 5), endedAgo('b', 'b-old', 61), endedAgo('a', 'a-edge', 60), endedAgo('c', 'c-old', 90)];
    for (const s of spans) store.add(s);
    expect(store.sweep(NOW)).toBe(3);
    expect(ids(store.all())).toEqual(['a-new', 'a-edge']); // ending exactly at the cutoff is kept
    expect(ids(store.byTrace('a'))).toEqual(['a-new', 'a-edge']);
    expect(store.byTrace('b')).toEqual([]);
    expect(store.stats()).toEqual({
      spans: 2,
      bytes: sizeOf(spans[1]!) + sizeOf(spans[3]!),
      dropped_by_count: 0,
      dropped_by_bytes: 0,
      dropped_by_retention: 3,
      traces: 1,
    });
    expect(store.sweep(NOW)).toBe(0);
    // Later, the rest has aged out too.
    expect(store.sweep(NOW + 61_000)).toBe(2);
    expect(store.stats()).toMatchObject({ spans: 0, bytes: 0, traces: 0, dropped_by_retention: 5 });
  });

  test('the store keeps working after a sweep: the bounds and the index hold', () => {
    const store = new SpanStore({ retention_seconds: 60, max_spans: 3 });
    store.add(endedAgo('a', 'a1', 100));
    store.add(endedAgo('b', 'b1', 1));
    store.add(endedAgo('a', 'a2', 1));
    store.sweep(NOW);
    store.add(endedAgo('a', 'a3', 0));
    store.add(endedAgo('c', 'c1', 0)); // count bound: b1 goes
    expect(ids(store.all())).toEqual(['a2', 'a3', 'c1']);
    expect(ids(store.byTrace('a'))).toEqual(['a2', 'a3']);
    expect(store.byTrace('b')).toEqual([]);
    expect(store.stats()).toMatchObject({ spans: 3, dropped_by_count: 1, dropped_by_retention: 1, traces: 2 });
  });

  test('without retention_seconds, sweep drops nothing', () => {
    const store = new SpanStore();
    store.add(span({ trace_id: 'a', span_id: 'ancient', start: -1e9, end: -1e9 }));
    expect(store.sweep(Date.now())).toBe(0);
    expect(store.size).toBe(1);
  });
});

/** global.gc: exposed when node runs with --expose-gc, else enabled at run time through V8 flags (undefined when neither works). */
function findGc(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

describe('a million spans', () => {
  test('through a store capped at 10,000 spans: 10,000 held, bytes bounded, heap growth bounded', () => {
    const gc = findGc();
    if (!gc) console.log('a million spans: heap growth not checked: no way to run the garbage collector (run node with --expose-gc)');
    gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const store = new SpanStore({ max_spans: 10_000 });
    const started = performance.now();
    let largest = 0;
    const total = 1_000_000;
    for (let i = 0; i < total; i++) {
      // Traces of 10 spans: a root and nine children, with a few attributes.
      const trace = `trace-${Math.floor(i / 10)}`;
      const s = span({
        trace_id: trace,
        span_id: `span-${i}`,
        parent: i % 10 === 0 ? null : `span-${i - (i % 10)}`,
        name: i % 10 === 0 ? 'GET /orders' : 'db.query',
        start: i,
        end: i + (i % 7),
        service: 'orders',
        attributes: [
          ['http.method', 'GET'],
          ['n', String(i)],
        ],
      });
      if (i >= total - 10_000) largest = Math.max(largest, sizeOf(s));
      store.add(s);
    }
    const elapsedMs = performance.now() - started;
    const stats = store.stats();
    expect(stats.spans).toBe(10_000);
    expect(stats.dropped_by_count).toBe(total - 10_000);
    expect(stats.dropped_by_bytes).toBe(0);
    expect(stats.traces).toBe(1_000);
    expect(stats.bytes).toBe([...store.all()].reduce((n, s) => n + sizeOf(s), 0));
    expect(stats.bytes).toBeLessThanOrEqual(10_000 * largest);
    expect(store.byTrace(`trace-${total / 10 - 1}`)).toHaveLength(10);
    expect(store.byTrace('trace-0')).toEqual([]);
    expect([...store.all()][0]!.start_time_unix_nano).toBe(nanoAt(total - 10_000));
    let heapNote = '';
    if (gc) {
      gc();
      const growthMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
      heapNote = `, heap growth after GC with the store alive ${growthMb.toFixed(1)} MB`;
      // 10,000 small spans take a few MB; a store that kept all 1,000,000 would take hundreds.
      expect(growthMb).toBeLessThan(64);
    }
    console.log(`a million spans: ${elapsedMs.toFixed(0)} ms, ${stats.spans} held, ${(stats.bytes / 2 ** 20).toFixed(2)} MB estimated${heapNote}`);
  });
});
