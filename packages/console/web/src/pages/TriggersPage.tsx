import { useNavigate, useSearch } from '@tanstack/react-router';
import { X } from 'lucide-react';
import { useId, useMemo } from 'react';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { useFunctions, useTriggers } from '../lib/queries.js';
import { groupLabel, groupOf, matchesSearch, sortGroups } from './triggers/model.js';
import { TriggerDetail } from './triggers/TriggerDetail.js';
import { type TriggerGroup, TriggerList } from './triggers/TriggerList.js';
import { useSearchText } from './triggers/useSearchText.js';
import './triggers/triggers.css';

/** Triggers grouped by type, with a detail panel that can fire the selected one (request, run now, emit, publish). */
export function TriggersPage() {
  const search = useSearch({ from: '/triggers' });
  const navigate = useNavigate({ from: '/triggers' });
  const internal = search.internal === true;
  const triggers = useTriggers(internal);
  const functions = useFunctions(internal);
  const searchId = useId();
  const [text, setText] = useSearchText(search.q, (q) => void navigate({ search: (s) => ({ ...s, q }), replace: true }));

  const all = triggers.data?.triggers ?? [];
  const typeFilter = search.type ? groupOf(search.type) : undefined;

  const presentGroups = useMemo(() => sortGroups([...new Set(all.map((t) => groupOf(t.trigger_type)))]), [all]);

  const groups: TriggerGroup[] = useMemo(() => {
    const q = search.q ?? '';
    const byGroup = new Map<string, TriggerGroup>();
    for (const t of all) {
      const key = groupOf(t.trigger_type);
      if (typeFilter && key !== typeFilter) continue;
      if (!matchesSearch(t, q)) continue;
      let g = byGroup.get(key);
      if (!g) {
        g = { key, triggers: [] };
        byGroup.set(key, g);
      }
      g.triggers.push(t);
    }
    for (const g of byGroup.values())
      g.triggers.sort((a, b) => a.trigger_type.localeCompare(b.trigger_type) || a.function_id.localeCompare(b.function_id) || a.id.localeCompare(b.id));
    return sortGroups([...byGroup.keys()]).map((k) => byGroup.get(k) as TriggerGroup);
  }, [all, typeFilter, search.q]);

  const providedTypes = useMemo(() => new Set((triggers.data?.trigger_types ?? []).map((t) => t.id)), [triggers.data]);
  const selected = search.trigger ? all.find((t) => t.id === search.trigger) : undefined;
  const fn = selected ? functions.data?.functions.find((f) => f.function_id === selected.function_id) : undefined;
  const typeInfo = selected ? triggers.data?.trigger_types.find((t) => t.id === selected.trigger_type) : undefined;
  const select = (trigger: string | undefined) => void navigate({ search: (s) => ({ ...s, trigger }) });

  return (
    <div className="page">
      <header className="page-header">
        <h1>Triggers</h1>
        {triggers.data && <span className="badge">{all.length}</span>}
        <span className="spacer" />
        <label className="check">
          <input
            type="checkbox"
            checked={internal}
            onChange={(e) => void navigate({ search: (s) => ({ ...s, internal: e.target.checked ? true : undefined }), replace: true })}
          />
          Show internal
        </label>
      </header>
      <div className="toolbar">
        <label htmlFor={searchId} className="sr-only">
          Filter triggers
        </label>
        <input
          id={searchId}
          type="search"
          className="input tr-search"
          placeholder="Filter by id, function, path, topic, expression…"
          aria-label="Filter triggers"
          data-search
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        {presentGroups.length > 0 && (
          <fieldset className="tr-chips" aria-label="Trigger type">
            <button
              type="button"
              className={`btn small${typeFilter ? '' : ' primary'}`}
              aria-pressed={!typeFilter}
              onClick={() => void navigate({ search: (s) => ({ ...s, type: undefined }), replace: true })}
            >
              All
            </button>
            {presentGroups.map((g) => (
              <button
                key={g}
                type="button"
                className={`btn small${typeFilter === g ? ' primary' : ''}`}
                aria-pressed={typeFilter === g}
                title={groupLabel(g)}
                onClick={() => void navigate({ search: (s) => ({ ...s, type: g }), replace: true })}
              >
                {g}
              </button>
            ))}
          </fieldset>
        )}
      </div>
      <div className="page-body">
        <div className="page-list">
          {triggers.isPending ? (
            <p className="muted tr-pad">Loading…</p>
          ) : triggers.error ? (
            <div className="tr-pad">
              <ErrorBox error={triggers.error} />
            </div>
          ) : all.length === 0 ? (
            <EmptyState title="No triggers registered">
              A worker registers one with{' '}
              <code>{"worker.registerTrigger({type: 'http', function_id, config: {api_path: 'hello/:name', http_method: 'GET'}})"}</code>
            </EmptyState>
          ) : groups.length === 0 ? (
            <EmptyState title={`No trigger matches ${search.q ? `“${search.q}”` : 'this filter'}${typeFilter ? ` of type ${typeFilter}` : ''}`}>
              <button type="button" className="btn" onClick={() => void navigate({ search: (s) => ({ ...s, q: undefined, type: undefined }), replace: true })}>
                Clear the filter
              </button>
            </EmptyState>
          ) : (
            <TriggerList groups={groups} selected={search.trigger} onSelect={(id) => select(id)} providedTypes={providedTypes} />
          )}
        </div>
        {search.trigger &&
          (selected ? (
            <TriggerDetail key={selected.id} trigger={selected} fn={fn} typeInfo={typeInfo} onClose={() => select(undefined)} />
          ) : triggers.data ? (
            <aside className="detail" aria-label="Trigger not found">
              <div className="detail-header">
                <h2 className="code-id">{search.trigger}</h2>
                <button type="button" className="btn ghost small" aria-label="Close" onClick={() => select(undefined)}>
                  <X size={14} aria-hidden="true" />
                </button>
              </div>
              <p className="muted">
                No trigger with this id is registered{internal ? '' : ' (it may be internal: tick Show internal)'}. Its worker may have disconnected.
              </p>
            </aside>
          ) : null)}
      </div>
    </div>
  );
}
