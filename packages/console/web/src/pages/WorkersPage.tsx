import { getRouteApi } from '@tanstack/react-router';
import { useMemo, useRef } from 'react';
import type { WorkerInfo } from '../../../src/api-types.js';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { matches, useNow } from '../lib/format.js';
import { isClustered, useCluster, useConsoleConfig, useWorkers } from '../lib/queries.js';
import { useUrlText } from '../lib/url-text.js';
import { LoadingLine } from './PageStatus.js';
import { EngineGroups } from './workers/EngineGroups.js';
import { groupByEngine } from './workers/groups.js';
import { WorkerDetail, WorkerGone } from './workers/WorkerDetail.js';
import { WorkerTable } from './workers/WorkerTable.js';
import './pages.css';
import './workers.css';

const route = getRouteApi('/workers');

/**
 * Workers: every connected worker, its runtime and load; select one for its details and functions.
 * In a cluster (the workers carry `engine`) they are grouped by engine, the console's own first.
 */
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

  const clustered = isClustered(all);
  const cluster = useCluster(clustered);

  const list = useMemo(
    () => [...(all ?? [])].filter((w) => matches(q, w.name, w.id, w.runtime, w.engine)).sort((a, b) => a.connected_at_ms - b.connected_at_ms),
    [all, q],
  );
  const groups = useMemo(() => (clustered ? groupByEngine(all ?? [], list, cluster.data, Boolean(q)) : []), [clustered, all, list, cluster.data, q]);
  const selfNode = cluster.data?.available ? (cluster.data.node_id ?? undefined) : undefined;
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
        {clustered && cluster.data?.available && (
          <span className="muted small" data-testid="cluster-summary">
            cluster <span className="mono">{cluster.data.cluster}</span> · {cluster.data.members.length}{' '}
            {cluster.data.members.length === 1 ? 'engine' : 'engines'}
          </span>
        )}
        <span className="spacer" />
        <input
          type="search"
          className="input search-input"
          placeholder={clustered ? 'Filter by name, id, runtime or engine  ( / )' : 'Filter by name, id or runtime  ( / )'}
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
              {clustered ? (
                <EngineGroups
                  groups={groups}
                  membersKnown={cluster.data?.available === true}
                  membersAt={cluster.dataUpdatedAt}
                  selected={search.worker}
                  q={search.q}
                  now={now}
                />
              ) : (
                <WorkerTable workers={list} selected={search.worker} q={search.q} now={now} />
              )}
            </>
          )}
        </section>
        {search.worker &&
          (selected ? (
            <WorkerDetail worker={selected} now={now} selfNode={selfNode} />
          ) : all ? (
            <WorkerGone id={search.worker} last={seen.current.get(search.worker)} />
          ) : null)}
      </div>
    </div>
  );
}
