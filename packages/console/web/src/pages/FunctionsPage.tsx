import { getRouteApi } from '@tanstack/react-router';
import { useDeferredValue, useMemo } from 'react';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { useFunctions } from '../lib/queries.js';
import { useUrlText } from '../lib/url-text.js';
import { FunctionDetail, FunctionMissing } from './functions/FunctionDetail.js';
import { FunctionList } from './functions/FunctionList.js';
import { LoadingLine } from './PageStatus.js';
import './pages.css';
import './functions.css';

const route = getRouteApi('/functions');

/** Functions: every registered function (virtualised list), its formats, and an Invoke panel. */
export function FunctionsPage() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const internal = search.internal === true;
  const functions = useFunctions(internal);
  const [q, setQ] = useUrlText(search.q, (value) => void navigate({ search: (prev) => ({ ...prev, q: value }), replace: true }));
  const query = useDeferredValue(q.trim().toLowerCase());

  const all = functions.data?.functions;
  const sorted = useMemo(() => [...(all ?? [])].sort((a, b) => (a.function_id < b.function_id ? -1 : a.function_id > b.function_id ? 1 : 0)), [all]);
  const list = useMemo(() => (query === '' ? sorted : sorted.filter((f) => f.function_id.toLowerCase().includes(query))), [sorted, query]);
  const selected = search.fn ? all?.find((f) => f.function_id === search.fn) : undefined;
  const linkSearch = (fn: string) => ({ fn, q: search.q, internal: search.internal });

  return (
    <div className="page">
      <header className="page-header">
        <h1>Functions</h1>
        {all && (
          <span className="badge count-badge" data-testid="function-count" title={q ? 'Matching / registered functions' : 'Registered functions'}>
            {query ? `${list.length.toLocaleString()} of ${all.length.toLocaleString()}` : all.length.toLocaleString()}
          </span>
        )}
        <span className="spacer" />
        <label className="check">
          <input
            type="checkbox"
            checked={internal}
            onChange={(e) => void navigate({ search: (prev) => ({ ...prev, internal: e.target.checked ? true : undefined }), replace: true })}
          />
          Show internal
        </label>
        <input
          type="search"
          className="input search-input"
          placeholder="Filter by name  ( / )"
          aria-label="Filter functions"
          data-search
          value={q}
          onChange={(e) => setQ(e.target.value)}
        />
      </header>
      <p className="hint-line">A function missing from this list means its worker is not connected.</p>
      <div className="page-body">
        {functions.isPending ? (
          <div className="page-list">
            <LoadingLine />
          </div>
        ) : !all ? (
          <div className="page-list page-error">
            <ErrorBox error={functions.error} />
          </div>
        ) : all.length === 0 ? (
          <div className="page-list">
            <EmptyState title="No functions registered">
              <p>
                Register one from a worker: <code>worker.registerFunction('hello::world', handler)</code>
              </p>
            </EmptyState>
          </div>
        ) : list.length === 0 ? (
          <div className="page-list">
            <EmptyState title={`No function matches “${q.trim()}”`}>
              <button type="button" className="btn" onClick={() => setQ('')}>
                Clear the filter
              </button>
            </EmptyState>
          </div>
        ) : (
          <div className="fn-list-wrap">
            {functions.isError && <ErrorBox error={functions.error} />}
            <FunctionList functions={list} selected={search.fn} linkSearch={linkSearch} />
          </div>
        )}
        {search.fn && (selected ? <FunctionDetail fn={selected} /> : all ? <FunctionMissing id={search.fn} internalShown={internal} /> : null)}
      </div>
    </div>
  );
}
