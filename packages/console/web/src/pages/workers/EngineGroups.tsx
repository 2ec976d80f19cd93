import { Server } from 'lucide-react';
import { timeOfDay } from '../../lib/format.js';
import { type EngineGroup, heardAgo } from './groups.js';
import { WorkerTable } from './WorkerTable.js';

/**
 * A cluster's workers, one section per engine (see `groupByEngine`): a heading with the engine's node id
 * ("This engine" for the console's own), its bridge URL and when it was last heard from, then its workers.
 */
export function EngineGroups({
  groups,
  membersKnown,
  membersAt,
  selected,
  q,
  now,
}: {
  groups: EngineGroup[];
  /** Whether the member list was read (so an engine missing from it can be told apart). */
  membersKnown: boolean;
  /** When the member list was read (its `last_seen_ms` count from then). */
  membersAt: number;
  selected: string | undefined;
  q: string | undefined;
  now: number;
}) {
  const filtering = Boolean(q);
  return (
    <div className="engine-groups">
      {groups.map((g) => {
        const headingId = `engine-group-${g.node.replace(/[^A-Za-z0-9_-]/g, '_')}`;
        const m = g.member;
        // The member list's ages are as of its reading; they grow until the next one.
        const ago = m ? m.last_seen_ms + Math.max(0, now - membersAt) : 0;
        return (
          <section key={g.node} className="engine-group" aria-labelledby={headingId} data-testid="engine-group" data-engine={g.node}>
            <div className="engine-group-header">
              <h2 id={headingId} className="engine-group-heading">
                <Server size={14} aria-hidden="true" />
                {g.self && <span>This engine</span>}
                {g.self && ' '}
                <span className="mono">{g.node || 'unknown engine'}</span>
              </h2>
              <span className="badge count-badge" title={`Workers connected to engine ${g.node}`}>
                {filtering ? `${g.workers.length} of ${g.total}` : g.total}
              </span>
              {m && (
                <span className="engine-meta muted small" data-testid="engine-meta">
                  <span className="mono" title="Its bridge: where its workers connect">
                    {m.bridge}
                  </span>
                  {!g.self && (
                    <span title={`Last heartbeat ${m.last_seen_ms} ms before the member list was read at ${timeOfDay(membersAt)}`}>
                      {' '}
                      · heard {heardAgo(ago)} ago
                    </span>
                  )}
                </span>
              )}
              {!m && membersKnown && <span className="badge warn">not in the member list</span>}
            </div>
            {g.workers.length > 0 ? (
              <WorkerTable workers={g.workers} selected={selected} q={q} now={now} grouped />
            ) : (
              <p className="engine-group-empty muted small">No workers connected to this engine.</p>
            )}
          </section>
        );
      })}
    </div>
  );
}
