/** The Traces page's tree model: depth-first order, self time, critical path, folding (pure functions, no DOM). */
import { describe, expect, it } from 'vitest';
import { ancestorIds, buildTraceModel, operationOf, visibleRows } from '../../web/src/pages/traces/model/tree.js';
import { classicTrace, span } from './trace-fixtures.js';

const MS = 1e6;
const ids = (model: ReturnType<typeof buildTraceModel>, indexes: number[]) => indexes.map((i) => model.nodes[i]!.span.span_id);

describe('buildTraceModel', () => {
  it('orders spans depth-first, parents first and siblings by start, with their depth', () => {
    const model = buildTraceModel(classicTrace());
    expect(model.nodes.map((n) => n.span.span_id)).toEqual(['root', 'a', 'b', 'c', 'd', 'e']);
    expect(model.nodes.map((n) => n.depth)).toEqual([0, 1, 1, 2, 2, 1]);
    expect(ids(model, model.roots)).toEqual(['root']);
    const b = model.nodes[model.byId.get('b')!]!;
    expect(ids(model, b.children)).toEqual(['c', 'd']);
    expect(model.nodes[b.parent]!.span.span_id).toBe('root');
    expect(model.nodes[0]!.descendants).toBe(5);
    expect(b.descendants).toBe(2);
    expect(model.maxDepth).toBe(2);
    expect(model.durationNs).toBe(100 * MS);
    expect(b.start).toBe(10 * MS);
    expect(b.end).toBe(90 * MS);
    expect(model.services).toEqual(['flint', 'shop', 'db']);
    expect(model.errorCount).toBe(1);
  });

  it('makes a span whose parent is not held a root, and breaks a loop of parents at its earliest span', () => {
    const model = buildTraceModel([span('x', 'missing', 5, 10), span('p', 'q', 0, 20), span('q', 'p', 1, 19), span('k', 'q', 2, 3)]);
    expect(ids(model, model.roots)).toEqual(['p', 'x']);
    expect(model.nodes.map((n) => `${n.span.span_id}:${n.depth}`)).toEqual(['p:0', 'q:1', 'k:2', 'x:0']);
  });

  it('reads a span that ends before it starts as instant, and an empty trace as empty', () => {
    const model = buildTraceModel([span('r', null, 0, 10), span('bad', 'r', 5, 3)]);
    const bad = model.nodes[model.byId.get('bad')!]!;
    expect(bad.end).toBe(bad.start);
    const empty = buildTraceModel([]);
    expect(empty.nodes).toEqual([]);
    expect(empty.durationNs).toBe(0);
  });

  it('computes self time as the time no child ran, overlapping children counted once and clipped to the span', () => {
    const model = buildTraceModel(classicTrace());
    const self = (id: string) => model.nodes[model.byId.get(id)!]!.self / MS;
    // root 0–100: children cover 0–90 (a, b and e overlap) → 10 ms of its own.
    expect(self('root')).toBe(10);
    // b 10–90: c 20–50 and d 55–85 → 80 − 60 = 20.
    expect(self('b')).toBe(20);
    expect(self('c')).toBe(30);
    const clipped = buildTraceModel([span('r', null, 0, 10), span('late', 'r', 8, 30)]);
    expect(clipped.nodes[0]!.self / MS).toBe(8);
  });

  it('finds the critical path: the last-finishing child, then backwards from its start', () => {
    const model = buildTraceModel(classicTrace());
    const critical = model.nodes.filter((n) => n.critical).map((n) => n.span.span_id);
    expect(critical).toEqual(['root', 'a', 'b', 'c', 'd']);
    expect(model.nodes[model.byId.get('e')!]!.critical).toBe(false);
    const segments = model.critical.map((s) => [model.nodes[s.index]!.span.span_id, s.start / MS, s.end / MS]);
    expect(segments).toEqual([
      ['a', 0, 10],
      ['b', 10, 20],
      ['c', 20, 50],
      ['b', 50, 55],
      ['d', 55, 85],
      ['b', 85, 90],
      ['root', 90, 100],
    ]);
    // The segments cover the trace exactly once.
    expect(model.critical.reduce((sum, s) => sum + (s.end - s.start), 0)).toBe(model.durationNs);
  });

  it('follows the critical path through a parent whose child covers it whole', () => {
    const model = buildTraceModel([span('r', null, 0, 10), span('only', 'r', 0, 10), span('leaf', 'only', 2, 10)]);
    expect(model.nodes.every((n) => n.critical)).toBe(true);
    expect(model.critical.map((s) => [model.nodes[s.index]!.span.span_id, s.start / MS, s.end / MS])).toEqual([
      ['only', 0, 2],
      ['leaf', 2, 10],
    ]);
  });

  it('hides the descendants of folded spans and names a span’s ancestors', () => {
    const model = buildTraceModel(classicTrace());
    expect(ids(model, visibleRows(model, new Set()))).toEqual(['root', 'a', 'b', 'c', 'd', 'e']);
    expect(ids(model, visibleRows(model, new Set(['b'])))).toEqual(['root', 'a', 'b', 'e']);
    expect(ids(model, visibleRows(model, new Set(['root', 'b'])))).toEqual(['root']);
    expect(ancestorIds(model, model.byId.get('d')!)).toEqual(['b', 'root']);
  });

  it('names what a span ran: the function of call and handle spans, else the span name', () => {
    expect(operationOf(span('x', null, 0, 1))).toBe('fn::x');
    expect(operationOf(span('x', null, 0, 1, { name: 'handle orders::create', attributes: [['function_id', 'orders::create']] }))).toBe('orders::create');
    expect(operationOf(span('x', null, 0, 1, { name: 'GET /orders' }))).toBe('GET /orders');
  });

  it('builds a 10,000-span chain and a 10,000-span fan-out quickly, without recursion', () => {
    const chain = Array.from({ length: 10_000 }, (_, i) => span(`s${i}`, i === 0 ? null : `s${i - 1}`, i * 0.001, 20 - i * 0.001));
    const started = performance.now();
    const deep = buildTraceModel(chain.reverse());
    const fan = buildTraceModel([span('root', null, 0, 100), ...Array.from({ length: 9_999 }, (_, i) => span(`c${i}`, 'root', i * 0.01, i * 0.01 + 1))]);
    const took = performance.now() - started;
    expect(deep.maxDepth).toBe(9_999);
    expect(deep.nodes[0]!.descendants).toBe(9_999);
    expect(deep.nodes.every((n) => n.critical)).toBe(true);
    expect(fan.nodes).toHaveLength(10_000);
    expect(visibleRows(fan, new Set(['root']))).toEqual([0]);
    // A few ms each on an idle machine; generous for a busy CI.
    expect(took).toBeLessThan(4000);
  });
});
