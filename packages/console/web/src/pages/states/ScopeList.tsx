import { useId, useMemo, useState } from 'react';
import type { StateGroupsResponse } from '../../../../src/api-types.js';

/** The scopes with their key counts, filterable by name. */
export function ScopeList({
  groups,
  selected,
  onSelect,
}: {
  groups: StateGroupsResponse['groups'];
  selected: string | undefined;
  onSelect: (scope: string) => void;
}) {
  const id = useId();
  const [filter, setFilter] = useState('');
  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    return groups.filter((g) => f === '' || g.scope.toLowerCase().includes(f));
  }, [groups, filter]);
  return (
    <>
      <div className="st-pane-head">
        <label htmlFor={id} className="sr-only">
          Filter scopes
        </label>
        <input id={id} type="search" className="input st-fill" placeholder="Filter scopes" value={filter} onChange={(e) => setFilter(e.target.value)} />
      </div>
      {shown.length === 0 ? (
        <p className="muted small st-pad">No scope matches “{filter}”.</p>
      ) : (
        <ul className="row-list">
          {shown.map((g) => (
            <li key={g.scope}>
              <button
                type="button"
                className={`row st-scope${g.scope === selected ? ' selected' : ''}`}
                aria-current={g.scope === selected ? 'true' : undefined}
                data-testid="scope-row"
                data-scope={g.scope}
                onClick={() => onSelect(g.scope)}
              >
                <span className="code-id st-ellipsis">{g.scope}</span>
                <span className="badge" title={`${g.count} key${g.count === 1 ? '' : 's'}`}>
                  {g.count}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
