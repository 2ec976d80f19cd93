import { ZoomOut } from 'lucide-react';
import { type MouseEvent, useEffect, useMemo, useRef, useState } from 'react';
import { useCanvasColors } from './colors.js';
import { useElementSize } from './hooks.js';
import { flameHit, flameRows, zoomTo } from './model/flame.js';
import { formatNs } from './model/format.js';
import { type Axis, fromX, spanBox, timeTicks, toX } from './model/scale.js';
import type { TraceModel } from './model/tree.js';

const ROW_H = 20;

/**
 * The flame graph, drawn on a canvas: width is time, each row one level of nesting. Only the rows in
 * view are drawn (any depth scrolls); hover shows a span, click selects it, double-click zooms to it.
 * Colours come from the theme's CSS variables and are read again when the theme changes.
 */
export function FlameGraph({
  model,
  selected,
  onSelect,
  serviceIndex,
}: {
  model: TraceModel;
  selected: number | undefined;
  onSelect: (spanId: string | undefined) => void;
  serviceIndex: Map<string, number>;
}) {
  const rows = useMemo(() => flameRows(model), [model]);
  const [zoom, setZoom] = useState<{ start: number; end: number } | undefined>(undefined);
  const [hover, setHover] = useState<{ index: number; x: number; y: number } | undefined>(undefined);
  const [scrollTop, setScrollTop] = useState(0);
  const [setScrollEl, size] = useElementSize<HTMLDivElement>();
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const colors = useCanvasColors(canvasRef);

  const window_ = zoom ?? { start: 0, end: model.durationNs };
  const width = size.width;
  const totalHeight = rows.length * ROW_H;
  const height = Math.max(ROW_H, Math.min(size.height, totalHeight));
  const axis: Axis = useMemo(
    () => ({ start: window_.start, end: Math.max(window_.end, window_.start + 1), width: Math.max(1, width) }),
    [window_.start, window_.end, width],
  );
  const ticks = useMemo(() => timeTicks(window_.end - window_.start, 6), [window_.start, window_.end]);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !colors || width === 0) return;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = colors.raised;
    ctx.fillRect(0, 0, width, height);
    ctx.font = '11.5px "JetBrains Mono", ui-monospace, monospace';
    ctx.textBaseline = 'middle';
    const charWidth = ctx.measureText('M').width || 7;
    const first = Math.max(0, Math.floor(scrollTop / ROW_H));
    const last = Math.min(rows.length - 1, Math.ceil((scrollTop + height) / ROW_H));
    const outline = (index: number, color: string, lineWidth: number) => {
      const node = model.nodes[index];
      if (!node || node.depth < first || node.depth > last) return;
      const box = spanBox(axis, node.start, node.end, 1);
      ctx.strokeStyle = color;
      ctx.lineWidth = lineWidth;
      ctx.strokeRect(box.x + lineWidth / 2, node.depth * ROW_H - scrollTop + lineWidth / 2, Math.max(1, box.width - lineWidth), ROW_H - 1 - lineWidth);
    };
    for (let depth = first; depth <= last; depth++) {
      const y = depth * ROW_H - scrollTop;
      const row = rows[depth]!;
      let lastPixel = -1;
      for (let k = 0; k < row.length; k++) {
        const node = model.nodes[row[k]!]!;
        if (node.end < axis.start || node.start > axis.end) continue;
        const box = spanBox(axis, node.start, node.end, 1);
        // Spans thinner than a pixel that land on the pixel just drawn add nothing.
        if (box.width <= 1 && Math.floor(box.x) === lastPixel) continue;
        lastPixel = Math.floor(box.x);
        const span = node.span;
        ctx.fillStyle = colors.services[(serviceIndex.get(span.service_name) ?? 0) % colors.services.length]!;
        ctx.fillRect(box.x, y, Math.max(1, box.width - (box.width > 3 ? 1 : 0)), ROW_H - 1);
        if (span.status === 'error') {
          ctx.fillStyle = colors.error;
          ctx.fillRect(box.x, y, Math.max(1, box.width - 1), 3);
        }
        // Parallel siblings overlap: the label only uses the part the next one (drawn over it) leaves.
        const next = row[k + 1] === undefined ? undefined : model.nodes[row[k + 1]!]!;
        const visible = next && next.start < node.end ? Math.min(box.width, toX(axis, next.start) - box.x) : box.width;
        if (visible > 28) {
          const room = Math.floor((visible - 8) / charWidth);
          const label = span.name.length > room ? `${span.name.slice(0, Math.max(1, room - 1))}…` : span.name;
          ctx.fillStyle = colors.onService;
          ctx.fillText(label, box.x + 4, y + ROW_H / 2);
        }
      }
    }
    if (hover) outline(hover.index, colors.text, 1);
    if (selected !== undefined) outline(selected, colors.focus, 2);
  }, [model, rows, colors, width, height, scrollTop, axis, hover, selected, serviceIndex]);

  const hitAt = (e: MouseEvent<HTMLCanvasElement>): number | undefined => {
    const rect = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const depth = Math.floor((e.clientY - rect.top + scrollTop) / ROW_H);
    const slack = ((axis.end - axis.start) / axis.width) * 3;
    return flameHit(model, rows, depth, fromX(axis, x), slack);
  };

  const hovered = hover ? model.nodes[hover.index] : undefined;

  return (
    <div className="trc-flame" data-testid="flame-graph">
      <div className="trc-view-toolbar">
        <button type="button" className="btn small" onClick={() => setZoom(undefined)} disabled={!zoom}>
          <ZoomOut size={14} aria-hidden="true" /> Reset zoom
        </button>
        <button
          type="button"
          className="btn small"
          onClick={() => selected !== undefined && setZoom(zoomTo(model, selected))}
          disabled={selected === undefined}
        >
          Zoom to selected
        </button>
        <span className="spacer" />
        <span className="muted small">Hover for details · click selects · double-click zooms</span>
      </div>
      <div className="trc-flame-axis" aria-hidden="true" style={{ width: width || undefined }}>
        {ticks.map((t) => (
          <span key={t.at} className="trc-tick" style={{ left: `${t.fraction * 100}%` }}>
            {window_.start + t.at === 0 ? '0' : formatNs(window_.start + t.at)}
          </span>
        ))}
      </div>
      <div className="trc-flame-wrap">
        <div ref={setScrollEl} className="trc-flame-scroll" onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}>
          <div style={{ height: totalHeight, position: 'relative' }}>
            <canvas
              ref={canvasRef}
              className="trc-flame-canvas"
              style={{ width, height }}
              role="img"
              aria-label={`Flame graph of ${model.nodes.length} spans, ${rows.length} levels deep (the waterfall lists the same spans)`}
              data-testid="flame-canvas"
              onMouseMove={(e) => {
                const index = hitAt(e);
                const wrap = e.currentTarget.parentElement?.parentElement?.getBoundingClientRect();
                setHover(index === undefined ? undefined : { index, x: e.clientX - (wrap?.left ?? 0), y: e.clientY - (wrap?.top ?? 0) });
              }}
              onMouseLeave={() => setHover(undefined)}
              onClick={(e) => {
                const index = hitAt(e);
                onSelect(index === undefined ? undefined : model.nodes[index]!.span.span_id);
              }}
              onDoubleClick={(e) => {
                const index = hitAt(e);
                if (index !== undefined) setZoom(zoomTo(model, index));
              }}
            />
          </div>
        </div>
        {hovered && hover && (
          <div
            className="trc-tooltip"
            role="tooltip"
            data-testid="flame-tooltip"
            style={{ left: Math.min(hover.x + 14, Math.max(0, width - 300)), top: hover.y + 16 }}
          >
            <strong className="mono">{hovered.span.name}</strong>
            <span className="muted">{hovered.span.service_name}</span>
            <span>
              {formatNs(hovered.end - hovered.start)} <span className="muted">· self {formatNs(hovered.self)}</span>
            </span>
            <span className="muted">
              at +{formatNs(hovered.start)}
              {hovered.span.status === 'error' ? ' · error' : ''}
              {hovered.critical ? ' · critical path' : ''}
            </span>
          </div>
        )}
      </div>
    </div>
  );
}
