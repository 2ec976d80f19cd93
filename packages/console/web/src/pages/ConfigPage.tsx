import type { ReactNode } from 'react';
import type { ConsoleConfig, ConsoleStatus, Reachability } from '../../../src/api-types.js';
import { CopyButton } from '../components/CopyButton.js';
import { useEngineState } from '../components/EnginePill.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { JsonView } from '../components/JsonView.js';
import { absoluteTime, relativeTime, useNow } from '../lib/format.js';
import { useConsoleConfig, useStatus } from '../lib/queries.js';
import './pages.css';
import './config.css';

function Badge({ ok, children }: { ok: boolean | null; children: ReactNode }) {
  return <span className={`badge ${ok === null ? 'warn' : ok ? 'ok' : 'error'}`}>{children}</span>;
}

function ReachRow({ name, what, r }: { name: string; what: string; r: Reachability | undefined }) {
  return (
    <tr data-testid={`conn-${name.toLowerCase().replace(/\W+/g, '-')}`}>
      <th scope="row">
        {name}
        <div className="muted small">{what}</div>
      </th>
      <td>{r ? <Badge ok={r.reachable}>{r.reachable ? 'reachable' : 'unreachable'}</Badge> : <Badge ok={null}>unknown</Badge>}</td>
      <td>
        <span className="mono">{r?.url ?? '—'}</span>
        {r?.detail && <div className="muted small">{r.detail}</div>}
      </td>
    </tr>
  );
}

function Connectivity({ status, loading, bridgeUrl }: { status: ConsoleStatus | undefined; loading: boolean; bridgeUrl: string | undefined }) {
  const bridge = status?.bridge;
  return (
    <section className="card config-card" aria-labelledby="cfg-conn">
      <h2 id="cfg-conn">Engine connectivity</h2>
      {loading && <p className="muted">Loading…</p>}
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Listener</th>
            <th scope="col">State</th>
            <th scope="col">URL and detail</th>
          </tr>
        </thead>
        <tbody>
          <tr data-testid="conn-bridge">
            <th scope="row">
              Bridge
              <div className="muted small">worker WebSocket the console calls through</div>
            </th>
            <td>
              {bridge ? <Badge ok={bridge === 'connected' ? true : bridge === 'connecting' ? null : false}>{bridge}</Badge> : <Badge ok={null}>unknown</Badge>}
            </td>
            <td>
              <span className="mono">{bridgeUrl ?? '—'}</span>
              {bridge && bridge !== 'connected' && <div className="muted small">the console keeps retrying</div>}
            </td>
          </tr>
          <ReachRow name="HTTP" what="flint-http (triggers, request builder)" r={status?.http} />
          <ReachRow name="Stream WebSocket" what="flint-stream" r={status?.stream} />
        </tbody>
      </table>
    </section>
  );
}

