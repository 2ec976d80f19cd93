import { useVirtualizer } from '@tanstack/react-virtual';
import { ChevronDown, ChevronRight, ChevronsDownUp, ChevronsUpDown } from 'lucide-react';
import { type KeyboardEvent, useEffect, useMemo, useRef, useState } from 'react';
import { serviceColorVar } from './colors.js';
import { formatNs } from './model/format.js';
import { type Axis, spanBox, timeTicks } from './model/scale.js';
import { type CriticalSegment, type TraceModel, ancestorIds, parentIds, visibleRows } from './model/tree.js';

const ROW_HEIGHT = 26;
/** Indentation stops growing past this depth (the depth is written instead). */
const MAX_INDENT_DEPTH = 24;

/**
 * The waterfall: one row per span on a shared time axis, as a collapsible tree; only the rows in view
 * are in the DOM, so a 10,000-span trace scrolls freely. The critical path is marked on the bars.
 * Keys: ↑/↓ select the previous/next span, ←/→ collapse/expand it.
 */
export function Waterfall({
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
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set());
  const [showCritical, setShowCritical] = useState(true);
  const scrollRef = useRef<HTMLDivElement>(null);
  const rows = useMemo(() => visibleRows(model, collapsed), [model, collapsed]);
  const rowOf = useMemo(() => {
    const m = new Map<number, number>();
    for (let row = 0; row < rows.length; row++) m.set(rows[row]!, row);
    return m;
  }, [rows]);
  const segments = useMemo(() => {
    const m = new Map<number, CriticalSegment[]>();
    for (const s of model.critical) {
      if (s.end <= s.start) continue;
      const list = m.get(s.index);
      if (list) list.push(s);
      else m.set(s.index, [s]);
    }
    return m;
  }, [model]);
  const ticks = useMemo(() => timeTicks(model.durationNs, 6), [model]);
  const axis: Axis = { start: 0, end: model.durationNs, width: 100 };

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 16,
    getItemKey: (i) => model.nodes[rows[i]!]?.span.span_id ?? i,
  });

  // A selected span (a deep link, a click in another view) is shown: its ancestors open, its row scrolled into view.
  const shownFor = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (selected === undefined || shownFor.current === selected) return;
    const hidden = ancestorIds(model, selected).filter((id) => collapsed.has(id));
    if (hidden.length > 0) {
      setCollapsed((c) => {
        const next = new Set(c);
        for (const id of hidden) next.delete(id);
        return next;
      });
      return;
    }
    const row = rowOf.get(selected);
    if (row === undefined) return;
    shownFor.current = selected;
    virtualizer.scrollToIndex(row, { align: 'auto' });
  }, [selected, model, collapsed, rowOf, virtualizer]);

  const toggle = (spanId: string) =>
    setCollapsed((c) => {
      const next = new Set(c);
      if (next.has(spanId)) next.delete(spanId);
      else next.add(spanId);
      return next;
    });

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const current = selected === undefined ? -1 : (rowOf.get(selected) ?? -1);
    const node = selected === undefined ? undefined : model.nodes[selected];
    let next: number | undefined;
    if (e.key === 'ArrowDown') next = current + 1;
    else if (e.key === 'ArrowUp') next = Math.max(0, current - 1);
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = rows.length - 1;
    else if (e.key === 'ArrowLeft' && node) {
      if (node.children.length > 0 && !collapsed.has(node.span.span_id)) toggle(node.span.span_id);
      else if (node.parent !== -1) onSelect(model.nodes[node.parent]!.span.span_id);
      e.preventDefault();
      return;
    } else if (e.key === 'ArrowRight' && node && collapsed.has(node.span.span_id)) {
      toggle(node.span.span_id);
      e.preventDefault();
      return;
    } else if (e.key === 'Escape') {
      onSelect(undefined);
      return;
    }
    if (next === undefined || rows.length === 0) return;
    e.preventDefault();
    const row = Math.min(rows.length - 1, Math.max(0, next));
    onSelect(model.nodes[rows[row]!]!.span.span_id);
    virtualizer.scrollToIndex(row, { align: 'auto' });
  };

  const criticalCount = useMemo(() => model.nodes.reduce((n, node) => n + (node.critical ? 1 : 0), 0), [model]);

  return (
    <div className="trc-wf" data-testid="waterfall">
      <div className="trc-view-toolbar">
        <button type="button" className="btn small" onClick={() => setCollapsed(new Set())} disabled={collapsed.size === 0}>
          <ChevronsUpDown size={14} aria-hidden="true" /> Expand all
        </button>
        <button
          type="button"
          className="btn small"
          onClick={() => setCollapsed(new Set(model.roots.flatMap((r) => (model.nodes[r]!.children.length > 0 ? [model.nodes[r]!.span.span_id] : []))))}
        >
          <ChevronsDownUp size={14} aria-hidden="true" /> Collapse all
        </button>
        <button
          type="button"
          className="btn small"
          onClick={() => setCollapsed(new Set(parentIds(model).filter((id) => model.nodes[model.byId.get(id)!]!.depth >= 1)))}
        >
          Top level only
        </button>
        <label className="check">
          <input type="checkbox" checked={showCritical} onChange={(e) => setShowCritical(e.target.checked)} data-testid="critical-toggle" />
          <span className="trc-critical-key" aria-hidden="true" />
          Critical path ({criticalCount.toLocaleString()} spans)
        </label>
        <span className="spacer" />
        <span className="muted small">
          {rows.length.toLocaleString()} of {model.nodes.length.toLocaleString()} spans shown · ↑↓ select · ←→ fold
        </span>
      </div>
      <div className="trc-wf-head" aria-hidden="true">
        <div className="trc-wf-label-head">Span</div>
        <div className="trc-wf-axis">
          {ticks.map((t) => (
            <span key={t.at} className="trc-tick" style={{ left: `${t.fraction * 100}%` }}>
              {t.label}
            </span>
          ))}
        </div>
      </div>
      <div
        ref={scrollRef}
        className="trc-wf-scroll"
        tabIndex={0}
        onKeyDown={onKeyDown}
        role="tree"
        aria-label="Spans of the trace"
        data-testid="waterfall-scroll"
      >
        <div className="trc-wf-sizer" style={{ height: virtualizer.getTotalSize() }}>
          <div className="trc-wf-grid" aria-hidden="true">
            {ticks.map((t) => (
              <span key={t.at} className="trc-grid-line" style={{ left: `${t.fraction * 100}%` }} />
            ))}
          </div>
          {virtualizer.getVirtualItems().map((item) => {
            const node = model.nodes[rows[item.index]!]!;
            const span = node.span;
            const isSelected = node.index === selected;
            const isCollapsed = collapsed.has(span.span_id);
            const box = spanBox(axis, node.start, node.end);
            const color = serviceColorVar(serviceIndex.get(span.service_name) ?? 0);
            const indent = Math.min(node.depth, MAX_INDENT_DEPTH);
            // The duration goes after the bar, else inside it (a wide bar near the end), else before it.
            const labelPlace = box.x + box.width <= 78 ? 'after' : box.width >= 18 ? 'inside' : 'before';
            return (
              <div
                key={item.key}
                role="treeitem"
                aria-level={node.depth + 1}
                aria-selected={isSelected}
                aria-expanded={node.children.length > 0 ? !isCollapsed : undefined}
                className={`trc-wf-row${isSelected ? ' selected' : ''}${showCritical && node.critical ? ' critical' : ''}${span.status === 'error' ? ' error' : ''}`}
                style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}
                data-testid="waterfall-row"
                data-span-id={span.span_id}
                tabIndex={-1}
                onClick={() => onSelect(span.span_id)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') onSelect(span.span_id);
                }}
              >
                <div className="trc-wf-label" style={{ paddingLeft: 6 + indent * 14 }} title={`${span.name} · ${span.service_name}`}>
                  {node.children.length > 0 ? (
                    <button
                      type="button"
                      className="trc-fold"
                      tabIndex={-1}
                      aria-label={isCollapsed ? `Expand ${span.name} (${node.descendants} spans)` : `Collapse ${span.name}`}
                      onClick={(e) => {
                        e.stopPropagation();
                        toggle(span.span_id);
                      }}
                    >
                      {isCollapsed ? <ChevronRight size={13} aria-hidden="true" /> : <ChevronDown size={13} aria-hidden="true" />}
                    </button>
                  ) : (
                    <span className="trc-fold-space" />
                  )}
                  {node.depth > MAX_INDENT_DEPTH && <span className="trc-depth small muted">{node.depth}·</span>}
                  <span className="trc-swatch" style={{ background: color }} aria-hidden="true" />
                  <span className="trc-wf-name mono">{span.name}</span>
                  <span className="trc-wf-service small muted">{span.service_name}</span>
                  {isCollapsed && <span className="badge small">+{node.descendants.toLocaleString()}</span>}
                </div>
                <div className="trc-wf-track">
                  <span className="trc-bar" style={{ left: `${box.x}%`, width: `${box.width}%`, background: color }}>
                    {showCritical &&
                      segments.get(node.index)?.map((s) => {
                        const seg = spanBox({ start: node.start, end: node.end, width: 100 }, s.start, s.end);
                        return <span key={s.start} className="trc-crit-seg" style={{ left: `${seg.x}%`, width: `${seg.width}%` }} />;
                      })}
                  </span>
                  <span
                    className={`trc-bar-label small${labelPlace === 'inside' ? ' inside' : ''}`}
                    style={
                      labelPlace === 'after'
                        ? { left: `${box.x + box.width}%` }
                        : labelPlace === 'inside'
                          ? { right: `${100 - box.x - box.width}%` }
                          : { right: `${100 - box.x}%` }
                    }
                  >
                    {formatNs(node.end - node.start)}
                  </span>
                </div>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
