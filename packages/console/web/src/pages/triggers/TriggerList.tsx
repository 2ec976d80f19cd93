import { ChevronDown, ChevronRight } from 'lucide-react';
import { useState } from 'react';
import type { TriggerInfo } from '../../../../src/api-types.js';
import { groupLabel, isModuleType, summarize } from './model.js';
import { StatusBadge } from './TriggerDetail.js';

export interface TriggerGroup {
  key: string;
  triggers: TriggerInfo[];
}

/** The triggers in collapsible groups, one row per trigger. */
export function TriggerList({
  groups,
  selected,
  onSelect,
  providedTypes,
}: {
  groups: TriggerGroup[];
  selected: string | undefined;
  onSelect: (id: string) => void;
  /** The trigger types someone provides (engine::trigger-types::list). */
  providedTypes: Set<string>;
}) {
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const toggle = (key: string) =>
    setCollapsed((c) => {
      const next = new Set(c);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  return (
    <div className="tr-groups">
      {groups.map((g) => {
        const open = !collapsed.has(g.key);
        const listId = `tr-group-${g.key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
        return (
          <section key={g.key} className="tr-group" aria-labelledby={`${listId}-h`} data-testid="trigger-group">
            <h2 id={`${listId}-h`} className="tr-group-heading">
              <button type="button" className="tr-group-toggle" aria-expanded={open} aria-controls={listId} onClick={() => toggle(g.key)}>
                {open ? <ChevronDown size={14} aria-hidden="true" /> : <ChevronRight size={14} aria-hidden="true" />}
                <span>{groupLabel(g.key)}</span>
                {groupLabel(g.key) !== g.key && <span className="muted small mono">{g.key}</span>}
                {!isModuleType(g.key) &&
                  (providedTypes.has(g.key) ? <span className="muted small">worker-defined</span> : <span className="badge warn">not provided</span>)}
                <span className="badge">{g.triggers.length}</span>
              </button>
            </h2>
            {open && (
              <ul className="row-list" id={listId}>
                {g.triggers.map((t) => (
                  <li key={t.id}>
                    <button
                      type="button"
                      className={`row tr-row${t.id === selected ? ' selected' : ''}`}
                      aria-current={t.id === selected ? 'true' : undefined}
                      data-testid="trigger-row"
                      data-trigger-id={t.id}
                      onClick={() => onSelect(t.id)}
                    >
                      <span className="tr-summary mono">{summarize(t)}</span>
                      <span className="code-id tr-fn">{t.function_id}</span>
                      <span className="tr-status">
                        <StatusBadge trigger={t} />
                      </span>
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </section>
        );
      })}
    </div>
  );
}
