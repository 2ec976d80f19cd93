import { Link } from '@tanstack/react-router';
import { X } from 'lucide-react';
import type { FlowEdge, FlowNode } from '../../../../src/api-types.js';
import { absoluteTime, formatDuration, relativeTime, useNow } from '../../lib/format.js';
import { EDGE_KIND_TEXT, edgeTone, formatPercent, formatRate, nodeHref, nodeSubtitle } from './graph.js';

type Select = (sel: { node?: string; edge?: string }) => void;

function NodeName({ node, onSelect }: { node: FlowNode | undefined; onSelect: Select }) {
  if (!node) return <span className="muted">(not shown)</span>;
  return (
    <button type="button" className="link-button mono" onClick={() => onSelect({ node: node.id })}>
      {node.label}
    </button>
  );
}

function EdgeRow({ edge, other, onSelect }: { edge: FlowEdge; other: FlowNode | undefined; onSelect: Select }) {
  return (
    <li className="flow-edge-row">
      <button type="button" className="link-button" onClick={() => onSelect({ edge: edge.id })} title={EDGE_KIND_TEXT[edge.kind]}>
        <span className={`badge ${toneClass(edge)}`}>{edge.kind}</span>
      </button>
      <NodeName node={other} onSelect={onSelect} />
      <span className="muted small">
        {edge.calls > 0 ? `${edge.calls}×${edge.errors > 0 ? `, ${edge.errors} failed` : ''}` : edge.registered ? 'not seen yet' : ''}
      </span>
    </li>
  );
}

const toneClass = (e: FlowEdge) => {
  const t = edgeTone(e);
  return t === 'idle' ? '' : t;
};

/** The selected node: what it is, its figures, a link to its page, and its edges. */
export function NodeDetail({
  node,
  nodes,
  edges,
  onSelect,
  onClose,
}: {
  node: FlowNode;
  nodes: Map<string, FlowNode>;
  edges: FlowEdge[];
  onSelect: Select;
  onClose: () => void;
}) {
  const href = nodeHref(node);
  const incoming = edges.filter((e) => e.target === node.id);
  const outgoing = edges.filter((e) => e.source === node.id);
  const s = node.stats;
  return (
    <aside className="detail flow-detail" aria-label="Node details" data-testid="flow-detail">
      <div className="detail-header">
        <h2 className="mono">{node.label}</h2>
        <button type="button" className="btn ghost small close" onClick={onClose} aria-label="Close details">
          <X size={16} aria-hidden />
        </button>
      </div>
      <p className="muted detail-sub">{nodeSubtitle(node)}</p>
      <dl className="grid-info">
        <dt>Kind</dt>
        <dd>{node.kind}</dd>
        {node.trigger_type && (
          <>
            <dt>Trigger type</dt>
            <dd>{node.trigger_type}</dd>
          </>
        )}
        {node.trigger_id && (
          <>
            <dt>Trigger id</dt>
            <dd className="mono">{node.trigger_id}</dd>
          </>
        )}
        {node.kind === 'trigger' && node.function_id && (
          <>
            <dt>Function</dt>
            <dd>
              <Link to="/functions" search={{ fn: node.function_id }} className="mono">
                {node.function_id}
              </Link>
            </dd>
          </>
        )}
        {s && (
          <>
            <dt>Calls</dt>
            <dd data-testid="flow-detail-calls">
              {s.total} ({s.success} ok, {s.error} failed{s.total > 0 ? `, ${formatPercent(s.error / s.total)}` : ''})
            </dd>
            {s.rate !== undefined && (
              <>
                <dt>Now</dt>
                <dd>
                  {formatRate(s.rate)}
                  {s.error_rate !== undefined && s.error_rate > 0 ? `, ${formatRate(s.error_rate)} failing` : ''}
                </dd>
              </>
            )}
          </>
        )}
      </dl>
      {node.missing && <p className="hint">Seen in recent traces, but not in the registry now (its worker disconnected, or it was removed).</p>}
      {href && (
        <Link to={href.to} search={href.search} className="btn" data-testid="flow-open">
          Open {node.kind === 'topic' ? 'the queue' : node.kind === 'scope' ? 'the scope' : `the ${node.kind}`}
        </Link>
      )}
      <section className="section">
        <h3>In ({incoming.length})</h3>
        {incoming.length === 0 ? (
          <p className="muted small">Nothing leads here.</p>
        ) : (
          <ul className="row-list flow-edge-list">
            {incoming.map((e) => (
              <EdgeRow key={e.id} edge={e} other={nodes.get(e.source)} onSelect={onSelect} />
            ))}
          </ul>
        )}
      </section>
      <section className="section">
        <h3>Out ({outgoing.length})</h3>
        {outgoing.length === 0 ? (
          <p className="muted small">Nothing seen leaving it.</p>
        ) : (
          <ul className="row-list flow-edge-list">
            {outgoing.map((e) => (
              <EdgeRow key={e.id} edge={e} other={nodes.get(e.target)} onSelect={onSelect} />
            ))}
          </ul>
        )}
      </section>
    </aside>
  );
}

/** The selected edge: both ends, its figures, and links to its newest trace and newest failed trace. */
export function EdgeDetail({ edge, nodes, onSelect, onClose }: { edge: FlowEdge; nodes: Map<string, FlowNode>; onSelect: Select; onClose: () => void }) {
  const now = useNow();
  return (
    <aside className="detail flow-detail" aria-label="Edge details" data-testid="flow-detail">
      <div className="detail-header">
        <h2>
          <span className={`badge ${toneClass(edge)}`}>{edge.kind}</span> edge
        </h2>
        <button type="button" className="btn ghost small close" onClick={onClose} aria-label="Close details">
          <X size={16} aria-hidden />
        </button>
      </div>
      <p className="muted detail-sub">{EDGE_KIND_TEXT[edge.kind]}</p>
      <dl className="grid-info">
        <dt>From</dt>
        <dd>
          <NodeName node={nodes.get(edge.source)} onSelect={onSelect} />
        </dd>
        <dt>To</dt>
        <dd>
          <NodeName node={nodes.get(edge.target)} onSelect={onSelect} />
        </dd>
        {edge.via && (
          <>
            <dt>Queue</dt>
            <dd className="mono">{edge.via}</dd>
          </>
        )}
        <dt>Seen</dt>
        <dd data-testid="flow-edge-calls">{edge.calls === 0 ? 'not in the recent traces' : `${edge.calls} times, ${edge.errors} failed`}</dd>
        {edge.avg_ms !== null && (
          <>
            <dt>Average time</dt>
            <dd>{formatDuration(edge.avg_ms)}</dd>
          </>
        )}
        {edge.last_seen_ms !== undefined && (
          <>
            <dt>Last seen</dt>
            <dd title={absoluteTime(edge.last_seen_ms)}>{relativeTime(edge.last_seen_ms, now)}</dd>
          </>
        )}
        <dt>Source</dt>
        <dd>{edge.registered ? 'declared by the registry' : 'learned from traces'}</dd>
      </dl>
      <div className="flow-detail-actions">
        {edge.last_trace_id && (
          <Link to="/traces" search={{ trace: edge.last_trace_id }} className="btn" data-testid="flow-edge-trace">
            Open the latest trace
          </Link>
        )}
        {edge.last_error_trace_id && (
          <Link to="/traces" search={{ trace: edge.last_error_trace_id }} className="btn danger" data-testid="flow-edge-error-trace">
            Open the latest failed trace
          </Link>
        )}
      </div>
    </aside>
  );
}
