import { Eye, X } from 'lucide-react';
import { useEffect, useId, useState } from 'react';
import type { StreamEntry } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { Inspector } from './Inspector.js';
import type { FrameDirection } from './search.js';

/** The selected stream: its groups, a group to watch (any name: a group may only carry custom events), and the inspector of the chosen one. */
export function StreamPanel({
  name,
  entry,
  group,
  dir,
  onGroup,
  onDir,
  onClose,
}: {
  name: string;
  entry: StreamEntry | undefined;
  group: string | undefined;
  dir: FrameDirection | undefined;
  onGroup: (group: string | undefined) => void;
  onDir: (dir: FrameDirection | undefined) => void;
  onClose: () => void;
}) {
  const id = useId();
  const [typed, setTyped] = useState(group ?? '');
  useEffect(() => setTyped(group ?? ''), [group]);
  const groups = entry?.groups ?? [];

  return (
    <aside className="detail st-detail" aria-label={`Stream ${name}`} data-testid="stream-detail">
      <div className="detail-header">
        <h2 className="code-id">{name}</h2>
        <CopyButton text={name} label="Copy stream name" />
        <button type="button" className="btn ghost small" aria-label="Close" onClick={onClose}>
          <X size={14} aria-hidden="true" />
        </button>
      </div>
      <div className="st-meta">
        {entry ? (
          <>
            <span className={`badge${entry.type === 'system' ? ' warn' : ' info'}`}>{entry.type}</span>
            {entry.stats && (
              <span className="muted small">
                {entry.stats.subscriptions} subscriptions · {entry.stats.events} events · {entry.stats.messages_out} frames out · {entry.stats.messages_in} in
              </span>
            )}
          </>
        ) : (
          <span className="muted small">Nothing is stored in this stream and no client used it yet; you can still watch a group of it.</span>
        )}
      </div>
      <section className="section">
        <h3>Groups</h3>
        {groups.length === 0 ? (
          <p className="muted small">No group holds an item.</p>
        ) : (
          <div className="st-group-list">
            {groups.map((g) => (
              <button
                key={g}
                type="button"
                className={`st-group-chip${g === group ? ' selected' : ''}`}
                aria-pressed={g === group}
                data-testid="panel-group"
                onClick={() => onGroup(g)}
              >
                {g}
              </button>
            ))}
          </div>
        )}
        <form
          className="st-watch"
          onSubmit={(e) => {
            e.preventDefault();
            const g = typed.trim();
            if (g) onGroup(g);
          }}
        >
          <label htmlFor={`${id}-group`}>Watch a group</label>
          <input
            id={`${id}-group`}
            className="input mono"
            placeholder="group id"
            value={typed}
            data-testid="group-input"
            onChange={(e) => setTyped(e.target.value)}
            spellCheck={false}
          />
          <button type="submit" className="btn small" disabled={typed.trim() === '' || typed.trim() === group}>
            <Eye size={13} aria-hidden="true" />
            Watch
          </button>
        </form>
      </section>
      {group ? (
        <Inspector key={`${name}\u0000${group}`} stream={name} group={group} dir={dir} onDir={onDir} />
      ) : (
        <p className="muted small">Choose a group to open the live message inspector.</p>
      )}
    </aside>
  );
}
