import { useNavigate, useSearch } from '@tanstack/react-router';
import { ChevronsDown, Pause, Play } from 'lucide-react';
import { useCallback, useMemo, useState } from 'react';
import type { LogsUnavailableReason } from '../../../src/api-types.js';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { timeOfDay } from '../lib/format.js';
import { LogFilters, type UpdateSearch } from './logs/LogFilters.js';
import { LogList } from './logs/LogList.js';
import { MAX_LINES, RANGE_LABELS, filtersOf } from './logs/model.js';
import type { LogsSearch } from './logs/search.js';
import { useLogTail } from './logs/useLogTail.js';
import { LoadingLine } from './PageStatus.js';
import './logs/logs.css';

/** How to turn the log store on, for each reason it is off. */
function Unavailable({ reason, detail }: { reason: LogsUnavailableReason | undefined; detail: string | undefined }) {
  const config =
    reason === 'module_not_loaded'
      ? 'modules:\n  - name: flint-observability\n    config:\n      logs_enabled: true        # the default\n      logs_exporter: memory     # or both'
      : reason === 'logs_disabled'
        ? 'modules:\n  - name: flint-observability\n    config:\n      logs_enabled: true        # the default'
        : 'modules:\n  - name: flint-observability\n    config:\n      logs_exporter: both       # keep records in memory and send them to the collector';
  return (
    <div className="log-unavailable" data-testid="logs-unavailable">
      <EmptyState
        title={
          reason === 'module_not_loaded'
            ? 'Logs need flint-observability'
            : reason === 'logs_disabled'
              ? 'Log records are turned off'
              : 'Log records are exported, not kept'
        }
      >
        <p>{detail ?? 'The engine keeps no log records.'}</p>
        <p>
          Turn the log store on in the engine&apos;s <code>flint-config.yaml</code> and restart the engine:
        </p>
        <pre className="json log-config">{config}</pre>
        <p className="small">
          Then workers&apos; <code>Logger</code> lines (<code>engine::log::info</code> …), the records SDKs send and the engine&apos;s own lines show up here.
        </p>
      </EmptyState>
    </div>
  );
}

/** Log records of flint-observability: filters in the URL, a live tail (every 2 s, newest first) with Pause, each line expandable. */
export function LogsPage() {
  const search = useSearch({ from: '/logs' });
  const navigate = useNavigate({ from: '/logs' });
  const update: UpdateSearch = useCallback((patch, replace = false) => void navigate({ search: (s: LogsSearch) => ({ ...s, ...patch }), replace }), [navigate]);
  const { severity, range, from, to, q, trace_id, span_id } = search;
  const filters = useMemo(() => filtersOf({ severity, range, from, to, q, trace_id, span_id }), [severity, range, from, to, q, trace_id, span_id]);
  const [paused, setPaused] = useState(false);
  const tail = useLogTail(filters, paused);
  const data = tail.data;
  const lines = data?.available ? data.lines : [];
  const filtered = Boolean(severity || q || trace_id || span_id || range);

  return (
    <div className="page">
      <header className="page-header">
        <h1>Logs</h1>
        {data?.available && (
          <span className="badge" data-testid="log-count">
            {lines.length.toLocaleString()}
            {data.olderAvailable ? '+' : ''} lines
          </span>
        )}
        <span className="spacer" />
        {data?.available !== false && (
          <>
            <span className={`log-live small${paused ? ' paused' : ''}`} role="status" data-testid="tail-status">
              <span className="dot" aria-hidden="true" />
              {paused ? 'Paused' : 'Live'}
              {data?.updatedAt ? <span className="muted"> · updated {timeOfDay(data.updatedAt)}</span> : null}
            </span>
            <button
              type="button"
              className={`btn small${paused ? ' primary' : ''}`}
              data-testid="pause-button"
              aria-pressed={paused}
              onClick={() => setPaused((p) => !p)}
            >
              {paused ? <Play size={13} aria-hidden="true" /> : <Pause size={13} aria-hidden="true" />}
              {paused ? 'Resume' : 'Pause'}
            </button>
          </>
        )}
      </header>
      {data?.available !== false && <LogFilters search={search} update={update} />}
      {tail.error && data && <p className="error-text small log-pad">Refresh failed: {(tail.error as Error).message}</p>}
      {tail.isPending && !data ? (
        <div className="log-pad">{paused ? <p className="muted">Paused before the first load. Resume to read the lines.</p> : <LoadingLine />}</div>
      ) : tail.error && !data ? (
        <div className="log-pad">
          <ErrorBox error={tail.error} />
        </div>
      ) : data && !data.available ? (
        <Unavailable reason={data.reason} detail={data.detail} />
      ) : lines.length === 0 ? (
        filtered ? (
          <EmptyState title="No log lines match">
            <p>
              Nothing in {RANGE_LABELS[filters.range].toLowerCase()}
              {severity ? ` at ${severity} or above` : ''}
              {q ? ` containing “${q}”` : ''}
              {trace_id ? ` in trace ${trace_id}` : ''}. New lines appear here as they are written.
            </p>
            <button
              type="button"
              className="btn"
              onClick={() => update({ severity: undefined, range: 'all', q: undefined, trace_id: undefined, span_id: undefined })}
            >
              Show every line
            </button>
          </EmptyState>
        ) : (
          <EmptyState title="No log lines yet">
            Lines appear here as they are written: a worker&apos;s <code>new Logger(worker, &apos;my-service&apos;).info(&apos;…&apos;, data)</code>, a call of{' '}
            <code>engine::log::info</code>, the records SDKs send, and the engine&apos;s own lines.
          </EmptyState>
        )
      ) : (
        <div className="log-body-area">
          <LogList lines={lines} freshFrom={data?.freshFrom ?? 0} freshTo={data?.freshTo ?? 0} />
          {data?.olderAvailable && (
            <div className="log-more">
              {lines.length >= MAX_LINES ? (
                <span className="muted small">The newest {MAX_LINES.toLocaleString()} lines are shown; narrow the filters to see older ones.</span>
              ) : (
                <button type="button" className="btn small" data-testid="load-older" disabled={tail.isFetching} onClick={tail.loadOlder}>
                  <ChevronsDown size={13} aria-hidden="true" />
                  {tail.isFetching ? 'Loading…' : 'Load older lines'}
                </button>
              )}
            </div>
          )}
        </div>
      )}
    </div>
  );
}
