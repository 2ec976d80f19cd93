import { Link, getRouteApi } from '@tanstack/react-router';
import { X } from 'lucide-react';
import { Fragment } from 'react';
import type { WorkerInfo } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { absoluteTime, formatBytes, formatDuration, relativeTime, shortId } from '../../lib/format.js';

const route = getRouteApi('/workers');

/** A worker's display name: its name, else the first 8 characters of its id. */
export const workerName = (w: Pick<WorkerInfo, 'id' | 'name'>) => w.name ?? shortId(w.id);

/** The badge tone of a worker status. */
export function statusTone(status: string): string {
  if (status === 'connected' || status === 'available') return 'ok';
  if (status === 'busy') return 'info';
  if (status === 'disconnected') return 'error';
  return '';
}

/** The link that closes the panel (keeps the list's filter). */
function CloseLink() {
  const search = route.useSearch();
  return (
    <Link to="/workers" search={{ q: search.q }} className="btn ghost small close" aria-label="Close worker details" title="Close">
      <X size={16} aria-hidden="true" />
    </Link>
  );
}

/** A metric value, formatted by what its name says it measures. */
function metricValue(key: string, value: unknown): string {
  if (typeof value !== 'number') return typeof value === 'string' ? value : JSON.stringify(value);
  const k = key.toLowerCase();
  if (k.includes('bytes') || k.includes('memory') || k.includes('heap') || k.includes('rss')) return formatBytes(value);
  if (k.endsWith('_ms') || k.includes('lag')) return formatDuration(value);
  if (k.includes('percent') || k.includes('cpu')) return `${Math.round(value * 10) / 10}%`;
  return String(value);
}

const metricLabel = (key: string) => key.replace(/_/g, ' ').replace(/\bms\b/, '(ms)');

/** Memory, CPU and event-loop lag first, then whatever else the worker reports. */
function metricOrder(key: string): number {
  const k = key.toLowerCase();
  if (k.includes('memory') || k.includes('heap') || k.includes('rss')) return 0;
  if (k.includes('cpu')) return 1;
  if (k.includes('lag') || k.includes('loop')) return 2;
  return 3;
}

function Metrics({ metrics }: { metrics: Record<string, unknown> }) {
  const entries = Object.entries(metrics).sort(([a], [b]) => metricOrder(a) - metricOrder(b) || a.localeCompare(b));
  if (entries.length === 0) return null;
  return (
    <section className="section" aria-labelledby="worker-metrics">
      <h3 id="worker-metrics">Latest metrics</h3>
      <dl className="grid-info metrics-list">
        {entries.map(([k, v]) => (
          <Fragment key={k}>
            <dt>{metricLabel(k)}</dt>
            <dd className="mono">{metricValue(k, v)}</dd>
          </Fragment>
        ))}
      </dl>
    </section>
  );
}

/**
 * The selected worker: every field the engine reports, its metrics and its functions. In a cluster,
 * the engine it is connected to (`selfNode`: the console's own engine, when known).
 */
