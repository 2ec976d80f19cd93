import { Link, getRouteApi } from '@tanstack/react-router';
import { X } from 'lucide-react';
import type { FunctionInfo } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { JsonView } from '../../components/JsonView.js';
import { shortId } from '../../lib/format.js';
import { InvokePanel } from './InvokePanel.js';

const route = getRouteApi('/functions');

function CloseLink() {
  const search = route.useSearch();
  return (
    <Link
      to="/functions"
      search={{ q: search.q, internal: search.internal }}
      className="btn ghost small close"
      aria-label="Close function details"
      title="Close"
    >
      <X size={16} aria-hidden="true" />
    </Link>
  );
}

/** Who provides a function: its worker(s) (linked) or the engine module. */
function Providers({ fn }: { fn: FunctionInfo }) {
  const providers = fn.providers ?? [];
  if (providers.length === 0) return <span className="muted">unknown</span>;
  return (
    <ul className="plain-list">
      {providers.map((p) =>
        'module' in p ? (
          <li key={`m:${p.module}`}>
            <span className="badge info">module</span> <code>{p.module}</code>
          </li>
        ) : (
          <li key={`w:${p.worker_id}`}>
            <span className="badge">worker</span>{' '}
            <Link to="/workers" search={{ worker: p.worker_id }} title={p.worker_id}>
              {p.worker_name ?? shortId(p.worker_id)}
            </Link>
          </li>
        ),
      )}
    </ul>
  );
}

function Format({ title, value }: { title: string; value: unknown }) {
  const declared = value !== undefined && value !== null;
  const lines = declared ? (JSON.stringify(value, null, 2) ?? '').split('\n').length : 0;
  return (
    <section className="section">
      {declared ? (
        <details className="format" open={lines <= 14}>
          <summary>
            <h3>{title}</h3>
          </summary>
          <JsonView value={value} label={title} maxHeight={280} />
        </details>
      ) : (
        <>
          <h3>{title}</h3>
          <p className="muted small">none declared</p>
        </>
      )}
    </section>
  );
}

/** The selected function: what it is, who provides it, its formats, and the Invoke panel. */
export function FunctionDetail({ fn }: { fn: FunctionInfo }) {
  const metadata = fn.metadata && Object.keys(fn.metadata).length > 0 ? fn.metadata : null;
  return (
    <aside className="detail" aria-labelledby="function-detail-title" data-testid="function-detail">
      <div className="detail-header">
        <h2 id="function-detail-title" className="code-id">
          {fn.function_id}
        </h2>
        <CopyButton text={fn.function_id} label="Copy function id" />
        <CloseLink />
      </div>
      {fn.description ? <p className="fn-description">{fn.description}</p> : <p className="muted small">No description.</p>}
      <dl className="grid-info">
        <dt>Provided by</dt>
        <dd>
          <Providers fn={fn} />
        </dd>
      </dl>
      <Format title="Request format" value={fn.request_format} />
      <Format title="Response format" value={fn.response_format} />
      {metadata && (
        <section className="section">
          <h3>Metadata</h3>
          <JsonView value={metadata} label="Metadata" maxHeight={200} />
        </section>
      )}
      <InvokePanel key={fn.function_id} fn={fn} />
    </aside>
  );
}

/** A selected function that is not in the list: its worker disconnected, or it is internal and hidden. */
export function FunctionMissing({ id, internalShown }: { id: string; internalShown: boolean }) {
  const search = route.useSearch();
  return (
    <aside className="detail" aria-labelledby="function-detail-title" data-testid="function-detail">
      <div className="detail-header">
        <h2 id="function-detail-title" className="code-id">
          {id}
        </h2>
        <CloseLink />
      </div>
      <div className="card result error" role="status">
        <strong>This function is not registered</strong>
        <div className="muted">
          No connected worker or module provides it: its worker is not connected (or disconnected){internalShown ? '' : ', or it is an internal function'}.
        </div>
      </div>
      {!internalShown && (
        <div>
          <Link to="/functions" search={{ ...search, internal: true }} className="btn">
            Look among internal functions
          </Link>
        </div>
      )}
      <p className="muted small">You can still try to call it: the engine answers function_not_found if nothing provides it.</p>
      <InvokePanel key={id} fn={{ function_id: id, description: null, request_format: null, response_format: null, metadata: null }} />
    </aside>
  );
}
