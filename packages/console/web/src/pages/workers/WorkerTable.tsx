import { Link } from '@tanstack/react-router';
import type { WorkerInfo } from '../../../../src/api-types.js';
import { absoluteTime, relativeTime, shortId } from '../../lib/format.js';
import { statusTone } from './WorkerDetail.js';

/**
 * Workers, one row each: name (links to its details), runtime, pid, when it connected, functions,
 * calls in flight and status. `grouped` (one table per engine in a cluster) gives every table the
 * same column widths, so that they line up.
 */
export function WorkerTable({
  workers,
  selected,
  q,
  now,
  grouped = false,
}: {
  workers: WorkerInfo[];
  selected: string | undefined;
  /** The page's filter, kept in the links. */
  q: string | undefined;
  now: number;
  grouped?: boolean;
}) {
  return (
    <table className={grouped ? 'table workers-table grouped' : 'table workers-table'}>
      {grouped && (
        <colgroup>
          <col />
          <col className="col-runtime" />
          <col className="col-pid" />
          <col className="col-connected" />
          <col className="col-functions" />
          <col className="col-inflight" />
          <col className="col-status" />
        </colgroup>
      )}
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Runtime</th>
          <th scope="col" className="num">
            PID
          </th>
          <th scope="col">Connected</th>
          <th scope="col" className="num">
            Functions
          </th>
          <th scope="col" className="num">
            In flight
          </th>
          <th scope="col">Status</th>
        </tr>
      </thead>
      <tbody>
        {workers.map((w) => {
          const isSelected = w.id === selected;
          return (
            <tr key={w.id} data-testid="worker-row" data-worker-id={w.id} className={isSelected ? 'selected' : undefined}>
              <td>
                <Link to="/workers" search={{ q, worker: w.id }} className="stretched-link" aria-current={isSelected ? 'true' : undefined} title={w.id}>
                  {w.name ?? <span className="mono">{shortId(w.id)}</span>}
                </Link>
                {w.internal && <span className="badge small"> internal</span>}
              </td>
              <td>
                {w.runtime}
                {w.version && <span className="muted"> {w.version}</span>}
              </td>
              <td className="num mono">{w.pid ?? '—'}</td>
              <td>
                <time dateTime={new Date(w.connected_at_ms).toISOString()} title={absoluteTime(w.connected_at_ms)}>
                  {relativeTime(w.connected_at_ms, now)}
                </time>
              </td>
              <td className="num">{w.function_count}</td>
              <td className="num">
                {w.active_invocations > 0 ? (
                  <span className="inflight" title={`${w.active_invocations} calls in flight`}>
                    {w.active_invocations}
                  </span>
                ) : (
                  <span className="muted">0</span>
                )}
              </td>
              <td>
                <span className={`badge ${statusTone(w.status)}`}>{w.status}</span>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
