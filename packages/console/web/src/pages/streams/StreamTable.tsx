import type { StreamEntry } from '../../../../src/api-types.js';

/** Groups listed in a row; the rest are counted (the detail lists them all). */
const GROUPS_SHOWN = 6;

/** Every stream with its type, its groups (each opens the inspector) and its live counters; a row selects the stream. */
export function StreamTable({
  streams,
  selected,
  selectedGroup,
  onSelect,
}: {
  streams: StreamEntry[];
  selected: string | undefined;
  selectedGroup: string | undefined;
  onSelect: (stream: string, group?: string) => void;
}) {
  return (
    <table className="table st-table">
      <thead>
        <tr>
          <th scope="col">Stream</th>
          <th scope="col">Type</th>
          <th scope="col">Groups</th>
          <th scope="col" className="st-num" title="Clients subscribed to this stream now">
            Subscriptions
          </th>
          <th scope="col" className="st-num" title="Changes and custom events published since the engine started">
            Events
          </th>
          <th scope="col" className="st-num" title="Frames sent to clients since the engine started">
            Frames out
          </th>
        </tr>
      </thead>
      <tbody>
        {streams.map((s) => {
          const isSelected = s.name === selected;
          return (
            <tr key={s.name} className={`st-row${isSelected ? ' selected' : ''}`} data-testid="stream-row" data-stream={s.name}>
              <td className="st-name">
                <button type="button" className="row-button code-id" aria-current={isSelected ? 'true' : undefined} onClick={() => onSelect(s.name)}>
                  {s.name}
                </button>
              </td>
              <td>
                <span className={`badge${s.type === 'system' ? ' warn' : ' info'}`} data-testid="stream-type">
                  {s.type}
                </span>
              </td>
              <td className="st-groups">
                {s.groups.length === 0 ? (
                  <span className="muted small">none stored</span>
                ) : (
                  <>
                    {s.groups.slice(0, GROUPS_SHOWN).map((g) => (
                      <button
                        key={g}
                        type="button"
                        className={`st-group-chip${isSelected && g === selectedGroup ? ' selected' : ''}`}
                        title={`Inspect ${s.name} / ${g}`}
                        data-testid="group-chip"
                        onClick={() => onSelect(s.name, g)}
                      >
                        {g}
                      </button>
                    ))}
                    {s.groups.length > GROUPS_SHOWN && <span className="muted small">+{s.groups.length - GROUPS_SHOWN}</span>}
                  </>
                )}
              </td>
              <td className="st-num">{s.stats?.subscriptions ?? 0}</td>
              <td className="st-num">{s.stats?.events ?? 0}</td>
              <td className="st-num">{s.stats?.messages_out ?? 0}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
