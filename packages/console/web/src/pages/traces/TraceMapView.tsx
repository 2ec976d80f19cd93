import { useId, useMemo } from 'react';
import { serviceColorVar } from './colors.js';
import { formatNs } from './model/format.js';
import { type PlacedNode, layoutMap, mapNodeId, traceMap } from './model/trace-map.js';
import type { TraceModel } from './model/tree.js';

const NODE_W = 210;
const NODE_H = 56;
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The trace as a map (SVG): what ran, per service, as nodes in columns by call depth; calls as edges with their count and latency. */
export function TraceMapView({
  model,
  serviceIndex,
  onSelect,
  selected,
}: {
  model: TraceModel;
  serviceIndex: Map<string, number>;
  onSelect: (spanId: string | undefined) => void;
  selected: number | undefined;
}) {
  const arrowId = useId().replace(/:/g, '');
  const map = useMemo(() => traceMap(model), [model]);
  const layout = useMemo(() => layoutMap(map, { nodeWidth: NODE_W, nodeHeight: NODE_H, gapX: 36, gapY: 64, margin: 24 }), [map]);
  const placed = useMemo(() => new Map(layout.nodes.map((n) => [n.id, n])), [layout]);
  const firstSpan = useMemo(() => {
    const m = new Map<string, number>();
    for (const node of model.nodes) {
      const id = mapNodeId(node.span);
      if (!m.has(id)) m.set(id, node.index);
    }
    return m;
  }, [model]);
  const selectedNode = selected !== undefined && model.nodes[selected] ? mapNodeId(model.nodes[selected].span) : undefined;
  const width = layout.width + 90;
  const height = layout.height + 20;

  const edgePath = (a: PlacedNode, b: PlacedNode): { d: string; lx: number; ly: number } => {
    if (a.id === b.id) {
      // A call of itself: a loop on the box's right side.
      const x = a.x + NODE_W;
      const y = a.y + NODE_H / 2;
      return { d: `M ${x} ${y - 12} C ${x + 46} ${y - 34}, ${x + 46} ${y + 34}, ${x} ${y + 12}`, lx: x + 40, ly: y };
    }
    if (b.layer > a.layer) {
      const x1 = a.x + NODE_W / 2;
      const y1 = a.y + NODE_H;
      const x2 = b.x + NODE_W / 2;
      const y2 = b.y;
      const dy = Math.max(20, (y2 - y1) / 2);
      return { d: `M ${x1} ${y1} C ${x1} ${y1 + dy}, ${x2} ${y2 - dy}, ${x2} ${y2}`, lx: (x1 + x2) / 2, ly: (y1 + y2) / 2 };
    }
    // Back to an earlier (or the same) row: around the boxes' right sides.
    const sx = a.x + NODE_W;
    const sy = a.y + NODE_H / 2;
    const tx = b.x + NODE_W;
    const ty = b.y + NODE_H / 2;
    const out = Math.max(sx, tx) + 60;
    return { d: `M ${sx} ${sy} C ${out} ${sy}, ${out} ${ty}, ${tx} ${ty}`, lx: out - 12, ly: (sy + ty) / 2 };
  };

  return (
    <div className="trc-map" data-testid="trace-map">
      <p className="hint trc-map-hint">
        Each box is a function (or span name) in a service, with its number of spans; each arrow, calls from one to the other: how many and their average
        duration (hover for the longest). Click a box to select its first span.
      </p>
      <svg
        width={width}
        height={height}
        viewBox={`0 -10 ${width} ${height}`}
        role="img"
        aria-label={`Trace map: ${map.nodes.length} nodes, ${map.edges.length} edges`}
      >
        <defs>
          <marker id={arrowId} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="trc-map-arrow" />
          </marker>
        </defs>
        {map.edges.map((e) => {
          const a = placed.get(e.from);
          const b = placed.get(e.to);
          if (!a || !b) return null;
          const { d, lx, ly } = edgePath(a, b);
          const label = `×${e.count.toLocaleString()} · avg ${formatNs(e.totalNs / e.count)}`;
          return (
            <g key={e.id} className={`trc-map-edge${e.errors > 0 ? ' error' : ''}`} data-testid="map-edge">
              <title>{`${a.label} → ${b.label}: ${e.count} calls, average ${formatNs(e.totalNs / e.count)}, longest ${formatNs(e.maxNs)}${e.errors ? `, ${e.errors} failed` : ''}`}</title>
              <path d={d} markerEnd={`url(#${arrowId})`} />
              <rect x={lx - label.length * 3.3 - 4} y={ly - 9} width={label.length * 6.6 + 8} height={16} rx={4} className="trc-map-edge-bg" />
              <text x={lx} y={ly + 3} textAnchor="middle" className="trc-map-edge-label">
                {label}
              </text>
            </g>
          );
        })}
        {layout.nodes.map((n) => {
          const spanIndex = firstSpan.get(n.id);
          const select = () => spanIndex !== undefined && onSelect(model.nodes[spanIndex]!.span.span_id);
          return (
            // biome-ignore lint/a11y/useSemanticElements: an SVG group cannot be a <button>; it takes focus and Enter like one
            <g
              key={n.id}
              transform={`translate(${n.x} ${n.y})`}
              className={`trc-map-node${n.id === selectedNode ? ' selected' : ''}${n.errors > 0 ? ' error' : ''}`}
              role="button"
              tabIndex={0}
              aria-label={`${n.label} in ${n.service}: ${n.count} spans`}
              onClick={select}
              onKeyDown={(e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  select();
                }
              }}
              data-testid="map-node"
            >
              <title>{`${n.label} (${n.service}): ${n.count} spans, ${formatNs(n.totalNs)} in all${n.errors ? `, ${n.errors} failed` : ''}`}</title>
              <rect width={NODE_W} height={NODE_H} rx={7} className="trc-map-box" />
              <rect width={6} height={NODE_H} rx={3} style={{ fill: serviceColorVar(serviceIndex.get(n.service) ?? 0) }} />
              <text x={14} y={22} className="trc-map-label">
                {clip(n.label, 24)}
              </text>
              <text x={14} y={42} className="trc-map-sub">
                {clip(n.service, 20)} · {n.count.toLocaleString()} span{n.count === 1 ? '' : 's'}
                {n.errors > 0 ? ` · ${n.errors} err` : ''}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
