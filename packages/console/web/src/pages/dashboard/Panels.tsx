import { Link } from '@tanstack/react-router';
import { Boxes, FunctionSquare, Zap } from 'lucide-react';
import type { FunctionInfo, QueuesResponse, RecentErrorsResponse, TriggerInfo, WorkerInfo } from '../../../../src/api-types.js';
import { absoluteTime, formatDuration, relativeTime } from '../../lib/format.js';
import { groupLabel, groupOf, sortGroups } from '../triggers/model.js';

const count = (n: number | undefined) => (n === undefined ? '…' : n.toLocaleString());
const plural = (n: number | undefined, word: string) => (n === 1 ? word : `${word}s`);

/** Workers, functions and triggers by type, each linking to its page. */
export function RegistryCards({
  workers,
  functions,
  triggers,
}: {
  workers: WorkerInfo[] | undefined;
  functions: FunctionInfo[] | undefined;
  triggers: TriggerInfo[] | undefined;
}) {
  const byWorker = functions?.filter((f) => (f.providers ?? []).some((p) => 'worker_id' in p)).length;
  const groups = new Map<string, number>();
  for (const t of triggers ?? []) groups.set(groupOf(t.trigger_type), (groups.get(groupOf(t.trigger_type)) ?? 0) + 1);
  const parked = triggers?.filter((t) => t.status !== 'active').length ?? 0;
  const busy = workers?.reduce((n, w) => n + w.active_invocations, 0) ?? 0;
  return (
    <div className="registry-grid">
      <Link to="/workers" className="card registry-card" data-testid="dash-workers">
        <Boxes size={18} aria-hidden className="registry-icon" />
        <span className="registry-count">{count(workers?.length)}</span>
        <span className="registry-label">{plural(workers?.length, 'worker')}</span>
        <span className="muted small">{busy > 0 ? `${busy} calls running` : 'connected now'}</span>
      </Link>
      <Link to="/functions" className="card registry-card" data-testid="dash-functions">
        <FunctionSquare size={18} aria-hidden className="registry-icon" />
        <span className="registry-count">{count(functions?.length)}</span>
        <span className="registry-label">{plural(functions?.length, 'function')}</span>
        <span className="muted small">{byWorker === undefined ? '' : `${byWorker} served by workers`}</span>
      </Link>
      <section className="card registry-card triggers-card" data-testid="dash-triggers" aria-label="Triggers by type">
        <Link to="/triggers" className="registry-head">
          <Zap size={18} aria-hidden className="registry-icon" />
          <span className="registry-count">{count(triggers?.length)}</span>
          <span className="registry-label">{plural(triggers?.length, 'trigger')}</span>
        </Link>
        {groups.size === 0 ? (
          <span className="muted small">{triggers ? 'none registered' : ''}</span>
        ) : (
          <ul className="trigger-types">
            {sortGroups([...groups.keys()]).map((g) => (
              <li key={g}>
                <Link to="/triggers" search={{ type: g }} data-testid="dash-trigger-type" data-type={g}>
                  <span>{groupLabel(g)}</span>
                  <span className="badge count-badge">{groups.get(g)}</span>
                </Link>
              </li>
            ))}
          </ul>
        )}
        {parked > 0 && <span className="badge warn">{parked} parked</span>}
      </section>
    </div>
  );
}

/** Queue depth and dead letters over every topic and named queue, with the busiest ones. */
export function QueuesPanel({ queues, error }: { queues: QueuesResponse | undefined; error: unknown }) {
  const list = queues?.queues ?? [];
  const depth = list.reduce((n, q) => n + q.depth, 0);
  const dead = list.reduce((n, q) => n + q.dead, 0);
  const notable = [...list]
    .filter((q) => q.depth > 0 || q.dead > 0)
    .sort((a, b) => b.dead - a.dead || b.depth - a.depth)
    .slice(0, 6);
  return (
    <section className="card dash-panel" aria-labelledby="dash-queues">
      <div className="panel-head">
        <h2 id="dash-queues">Queues</h2>
        <Link to="/queues" className="small">
          All queues
        </Link>
      </div>
      {queues && !queues.available ? (
        <p className="muted">flint-queue is not loaded: there are no topics or named queues.</p>
      ) : !queues ? (
        <p className="muted">{error ? 'The queues cannot be read right now.' : 'Loading…'}</p>
      ) : (
        <>
          <div className="queue-totals">
            <div>
              <div className="metric-value" data-testid="dash-queue-depth">
                {depth.toLocaleString()}
              </div>
              <div className="muted small">messages waiting or in flight</div>
            </div>
            <div>
              <div className={`metric-value${dead > 0 ? ' error-text' : ''}`} data-testid="dash-dead-letters">
                {dead.toLocaleString()}
              </div>
              <div className="muted small">dead letters</div>
            </div>
            <div>
              <div className="metric-value">{list.length}</div>
              <div className="muted small">topics and queues</div>
            </div>
          </div>
          {notable.length > 0 ? (
            <table className="table dash-table">
              <thead>
                <tr>
                  <th scope="col">Queue</th>
                  <th scope="col" className="num">
                    Depth
                  </th>
                  <th scope="col" className="num">
                    Dead
                  </th>
                </tr>
              </thead>
              <tbody>
                {notable.map((q) => (
                  <tr key={q.name}>
                    <td>
                      <Link to="/queues" search={{ queue: q.name, tab: q.dead > 0 ? 'dead' : undefined }} className="mono">
                        {q.name}
                      </Link>
                    </td>
                    <td className="num">{q.depth}</td>
                    <td className="num">{q.dead > 0 ? <span className="error-text">{q.dead}</span> : <span className="muted">0</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="muted small">Every queue is empty and has no dead letters.</p>
          )}
        </>
      )}
    </section>
  );
}

/** The newest failed traces, each linking to its trace. */
export function RecentErrorsPanel({ errors, failure, now }: { errors: RecentErrorsResponse | undefined; failure: unknown; now: number }) {
  return (
    <section className="card dash-panel" aria-labelledby="dash-errors">
      <div className="panel-head">
        <h2 id="dash-errors">Recent errors</h2>
        <Link to="/traces" search={{ status: 'error' }} className="small">
          All failed traces
        </Link>
      </div>
      {!errors ? (
        <p className="muted">{failure ? 'Recent errors cannot be read right now.' : 'Loading…'}</p>
      ) : !errors.available ? (
        <p className="muted" data-testid="dash-errors-off">
          {errors.detail}
        </p>
      ) : errors.errors.length === 0 ? (
        <p className="muted" data-testid="dash-errors-none">
          No failed trace among those the engine keeps.
        </p>
      ) : (
        <ul className="row-list error-list" data-testid="dash-errors">
          {errors.errors.map((e) => (
            <li key={`${e.trace_id}-${e.span_id}`} className="error-item" data-testid="dash-error" data-trace-id={e.trace_id}>
              <div className="error-main">
                <Link to="/traces" search={{ trace: e.trace_id }} className="mono error-name" title="Open the trace">
                  {e.name}
                </Link>
                <span className="muted small" title={absoluteTime(e.start_ms)}>
                  {relativeTime(e.start_ms, now)} · {formatDuration(e.duration_ms)}
                </span>
              </div>
              <div className="error-message small">
                {e.code && <span className="badge error">{e.code}</span>} <span className="muted">{stripCode(e.message, e.code)}</span>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The status description without the code in front of it (it is shown as a badge). */
function stripCode(message: string | null, code: string | null): string {
  if (!message) return '';
  return code && message.startsWith(`${code}: `) ? message.slice(code.length + 2) : message;
}