function Ports({ config }: { config: ConsoleConfig }) {
  const { console: c, engine: e } = config;
  const rows: [string, ReactNode, string?][] = [
    ['Console', `${c.host}:${c.port}`, `http://${c.host.includes(':') ? `[${c.host}]` : c.host}:${c.port}`],
    ['Engine host', e.host],
    ['Engine HTTP port', e.http_port],
    ['Engine stream WebSocket port', e.ws_port],
    ['Engine bridge port', e.bridge_port],
    ['Bridge URL', e.bridge_url, e.bridge_url],
  ];
  return (
    <section className="card config-card" aria-labelledby="cfg-ports">
      <h2 id="cfg-ports">Addresses and ports</h2>
      <dl className="grid-info" data-testid="config-ports">
        {rows.map(([label, value, copy]) => (
          <div key={label} className="grid-row">
            <dt>{label}</dt>
            <dd className="mono">
              {value}
              {copy && <CopyButton text={copy} label={`Copy ${label.toLowerCase()}`} />}
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

/** Config: versions, engine connectivity, every port, listeners, loaded modules, OpenTelemetry and health. */
export function ConfigPage() {
  const config = useConsoleConfig();
  const status = useStatus();
  const engineState = useEngineState();
  const now = useNow(30_000);
  const s = status.data;
  const engine = s?.engine ?? null;
  const bridgeDown = s?.bridge === 'disconnected' || engineState === 'disconnected';

  return (
    <div className="page">
      <header className="page-header">
        <h1>Config</h1>
        <span className="spacer" />
        <button
          type="button"
          className="btn small"
          onClick={() => {
            void status.refetch();
            void config.refetch();
          }}
          disabled={status.isFetching}
        >
          {status.isFetching ? 'Checking…' : 'Check again'}
        </button>
      </header>
      <div className="config-body">
        {bridgeDown && (
          <div className="card result error" role="status" data-testid="engine-unreachable">
            <strong>The engine is unreachable</strong>
            <div>
              The console cannot reach the engine bridge{config.data ? ` at ${config.data.engine.bridge_url}` : ''}; it keeps retrying. Shown below is what the
              console was started with; the engine's version, listeners and modules appear once it is back.
            </div>
          </div>
        )}
        {(config.isError || status.isError) && (
          <div className="config-errors">
            {config.isError && <ErrorBox error={config.error} />}
            {status.isError && <ErrorBox error={status.error} />}
          </div>
        )}

        <section className="card config-card" aria-labelledby="cfg-versions">
          <h2 id="cfg-versions">Versions</h2>
          {config.isPending ? (
            <p className="muted">Loading…</p>
          ) : (
            <dl className="grid-info">
              <dt>Flint console</dt>
              <dd className="mono" data-testid="console-version">
                {config.data ? `v${config.data.version}` : '—'}
              </dd>
              <dt>Engine</dt>
              <dd className="mono" data-testid="engine-version">
                {engine ? `v${engine.version}` : <span className="muted">{status.isPending ? 'Loading…' : 'unknown (engine unreachable)'}</span>}
              </dd>
              {engine && (
                <>
                  <dt>Engine started</dt>
                  <dd>
                    <time dateTime={new Date(engine.started_at).toISOString()}>{absoluteTime(engine.started_at)}</time>{' '}
                    <span className="muted">({relativeTime(engine.started_at, now)})</span>
                  </dd>
                </>
              )}
            </dl>
          )}
        </section>

        <Connectivity status={s} loading={status.isPending} bridgeUrl={config.data?.engine.bridge_url} />

        {config.data && <Ports config={config.data} />}

        <section className="card config-card" aria-labelledby="cfg-listeners">
          <h2 id="cfg-listeners">Engine listeners</h2>
          {engine ? (
            engine.listeners.length === 0 ? (
              <p className="muted">The engine reports no listeners.</p>
            ) : (
              <ul className="config-list" data-testid="config-listeners">
                {engine.listeners.map((l) => (
                  <li key={`${l.name}|${l.url}`}>
                    <span className="config-list-name">{l.name}</span> <code>{l.url}</code>
                  </li>
                ))}
              </ul>
            )
          ) : (
            <p className="muted">{status.isPending ? 'Loading…' : 'Unknown while the engine is unreachable.'}</p>
          )}
        </section>

        <section className="card config-card" aria-labelledby="cfg-modules">
          <h2 id="cfg-modules">Loaded modules{engine ? ` (${engine.modules.length})` : ''}</h2>
          {engine ? (
            <>
              <p className="muted small">Each module's configuration as the engine reports it; secrets are shown as ***.</p>
              {engine.modules.length === 0 ? (
                <p className="muted">No modules are loaded.</p>
              ) : (
                <ul className="config-modules" data-testid="config-modules">
                  {engine.modules.map((m) => (
                    <li key={m.name}>
                      <details>
                        <summary>
                          <code className="code-id">{m.name}</code>
                        </summary>
                        <JsonView value={m.config ?? null} label={`${m.name} configuration`} maxHeight={320} />
                      </details>
                    </li>
                  ))}
                </ul>
              )}
            </>
          ) : (
            <p className="muted">{status.isPending ? 'Loading…' : 'Unknown while the engine is unreachable.'}</p>
          )}
        </section>

        {config.data && (
          <section className="card config-card" aria-labelledby="cfg-console">
            <h2 id="cfg-console">Console settings</h2>
            <dl className="grid-info">
              <dt>OpenTelemetry</dt>
              <dd>
                <Badge ok={config.data.otel.enabled}>{config.data.otel.enabled ? 'enabled' : 'disabled'}</Badge>
              </dd>
              <dt>Service name</dt>
              <dd className="mono">{config.data.otel.service_name}</dd>
              <dt>Token required</dt>
              <dd>
                {config.data.console.token_required ? (
                  <span className="badge info">yes: the console listens on a network address</span>
                ) : (
                  <span className="badge">no (loopback only)</span>
                )}
              </dd>
              <dt>Flow view</dt>
              <dd>{config.data.enable_flow ? 'enabled' : 'disabled'}</dd>
            </dl>
          </section>
        )}

        <section className="card config-card" aria-labelledby="cfg-health">
          <h2 id="cfg-health">Health</h2>
          {status.isPending ? (
            <p className="muted">Loading…</p>
          ) : s && s.health !== null && s.health !== undefined ? (
            <JsonView value={s.health} label="Engine health" />
          ) : (
            <p className="muted" data-testid="health-missing">
              {engine ? 'flint-observability is not loaded (no engine::health::check).' : 'flint-observability is not loaded, or the engine is unreachable.'}
            </p>
          )}
        </section>
      </div>
    </div>
  );
}
