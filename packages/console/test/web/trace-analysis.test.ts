/** The Traces page's breakdown by service and function, trace map, flame graph geometry and span details (pure functions). */
import { describe, expect, it } from 'vitest';
import { serviceBreakdown } from '../../web/src/pages/traces/model/breakdown.js';
import { flameHit, flameRows, zoomTo } from '../../web/src/pages/traces/model/flame.js';
import { parseBaggage, severityClass, spanBaggage, spanErrors, spanLogs } from '../../web/src/pages/traces/model/span-info.js';
import { layoutMap, mapNodeId, traceMap } from '../../web/src/pages/traces/model/trace-map.js';
import { buildTraceModel } from '../../web/src/pages/traces/model/tree.js';
import { T0, classicTrace, span } from './trace-fixtures.js';

const MS = 1e6;

describe('serviceBreakdown', () => {
  it('sums spans, errors, total and self time per service and per function, largest self time first', () => {
    const b = serviceBreakdown(buildTraceModel(classicTrace()));
    const services = Object.fromEntries(b.services.map((r) => [r.service, [r.count, r.errors, r.totalNs / MS, r.selfNs / MS]]));
    // flint: root (100, self 10) + e (10, self 10); shop: a (40, self 40, error) + b (80, self 20); db: c 30 + d 30.
    expect(services).toEqual({ flint: [2, 0, 110, 20], shop: [2, 1, 120, 60], db: [2, 0, 60, 60] });
    expect(b.services.map((r) => r.service)).toEqual(['shop', 'db', 'flint']);
    // Self times add up to the work done (here 140 ms of spans running in parallel in a 100 ms trace).
    expect(b.selfTotalNs / MS).toBe(140);
    const fns = b.functions.map((r) => `${r.service}/${r.operation}:${r.count}:${r.selfNs / MS}`);
    expect(fns).toContain('shop/fn::a:1:40');
    expect(fns).toContain('flint/GET /orders:1:10');
    expect(b.functions).toHaveLength(6);
    expect(b.functions.find((r) => r.operation === 'fn::b')!.maxNs / MS).toBe(80);
  });

  it('groups repeated calls of one function', () => {
    const spans = [
      span('r', null, 0, 10),
      span('x1', 'r', 0, 2, { name: 'call inc', attributes: [['function_id', 'inc']] }),
      span('x2', 'r', 3, 7, { name: 'call inc', attributes: [['function_id', 'inc']] }),
    ];
    const inc = serviceBreakdown(buildTraceModel(spans)).functions.find((r) => r.operation === 'inc')!;
    expect([inc.count, inc.totalNs / MS, inc.selfNs / MS]).toEqual([2, 6, 6]);
  });
});

describe('traceMap', () => {
  const chain = () => [
    span('http', null, 0, 20, { name: 'GET /chain', attributes: [['function_id', 'chain::entry']] }),
    span('call1', 'http', 1, 19, { name: 'call chain::entry', attributes: [['function_id', 'chain::entry']] }),
    span('h1', 'call1', 2, 18, { name: 'handle chain::entry', service_name: 'shop', attributes: [['function_id', 'chain::entry']] }),
    span('call2', 'h1', 3, 9, { name: 'call chain::step', attributes: [['function_id', 'chain::step']] }),
    span('call3', 'h1', 10, 12, { name: 'call chain::step', status: 'error', attributes: [['function_id', 'chain::step']] }),
  ];

  it('makes a node per service and operation and an edge per caller → callee with counts and latency', () => {
    const map = traceMap(buildTraceModel(chain()));
    expect(map.nodes.map((n) => `${n.service}/${n.label}×${n.count}`)).toEqual([
      'flint/GET /chain×1',
      'flint/chain::entry×1',
      'shop/chain::entry×1',
      'flint/chain::step×2',
    ]);
    expect(map.nodes[0]!.root).toBe(true);
    const edges = map.edges.map((e) => `${e.from.split('\u0000')[1]}→${e.to.split('\u0000')[1]}×${e.count}/${e.totalNs / MS}/${e.maxNs / MS}/${e.errors}`);
    expect(edges).toEqual(['GET /chain→chain::entry×1/18/18/0', 'chain::entry→chain::entry×1/16/16/0', 'chain::entry→chain::step×2/8/6/1']);
    expect(mapNodeId(chain()[3]!)).toBe(map.nodes[3]!.id);
  });

  it('lays nodes out in rows by call depth, centred on the widest row', () => {
    const map = traceMap(buildTraceModel(classicTrace()));
    const layout = layoutMap(map, { nodeWidth: 100, nodeHeight: 40, gapX: 50, gapY: 10, margin: 10 });
    const at = Object.fromEntries(layout.nodes.map((n) => [n.label, [n.layer, n.row, n.x, n.y]]));
    // Row 0: root; row 1: a, b, e (in order of appearance); row 2: c, d.
    expect(at['GET /orders']).toEqual([0, 0, 10 + 150, 10]);
    expect(at['fn::a']).toEqual([1, 0, 10, 60]);
    expect(at['fn::e']).toEqual([1, 2, 310, 60]);
    expect(at['fn::c']).toEqual([2, 0, 10 + 75, 110]);
    expect(layout.width).toBe(10 * 2 + 3 * 100 + 2 * 50);
    expect(layout.height).toBe(10 * 2 + 3 * 40 + 2 * 10);
  });

  it('lays nodes out in columns by call depth, centred on the tallest column', () => {
    const map = traceMap(buildTraceModel(classicTrace()));
    const layout = layoutMap(map, { direction: 'right', nodeWidth: 100, nodeHeight: 40, gapX: 50, gapY: 10, margin: 10 });
    const at = Object.fromEntries(layout.nodes.map((n) => [n.label, [n.layer, n.row, n.x, n.y]]));
    expect(at['GET /orders']).toEqual([0, 0, 10, 10 + 50]);
    expect(at['fn::a']).toEqual([1, 0, 160, 10]);
    expect(at['fn::e']).toEqual([1, 2, 160, 110]);
    expect(at['fn::c']![0]).toBe(2);
    expect(layout.width).toBe(10 * 2 + 3 * 100 + 2 * 50);
    expect(layout.height).toBe(10 * 2 + 3 * 40 + 2 * 10);
  });

  it('places a recursive call’s node once, its loop an edge to itself', () => {
    const spans = [span('r', null, 0, 10, { name: 'walk', attributes: [] }), span('r2', 'r', 1, 9, { name: 'walk', attributes: [] })];
    const map = traceMap(buildTraceModel(spans));
    expect(map.nodes).toHaveLength(1);
    expect(map.edges).toEqual([expect.objectContaining({ from: map.nodes[0]!.id, to: map.nodes[0]!.id, count: 1 })]);
    expect(layoutMap(map).nodes).toHaveLength(1);
  });
});

