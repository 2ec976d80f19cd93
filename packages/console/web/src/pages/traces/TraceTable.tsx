import { Link } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';
import type { TraceSummary } from '../../../../src/api-types.js';
import { absoluteTime, relativeTime, useNow } from '../../lib/format.js';
import type { TracesSearch } from './model/filters.js';
import { formatMs } from './model/format.js';
import { StatusBadge } from './StatusBadge.js';

const rowKey = (t: TraceSummary) => `${t.trace_id}:${t.span_id}`;

/**
 * The trace list: one row per root span, newest first by default; rows that came in since the last
 * refresh are marked a moment (not those of a new filter: `listKey` names the filters).
 */
export function TraceTable({ traces, search, listKey }: { traces: TraceSummary[]; search: TracesSearch; listKey: string }) {
  const now = useNow(5000);
  const seen = useRef<Set<string> | undefined>(undefined);
  const seenFor = useRef(listKey);
  if (seenFor.current !== listKey) {
    seenFor.current = listKey;
    seen.current = undefined;
  }
  const fresh = new Set<string>();
  if (seen.current) for (const t of traces) if (!seen.current.has(rowKey(t))) fresh.add(rowKey(t));
  useEffect(() => {
    seen.current ??= new Set();
    for (const t of traces) seen.current.add(rowKey(t));
  }, [traces]);
  const longest = Math.max(1e-9, ...traces.map((t) => t.duration_ms));

  return (
    <table className="table trc-table" data-testid="trace-table">
      <thead>
        <tr>
          <th scope="col">Trace ID</th>
          <th scope="col">Service</th>
          <th scope="col">Root span</th>
          <th scope="col" className="trc-num">
            Duration
          </th>
          <th scope="col">Status</th>
          <th scope="col" className="trc-num">
            Spans
          </th>
          <th scope="col">Started</th>
        </tr>
      </thead>
      <tbody>
        {traces.map((t) => {
          const others = t.services.length - 1;
          return (
            <tr key={rowKey(t)} className={`trc-row${fresh.has(rowKey(t)) ? ' trc-new' : ''}`} data-testid="trace-row" data-trace-id={t.trace_id}>
              <td className="trc-id-cell">
                <Link
                  to="/traces"
                  search={{ ...search, trace: t.trace_id, span: undefined, view: undefined, tab: undefined }}
                  className="row-button code-id"
                  title={`Open trace ${t.trace_id}`}
                  preload={false}
                >
                  {t.trace_id.slice(0, 16)}
                </Link>
              </td>
              <td className="trc-service" title={t.services.join(', ')}>
                {t.service_name}
                {others > 0 && <span className="muted small"> +{others}</span>}
              </td>
              <td className="trc-root-name mono" title={t.root_name}>
                {t.root_name}
              </td>
              <td className="trc-num trc-duration-cell">
                <span className="trc-duration-bar" style={{ width: `${Math.max(2, (t.duration_ms / longest) * 100)}%` }} aria-hidden="true" />
                <span className="trc-duration-text">{formatMs(t.duration_ms)}</span>
              </td>
              <td>
                <StatusBadge status={t.status} />
                {t.error_count ? (
                  <span className="muted small" title="Spans with an error in this trace">
                    {' '}
                    {t.error_count} err
                  </span>
                ) : null}
              </td>
              <td className="trc-num">{t.span_count ?? '–'}</td>
              <td className="trc-time" title={absoluteTime(t.start_time_ms)}>
                {relativeTime(t.start_time_ms, now)}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
