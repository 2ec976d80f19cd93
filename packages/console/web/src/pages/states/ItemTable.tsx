import type { StateEntriesResponse } from '../../../../src/api-types.js';
import { preview, typeOf } from './model.js';

/** One page of a scope's keys: key, type and a preview of the value; a row selects its key. */
export function ItemTable({
  entries,
  selected,
  onSelect,
}: {
  entries: StateEntriesResponse['entries'];
  selected: string | undefined;
  onSelect: (key: string) => void;
}) {
  const sorted = [...entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return (
    <table className="table st-table">
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Type</th>
          <th scope="col">Preview</th>
        </tr>
      </thead>
      <tbody>
        {sorted.map((e) => (
          <tr key={e.key} className={`st-row${e.key === selected ? ' selected' : ''}`} data-testid="state-row" data-key={e.key}>
            <td className="st-key">
              <button type="button" className="row-button code-id" aria-current={e.key === selected ? 'true' : undefined} onClick={() => onSelect(e.key)}>
                {e.key}
              </button>
            </td>
            <td>
              <span className="badge">{typeOf(e.value)}</span>
            </td>
            <td className="mono st-preview">{preview(e.value)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
