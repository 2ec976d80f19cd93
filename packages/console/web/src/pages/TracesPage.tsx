import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { Pause, Play } from 'lucide-react';
import { useState } from 'react';
import type { TraceListResponse } from '../../../src/api-types.js';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { api } from '../lib/api.js';
import { LoadingLine } from './PageStatus.js';
import { FilterBar } from './traces/FilterBar.js';
import { FILTER_KEYS, TRACE_SORTS, type TraceSort, type TracesSearch, activeFilters, listRequest, withoutFilters } from './traces/model/filters.js';
import { TraceTable } from './traces/TraceTable.js';
import { TraceView } from './traces/TraceView.js';
import { Unavailable } from './traces/Unavailable.js';
import './pages.css';
import './traces/traces.css';

const route = getRouteApi('/traces');

/** How often the list is read again while live. */
const POLL_MS = 2500;
const PAGE = 100;
const MAX_LIMIT = 1000;

const SORT_LABEL: Record<TraceSort, string> = { newest: 'Newest first', oldest: 'Oldest first', slowest: 'Slowest first' };

/**
 * Traces: the traces flint-observability keeps, filtered (every filter in the URL, combined with AND) and
 * refreshed every 2.5 s while live; a selected trace (`?trace=`) opens as a waterfall, a flame graph, a
 * breakdown by service and a map, with a span's details (`?span=`).
 */
export function TracesPage() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const [paused, setPaused] = useState(false);
  const [limit, setLimit] = useState(PAGE);
  const traceOpen = search.trace !== undefined;

  const update = (patch: Partial<TracesSearch>, replace = true) => void navigate({ search: (prev: TracesSearch) => ({ ...prev, ...patch }), replace });
  const filterKey = FILTER_KEYS.map((k) => search[k]);
  const list = useQuery({
    queryKey: ['traces', filterKey, search.sort ?? 'newest', limit],
    // A relative time range ends at each read's "now", so new traces keep coming in.
    queryFn: () => api.post<TraceListResponse>('_console/traces', listRequest(search, Date.now(), limit)),
    refetchInterval: paused || traceOpen ? false : POLL_MS,
    placeholderData: keepPreviousData,
    enabled: !traceOpen,
  });
  const data = list.data;
  const filters = activeFilters(search);

  return (
    <div className="page trc-page" data-testid="traces-page">
      <header className="page-header">
        <h1>Traces</h1>
        {!traceOpen && data?.available && (
          <span className="badge count-badge" data-testid="trace-total" title="Root spans matching the filters">
            {data.total.toLocaleString()}
          </span>
        )}
        <span className="spacer" />
        {!traceOpen && (
          <>
            <span className={`trc-live small${paused ? ' paused' : ''}`} role="status" data-testid="live-state">
              <span className="trc-live-dot" aria-hidden="true" />
              {paused ? 'Paused' : list.isFetching ? 'Live · updating' : 'Live'}
            </span>
            <button
              type="button"
              className="btn small"
              onClick={() => setPaused((p) => !p)}
              aria-pressed={paused}
              data-testid="pause-button"
              title={paused ? 'Resume the live list' : 'Stop refreshing the list'}
            >
              {paused ? <Play size={14} aria-hidden="true" /> : <Pause size={14} aria-hidden="true" />}
              {paused ? 'Resume' : 'Pause'}
            </button>
            <label className="sr-only" htmlFor="trc-sort">
              Sort
            </label>
            <select
              id="trc-sort"
              className="input trc-sort"
              value={search.sort ?? 'newest'}
              onChange={(e) => update({ sort: e.target.value === 'newest' ? undefined : (e.target.value as TraceSort) })}
            >
              {TRACE_SORTS.map((s) => (
                <option key={s} value={s}>
                  {SORT_LABEL[s]}
                </option>
              ))}
            </select>
          </>
        )}
      </header>
      {traceOpen ? (
        <TraceView traceId={search.trace as string} search={search} update={update} />
      ) : (
        <>
          <FilterBar search={search} update={update} active={filters} onClear={() => void navigate({ search: withoutFilters(search), replace: true })} />
          <div className="page-body">
            <div className="page-list trc-list">
              {list.isPending ? (
                <LoadingLine />
              ) : !data ? (
                <div className="page-error">
                  <ErrorBox error={list.error} />
                </div>
              ) : !data.available ? (
                <Unavailable detail={data.detail} />
              ) : data.traces.length === 0 ? (
                filters > 0 ? (
                  <EmptyState title="No trace matches these filters">
                    <button type="button" className="btn" onClick={() => void navigate({ search: withoutFilters(search), replace: true })}>
                      Clear the filters
                    </button>
                  </EmptyState>
                ) : (
                  <EmptyState title="No traces yet">
                    <p>Call a function or send a request to an HTTP trigger: its trace shows up here within a few seconds.</p>
                  </EmptyState>
                )
              ) : (
                <>
                  {list.isError && <ErrorBox error={list.error} />}
                  <TraceTable traces={data.traces} search={search} listKey={JSON.stringify([filterKey, search.sort, limit, list.isPlaceholderData])} />
                  {data.total > data.traces.length && (
                    <p className="trc-more small muted">
                      Showing {data.traces.length.toLocaleString()} of {data.total.toLocaleString()}.{' '}
                      {limit < MAX_LIMIT ? (
                        <button type="button" className="btn small" onClick={() => setLimit((l) => Math.min(MAX_LIMIT, l + PAGE))}>
                          Show more
                        </button>
                      ) : (
                        'Narrow the filters to see the others.'
                      )}
                    </p>
                  )}
                </>
              )}
            </div>
          </div>
        </>
      )}
    </div>
  );
}
