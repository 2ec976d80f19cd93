import { useNavigate, useSearch } from '@tanstack/react-router';
import { ChevronLeft, ChevronRight, Plus } from 'lucide-react';
import { useEffect, useId, useMemo, useState } from 'react';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { useStateGroups } from '../lib/queries.js';
import { AddKeyDialog } from './states/AddKeyDialog.js';
import { ItemDetail } from './states/ItemDetail.js';
import { ItemTable } from './states/ItemTable.js';
import { PAGE_SIZE, useStateEntries } from './states/model.js';
import { ScopeList } from './states/ScopeList.js';
import { useSearchText } from './triggers/useSearchText.js';
import './states/states.css';

/** State: scopes | keys of the selected scope | the selected key (view, edit, delete); Add writes a new key. */
export function StatesPage() {
  const search = useSearch({ from: '/states' });
  const navigate = useNavigate({ from: '/states' });
  const groups = useStateGroups();
  const keyFilterId = useId();
  const [adding, setAdding] = useState(false);
  const [text, setText] = useSearchText(search.q, (q) => void navigate({ search: (s) => ({ ...s, q }), replace: true }), 250);

  const scopes = useMemo(() => [...(groups.data?.groups ?? [])].sort((a, b) => a.scope.localeCompare(b.scope)), [groups.data]);
  const scope = search.scope;
  const q = search.q ?? '';

  // The first scope is selected when the URL names none.
  const firstScope = scopes[0]?.scope;
  useEffect(() => {
    if (scope === undefined && firstScope !== undefined) void navigate({ search: (s) => ({ ...s, scope: firstScope }), replace: true });
  }, [scope, firstScope, navigate]);

  // The page offset belongs to one scope and filter: another one starts at 0.
  const [paging, setPaging] = useState({ scope, q, offset: 0 });
  const offset = paging.scope === scope && paging.q === q ? paging.offset : 0;
  const setOffset = (o: number) => setPaging({ scope, q, offset: Math.max(0, o) });

  const entries = useStateEntries(scope, q, offset);
  const data = entries.data;
  const total = data?.total ?? 0;

  // A page that emptied (keys deleted elsewhere) moves back to the last page there is.
  const pageEmptied = data !== undefined && data.entries.length === 0 && offset > 0;
  useEffect(() => {
    if (pageEmptied) setPaging({ scope, q, offset: total > 0 ? Math.floor((total - 1) / PAGE_SIZE) * PAGE_SIZE : 0 });
  }, [pageEmptied, total, scope, q]);

  const selectScope = (s: string) => void navigate({ search: (prev) => ({ ...prev, scope: s, key: undefined, q: undefined }) });
  const selectKey = (key: string | undefined) => void navigate({ search: (prev) => ({ ...prev, key }) });
  const selectedEntry = search.key !== undefined ? data?.entries.find((e) => e.key === search.key) : undefined;
  const scopeCount = scopes.find((g) => g.scope === scope)?.count;

  return (
    <div className="page">
      <header className="page-header">
        <h1>States</h1>
        {groups.data && <span className="badge">{scopes.length} scopes</span>}
        <span className="spacer" />
        <button type="button" className="btn primary" data-testid="state-add" onClick={() => setAdding(true)}>
          <Plus size={14} aria-hidden="true" />
          Add
        </button>
      </header>
      {groups.isPending ? (
        <p className="muted st-pad">Loading…</p>
      ) : groups.error ? (
        <div className="st-pad">
          <ErrorBox error={groups.error} />
        </div>
      ) : scopes.length === 0 && scope === undefined ? (
        <EmptyState title="No state yet">
          <p>
            A worker writes with <code>{'worker.state.set({scope, key, value})'}</code> or add a key here.
          </p>
          <button type="button" className="btn primary" onClick={() => setAdding(true)}>
            <Plus size={14} aria-hidden="true" />
            Add a key
          </button>
        </EmptyState>
      ) : (
        <div className="page-body">
          <nav className="st-scopes" aria-label="Scopes">
            <ScopeList groups={scopes} selected={scope} onSelect={selectScope} />
          </nav>
          <section className="page-list st-items" aria-label={scope ? `Keys of scope ${scope}` : 'Keys'}>
            <div className="toolbar st-toolbar">
              <h2 className="st-scope-title">
                {scope ? <span className="code-id">{scope}</span> : <span className="muted">No scope selected</span>}
                {scopeCount !== undefined && <span className="muted small"> {scopeCount} keys</span>}
              </h2>
              <label htmlFor={keyFilterId} className="sr-only">
                Filter keys
              </label>
              <input
                id={keyFilterId}
                type="search"
                className="input st-key-filter"
                placeholder="Filter keys"
                data-search
                value={text}
                disabled={!scope}
                onChange={(e) => setText(e.target.value)}
              />
              <span className="spacer st-spacer" />
              {data && total > 0 && (
                <nav className="st-paging" aria-label="Pages">
                  <span className="muted small" aria-live="polite">
                    {Math.min(offset + 1, total)}–{Math.min(offset + data.entries.length, total)} of {total}
                  </span>
                  <button type="button" className="btn small" aria-label="Previous page" disabled={offset === 0} onClick={() => setOffset(offset - PAGE_SIZE)}>
                    <ChevronLeft size={14} aria-hidden="true" />
                  </button>
                  <button
                    type="button"
                    className="btn small"
                    aria-label="Next page"
                    disabled={offset + PAGE_SIZE >= total}
                    onClick={() => setOffset(offset + PAGE_SIZE)}
                  >
                    <ChevronRight size={14} aria-hidden="true" />
                  </button>
                </nav>
              )}
            </div>
            {!scope ? null : entries.isPending ? (
              <p className="muted st-pad">Loading…</p>
            ) : entries.error && !data ? (
              <div className="st-pad">
                <ErrorBox error={entries.error} />
              </div>
            ) : data && data.entries.length === 0 && !pageEmptied ? (
              q !== '' ? (
                <EmptyState title={`No key matches “${q}”`}>
                  <button type="button" className="btn" onClick={() => setText('')}>
                    Clear the filter
                  </button>
                </EmptyState>
              ) : (
                <EmptyState title="This scope is empty">
                  <button type="button" className="btn" onClick={() => setAdding(true)}>
                    <Plus size={14} aria-hidden="true" />
                    Add a key
                  </button>
                </EmptyState>
              )
            ) : data ? (
              <>
                {entries.error && (
                  <div className="st-pad">
                    <ErrorBox error={entries.error} />
                  </div>
                )}
                <ItemTable entries={data.entries} selected={search.key} onSelect={(k) => selectKey(k)} />
              </>
            ) : null}
          </section>
          {scope && search.key !== undefined && (
            <ItemDetail key={`${scope}\u0000${search.key}`} scope={scope} stateKey={search.key} entry={selectedEntry} onClose={() => selectKey(undefined)} />
          )}
        </div>
      )}
      <AddKeyDialog
        open={adding}
        initialScope={scope ?? ''}
        onOpenChange={setAdding}
        onAdded={(s, key) => {
          setAdding(false);
          void navigate({ search: (prev) => ({ ...prev, scope: s, key, q: prev.scope === s ? prev.q : undefined }) });
        }}
      />
    </div>
  );
}
