import { Link } from '@tanstack/react-router';
import type { FlowEdge, FlowNode } from '../../../../src/api-types.js';
import { formatDuration } from '../../lib/format.js';
import { EDGE_KIND_TEXT, edgeTone } from './graph.js';

/** The edges as a table (the graph's accessible twin): both ends, kind, counts, time and the newest trace. */
export function EdgeList({
  edges,
  nodes,
  selected,
  onSelect,
}: {
  edges: FlowEdge[];
  nodes: Map<string, FlowNode>;
  selected: string | undefined;
  onSelect: (sel: { node?: string; edge?: string }) => void;
}) {
  const sorted = [...edges].sort((a, b) => b.calls - a.calls || a.id.localeCompare(b.id));
  const name = (id: string) => nodes.get(id)?.label ?? id;
  return (
    <div className="flow-list">
      <table className="table" data-testid="flow-edge-table">
        <thead>
          <tr>
            <th scope="col">From</th>
            <th scope="col">Kind</th>
            <th scope="col">To</th>
            <th scope="col" className="num">
              Seen
            </th>
            <th scope="col" className="num">
              Failed
            </th>
            <th scope="col" className="num">
              Avg
            </th>
            <th scope="col">Trace</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((e) => {
            const tone = edgeTone(e);
            return (
              <tr key={e.id} className={selected === e.id ? 'selected' : undefined} data-testid="flow-edge-row" data-edge-id={e.id}>
                <td>
                  <button type="button" className="link-button mono" onClick={() => onSelect({ node: e.source })}>
                    {name(e.source)}
                  </button>
                </td>
                <td>
                  <button type="button" className="link-button" onClick={() => onSelect({ edge: e.id })} title={EDGE_KIND_TEXT[e.kind]}>
                    <span className={`badge ${tone === 'idle' ? '' : tone}`}>{e.kind}</span>
                  </button>
                </td>
                <td>
                  <button type="button" className="link-button mono" onClick={() => onSelect({ node: e.target })}>
                    {name(e.target)}
                  </button>
                </td>
                <td className="num">{e.calls}</td>
                <td className="num">{e.errors > 0 ? <span className="error-text">{e.errors}</span> : <span className="muted">0</span>}</td>
                <td className="num">{e.avg_ms === null ? '—' : formatDuration(e.avg_ms)}</td>
                <td>
                  {e.last_error_trace_id ? (
                    <Link to="/traces" search={{ trace: e.last_error_trace_id }}>
                      latest failed
                    </Link>
                  ) : e.last_trace_id ? (
                    <Link to="/traces" search={{ trace: e.last_trace_id }}>
                      latest
                    </Link>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
