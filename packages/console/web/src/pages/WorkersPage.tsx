import { Link, getRouteApi } from '@tanstack/react-router';
import { useMemo, useRef } from 'react';
import type { WorkerInfo } from '../../../src/api-types.js';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { absoluteTime, matches, relativeTime, shortId, useNow } from '../lib/format.js';
import { useConsoleConfig, useWorkers } from '../lib/queries.js';
import { useUrlText } from '../lib/url-text.js';
import { LoadingLine } from './PageStatus.js';
import { WorkerDetail, WorkerGone, statusTone } from './workers/WorkerDetail.js';
import './pages.css';
import './workers.css';

const route = getRouteApi('/workers');

/** Workers: every connected worker, its runtime and load; select one for its details and functions. */
export function WorkersPage() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const workers = useWorkers();
  const config = useConsoleConfig();
  const now = useNow();
  const [q, setQ] = useUrlText(search.q, (value) => void navigate({ search: (prev) => ({ ...prev, q: value }), replace: true }));

  const all = workers.data?.workers;
  // The last seen version of every worker, so a selected one that disconnects can still be named.
  const seen = useRef(new Map<string, WorkerInfo>());
  for (const w of all ?? []) seen.current.set(w.id, w);

  const list = useMemo(
    () => [...(all ?? [])].filter((w) => matches(q, w.name, w.id, w.runtime)).sort((a, b) => a.connected_at_ms - b.connected_at_ms),
    [all, q],
  );
  const selected = search.worker ? all?.find((w) => w.id === search.worker) : undefined;
  const bridgeUrl = config.data?.engine.bridge_url ?? 'ws://127.0.0.1:49134';

  return (
    <div className="page">
      <header className="page-header">
        <h1>Workers</h1>
        {all && (
          <span className="badge count-badge" title="Connected workers">
            {q ? `${list.length} of ${all.length}` : all.length}
          </span>
        )}
        <span className="spacer" />
        <input
          type="search"
          className="input search-input"
          placeholder="Filter by name, id or runtime  ( / )"
          aria-label="Filter workers"
          data-search
          value={q}
          onChange={(e) => setQ(e.target.value)}
        />
      </header>
      <div className="page-body">
        <section className="page-list" aria-label="Worker list">
          {workers.isPending ? (
            <LoadingLine />
          ) : workers.isError && !all ? (
            <div className="page-error">
              <ErrorBox error={workers.error} />
            </div>
          ) : !all || all.length === 0 ? (
            <EmptyState title="No workers connected">
              <p>
                Start one with <code>npx flint start --worker "node my-worker.mjs"</code> or <code>FLINT_URL={bridgeUrl} node my-worker.mjs</code>
              </p>
            </EmptyState>
          ) : list.length === 0 ? (
            <EmptyState title={`No worker matches “${q}”`}>
              <button type="button" className="btn" onClick={() => setQ('')}>
                Clear the filter
              </button>
            </EmptyState>
          ) : (
            <>
              {workers.isError && (
                <div className="page-error">
                  <ErrorBox error={workers.error} />
                </div>
              )}
              <table className="table workers-table">
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
                  {list.map((w) => {
                    const isSelected = w.id === search.worker;
                    return (
                      <tr key={w.id} data-testid="worker-row" data-worker-id={w.id} className={isSelected ? 'selected' : undefined}>
                        <td>
                          <Link
                            to="/workers"
                            search={{ q: search.q, worker: w.id }}
                            className="stretched-link"
                            aria-current={isSelected ? 'true' : undefined}
                            title={w.id}
                          >
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
            </>
          )}
        </section>
        {search.worker &&
          (selected ? <WorkerDetail worker={selected} now={now} /> : all ? <WorkerGone id={search.worker} last={seen.current.get(search.worker)} /> : null)}
      </div>
    </div>
  );
}
