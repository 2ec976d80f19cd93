/**
 * The Flow page's pure graph helpers (web/src/pages/flow/graph.ts): dagre's left-to-right layout with
 * saved positions over it, dragging into the saved layout, hiding unconnected nodes, tones and labels.
 */
import { describe, expect, it } from 'vitest';
import type { FlowNode } from '../../src/api-types.js';
import {
  NODE_WIDTH,
  compactCount,
  edgeLabel,
  edgeTone,
  formatPercent,
  formatRate,
  layoutPositions,
  nodeHref,
  nodeSubtitle,
  nodeTone,
  shapeKey,
  visibleGraph,
  withMoved,
} from '../../web/src/pages/flow/graph.js';

const nodes = [{ id: 'trigger:h' }, { id: 'fn:a' }, { id: 'fn:b' }, { id: 'fn:c' }];
const edges = [
  { id: 'trigger:h|trigger|fn:a', source: 'trigger:h', target: 'fn:a' },
  { id: 'fn:a|call|fn:b', source: 'fn:a', target: 'fn:b' },
  { id: 'fn:a|call|fn:c', source: 'fn:a', target: 'fn:c' },
];

describe('layoutPositions', () => {
  it('lays a chain out left to right, each rank a column apart, siblings one above the other', () => {
    const p = layoutPositions(nodes, edges);
    expect(Object.keys(p).sort()).toEqual(['fn:a', 'fn:b', 'fn:c', 'trigger:h']);
    expect(p['trigger:h']!.x).toBeLessThan(p['fn:a']!.x);
    expect(p['fn:a']!.x - p['trigger:h']!.x).toBeGreaterThanOrEqual(NODE_WIDTH);
    expect(p['fn:b']!.x).toBe(p['fn:c']!.x);
    expect(p['fn:b']!.y).not.toBe(p['fn:c']!.y);
    for (const pos of Object.values(p)) {
      expect(Number.isFinite(pos.x) && Number.isFinite(pos.y)).toBe(true);
    }
  });

  it('puts saved nodes where they were dropped, and lays the others out', () => {
    const auto = layoutPositions(nodes, edges);
    const p = layoutPositions(nodes, edges, { 'fn:b': { x: -500, y: 1234.5 }, 'fn:gone': { x: 1, y: 1 } });
    expect(p['fn:b']).toEqual({ x: -500, y: 1234.5 });
    expect(p['fn:a']).toEqual(auto['fn:a']);
    expect(p['fn:gone']).toBeUndefined();
  });

  it('copes with loops, self edges, edges to unknown nodes and an empty graph', () => {
    const p = layoutPositions(
      [{ id: 'a' }, { id: 'b' }],
      [
        { id: '1', source: 'a', target: 'b' },
        { id: '2', source: 'b', target: 'a' },
        { id: '3', source: 'a', target: 'a' },
        { id: '4', source: 'a', target: 'nowhere' },
      ],
    );
    expect(Object.keys(p)).toEqual(['a', 'b']);
    expect(layoutPositions([], [])).toEqual({});
  });
});

describe('the saved layout and what is shown', () => {
  it('withMoved adds dragged nodes to the saved positions, rounded like the server keeps them', () => {
    const saved = { 'fn:a': { x: 1, y: 2 } };
    const next = withMoved(saved, [{ id: 'fn:b', position: { x: 10.26, y: -3.04 } }]);
    expect(next).toEqual({ 'fn:a': { x: 1, y: 2 }, 'fn:b': { x: 10.3, y: -3 } });
    expect(saved).toEqual({ 'fn:a': { x: 1, y: 2 } });
  });

  it('visibleGraph hides nodes without any edge only when asked', () => {
    const all = [...nodes, { id: 'fn:alone' }];
    expect(visibleGraph(all, edges, false).nodes).toHaveLength(5);
    expect(visibleGraph(all, edges, true).nodes.map((n) => n.id)).toEqual(['trigger:h', 'fn:a', 'fn:b', 'fn:c']);
  });

  it('shapeKey changes with the node and edge ids only', () => {
    expect(shapeKey(nodes, edges)).toBe(shapeKey([...nodes], [...edges]));
    expect(shapeKey(nodes, edges)).not.toBe(shapeKey(nodes, edges.slice(1)));
  });
});

describe('tones and labels', () => {
  it('colours an edge by its failures', () => {
    expect(edgeTone({ calls: 0, errors: 0 })).toBe('idle');
    expect(edgeTone({ calls: 100, errors: 0 })).toBe('ok');
    expect(edgeTone({ calls: 100, errors: 3 })).toBe('warn');
    expect(edgeTone({ calls: 100, errors: 6 })).toBe('error');
    expect(nodeTone({ stats: { total: 4, success: 0, error: 4 } })).toBe('error');
    expect(nodeTone({ missing: true })).toBe('warn');
    expect(nodeTone({})).toBe('idle');
  });

  it('labels an edge with its count, failures and average time', () => {
    expect(edgeLabel({ calls: 0, errors: 0, avg_ms: null })).toBeUndefined();
    expect(edgeLabel({ calls: 3, errors: 0, avg_ms: 12.4 })).toBe('3× · 12 ms');
    expect(edgeLabel({ calls: 15_300, errors: 2, avg_ms: 0.44 })).toBe('15k× · 2 err · 0.4 ms');
    expect(edgeLabel({ calls: 1, errors: 1, avg_ms: 2500 })).toBe('1× · 1 err · 2.5 s');
  });

  it('formats counts, rates and percentages compactly', () => {
    expect([compactCount(999), compactCount(1200), compactCount(34_567), compactCount(1_500_000)]).toEqual(['999', '1.2k', '35k', '1.5M']);
    expect([formatRate(0), formatRate(0.25), formatRate(42.4)]).toEqual(['0/s', '0.3/s', '42/s']);
    expect([formatPercent(0), formatPercent(0.004), formatPercent(0.5)]).toEqual(['0%', '0.4%', '50%']);
  });

  it('says what a node is, and links it to its page', () => {
    const f: FlowNode = { id: 'fn:a', kind: 'function', label: 'a', function_id: 'a', stats: { total: 200, success: 190, error: 10, rate: 3 } };
    expect(nodeSubtitle(f)).toBe('200 calls · 3/s · 5% err');
    expect(nodeHref(f)).toEqual({ to: '/functions', search: { fn: 'a' } });
    const t: FlowNode = { id: 'trigger:1', kind: 'trigger', label: 'GET /x', trigger_id: '1', trigger_type: 'http', status: 'parked' };
    expect(nodeSubtitle(t)).toBe('http · parked');
    expect(nodeHref(t)).toEqual({ to: '/triggers', search: { trigger: '1' } });
    expect(nodeHref({ id: 'topic:o', kind: 'topic', label: 'o', topic: 'o' })).toEqual({ to: '/queues', search: { queue: 'o' } });
    expect(nodeHref({ id: 'scope:c', kind: 'scope', label: 'c', scope: 'c' })).toEqual({ to: '/states', search: { scope: 'c' } });
    expect(nodeHref({ ...t, missing: true })).toBeUndefined();
  });
});