export function WorkerDetail({ worker: w, now, selfNode }: { worker: WorkerInfo; now: number; selfNode?: string }) {
  const fns = [...w.functions].sort();
  return (
    <aside className="detail" aria-labelledby="worker-detail-title" data-testid="worker-detail">
      <div className="detail-header">
        <div style={{ flex: 1, minWidth: 0 }}>
          <h2 id="worker-detail-title">{workerName(w)}</h2>
          <p className="muted small detail-sub">
            {w.runtime}
            {w.version ? ` ${w.version}` : ''} · connected {relativeTime(w.connected_at_ms, now)}
          </p>
        </div>
        <CloseLink />
      </div>
      <dl className="grid-info">
        <dt>ID</dt>
        <dd>
          <span className="id-line">
            <code>{w.id}</code>
            <CopyButton text={w.id} label="Copy worker id" />
          </span>
        </dd>
        <dt>Name</dt>
        <dd>{w.name ?? <span className="muted">none</span>}</dd>
        <dt>Runtime</dt>
        <dd>{w.runtime}</dd>
        <dt>Version</dt>
        <dd>{w.version ?? <span className="muted">unknown</span>}</dd>
        <dt>OS</dt>
        <dd>{w.os ?? <span className="muted">unknown</span>}</dd>
        <dt>IP address</dt>
        <dd className="mono">{w.ip_address ?? <span className="muted">unknown</span>}</dd>
        <dt>PID</dt>
        <dd className="mono">{w.pid ?? <span className="muted">unknown</span>}</dd>
        <dt>Isolation</dt>
        <dd>{w.isolation ?? <span className="muted">none</span>}</dd>
        {w.engine !== undefined && (
          <>
            <dt>Engine</dt>
            <dd data-testid="worker-engine">
              <span className="mono">{w.engine}</span>
              {w.engine === selfNode && <span className="muted"> (this engine)</span>}
            </dd>
          </>
        )}
        <dt>Connected at</dt>
        <dd>
          <time dateTime={new Date(w.connected_at_ms).toISOString()}>{absoluteTime(w.connected_at_ms)}</time>{' '}
          <span className="muted">({relativeTime(w.connected_at_ms, now)})</span>
        </dd>
        <dt>Status</dt>
        <dd>
          <span className={`badge ${statusTone(w.status)}`}>{w.status}</span>
          {w.internal && <span className="badge"> internal</span>}
        </dd>
        <dt>In flight</dt>
        <dd>{w.active_invocations > 0 ? <span className="inflight">{w.active_invocations} calls</span> : <span className="muted">none</span>}</dd>
      </dl>
      {w.latest_metrics && <Metrics metrics={w.latest_metrics} />}
      <section className="section" aria-labelledby="worker-functions">
        <h3 id="worker-functions">Functions ({fns.length})</h3>
        {fns.length === 0 ? (
          <p className="muted">This worker registered no functions.</p>
        ) : (
          <ul className="fn-links">
            {fns.map((id) => (
              <li key={id}>
                <Link to="/functions" search={{ fn: id }} className="code-id" title={id}>
                  {id}
                </Link>
              </li>
            ))}
          </ul>
        )}
      </section>
    </aside>
  );
}

/** A selected worker that is no longer connected (or never was). */
export function WorkerGone({ id, last }: { id: string; last?: WorkerInfo }) {
  return (
    <aside className="detail" aria-labelledby="worker-detail-title" data-testid="worker-detail">
      <div className="detail-header">
        <h2 id="worker-detail-title">{last ? workerName(last) : shortId(id)}</h2>
        <CloseLink />
      </div>
      <div className="card result error" role="status">
        <strong>This worker disconnected</strong>
        <div className="muted">
          {last
            ? 'It was connected earlier; its functions are no longer available unless another worker provides them.'
            : 'No connected worker has this id: it has disconnected, or the link is from another engine.'}
        </div>
      </div>
      <dl className="grid-info">
        <dt>ID</dt>
        <dd>
          <span className="id-line">
            <code>{id}</code>
            <CopyButton text={id} label="Copy worker id" />
          </span>
        </dd>
        {last && (
          <>
            <dt>Runtime</dt>
            <dd>
              {last.runtime}
              {last.version ? ` ${last.version}` : ''}
            </dd>
            <dt>Connected at</dt>
            <dd>{absoluteTime(last.connected_at_ms)}</dd>
            <dt>Functions</dt>
            <dd>
              {last.functions.length === 0 ? (
                <span className="muted">none</span>
              ) : (
                <>
                  {last.functions.slice(0, 12).join(', ')}
                  {last.functions.length > 12 && <span className="muted"> and {last.functions.length - 12} more</span>}
                </>
              )}
            </dd>
          </>
        )}
      </dl>
    </aside>
  );
}