describe('the flame graph', () => {
  it('puts the spans of each depth in a row by start and finds the span under a point', () => {
    const model = buildTraceModel(classicTrace());
    const rows = flameRows(model);
    expect(rows.map((r) => r.map((i) => model.nodes[i]!.span.span_id))).toEqual([['root'], ['a', 'b', 'e'], ['c', 'd']]);
    const hit = (depth: number, ms: number, slackMs = 0) => {
      const i = flameHit(model, rows, depth, ms * MS, slackMs * MS);
      return i === undefined ? undefined : model.nodes[i]!.span.span_id;
    };
    expect(hit(0, 50)).toBe('root');
    expect(hit(1, 5)).toBe('a');
    expect(hit(1, 65)).toBe('e');
    expect(hit(1, 95)).toBeUndefined();
    expect(hit(2, 52)).toBeUndefined();
    // Slack widens thin spans only.
    expect(hit(2, 52, 4)).toBeUndefined();
    const thin = buildTraceModel([span('r', null, 0, 100), span('t', 'r', 40, 40.01)]);
    const thinRows = flameRows(thin);
    expect(flameHit(thin, thinRows, 1, 41 * MS)).toBeUndefined();
    expect(flameHit(thin, thinRows, 1, 41 * MS, 2 * MS)).toBe(thin.byId.get('t'));
    expect(hit(5, 10)).toBeUndefined();
    expect(zoomTo(model, model.byId.get('c')!)).toEqual({ start: 18.5 * MS, end: 51.5 * MS });
  });
});

describe('span details', () => {
  it('lists exception events and the error status description', () => {
    const failed = span('f', null, 0, 1, {
      status: 'error',
      status_description: 'out_of_stock: No stock for A1',
      attributes: [['error.type', 'out_of_stock']],
      events: [
        {
          name: 'exception',
          timestamp_unix_nano: T0,
          attributes: { 'exception.type': 'out_of_stock', 'exception.message': 'No stock for A1', 'exception.stacktrace': 'Error: …\n  at x' },
        },
      ],
    });
    expect(spanErrors(failed)).toEqual([{ type: 'out_of_stock', message: 'No stock for A1', stacktrace: 'Error: …\n  at x', timestamp: T0, source: 'event' }]);
    const bare = span('g', null, 0, 1, {
      status: 'error',
      status_description: 'invocation_timeout: took too long',
      attributes: [['error.type', 'invocation_timeout']],
    });
    expect(spanErrors(bare)).toEqual([
      { type: 'invocation_timeout', message: 'invocation_timeout: took too long', stacktrace: undefined, timestamp: undefined, source: 'status' },
    ]);
    expect(spanErrors(span('ok', null, 0, 1))).toEqual([]);
  });

  it('reads baggage from baggage.* attributes and a W3C baggage attribute', () => {
    const s = span('b', null, 0, 1, {
      attributes: [
        ['baggage.tenant', 'acme'],
        ['http.route', '/x'],
        ['baggage', 'user%20id=42;ttl=5, flint.trigger.type=log,=bad'],
      ],
    });
    expect(spanBaggage(s)).toEqual([
      ['tenant', 'acme'],
      ['user id', '42'],
      ['flint.trigger.type', 'log'],
    ]);
    expect(parseBaggage('')).toEqual([]);
    expect(spanBaggage(span('n', null, 0, 1))).toEqual([]);
  });

  it('picks the log records of one span, oldest first, and classes their severity', () => {
    const rec = (spanId: string, t: number, body: string) => ({
      timestamp_unix_nano: t,
      severity_number: 9,
      severity_text: 'INFO',
      body,
      attributes: {},
      trace_id: 'abc',
      span_id: spanId,
      service_name: 'shop',
    });
    const logs = [rec('x', 30, 'late'), rec('y', 10, 'other'), rec('x', 20, 'early')];
    expect(spanLogs(logs, 'x').map((l) => l.body)).toEqual(['early', 'late']);
    expect([severityClass(21), severityClass(17), severityClass(13), severityClass(9), severityClass(5)]).toEqual(['error', 'error', 'warn', 'info', '']);
  });
});
