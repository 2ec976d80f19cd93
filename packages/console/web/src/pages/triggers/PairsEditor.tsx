import { Plus, X } from 'lucide-react';
import { useId } from 'react';

export interface Pair {
  id: number;
  key: string;
  value: string;
}

let nextId = 1;
/** A new empty row. */
export const newPair = (key = '', value = ''): Pair => ({ id: nextId++, key, value });

/** The rows with a name, as [name, value] tuples. */
export const pairsToTuples = (rows: Pair[]): [string, string][] => rows.filter((r) => r.key.trim() !== '').map((r) => [r.key.trim(), r.value]);

/** Name/value rows (query parameters, headers) with add and remove. */
export function PairsEditor({
  title,
  noun,
  rows,
  onChange,
  keyPlaceholder,
  testId,
}: {
  title: string;
  noun: string;
  rows: Pair[];
  onChange: (rows: Pair[]) => void;
  keyPlaceholder: string;
  testId?: string;
}) {
  const id = useId();
  const update = (rowId: number, patch: Partial<Pair>) => onChange(rows.map((r) => (r.id === rowId ? { ...r, ...patch } : r)));
  return (
    <fieldset className="tr-pairs" data-testid={testId}>
      <legend>{title}</legend>
      {rows.length === 0 && <p className="muted small tr-none">None</p>}
      {rows.map((row, i) => (
        <div className="tr-pair" key={row.id}>
          <label className="sr-only" htmlFor={`${id}-${row.id}-k`}>
            {`${noun} ${i + 1} name`}
          </label>
          <input
            id={`${id}-${row.id}-k`}
            className="input mono"
            placeholder={keyPlaceholder}
            value={row.key}
            onChange={(e) => update(row.id, { key: e.target.value })}
          />
          <label className="sr-only" htmlFor={`${id}-${row.id}-v`}>
            {`${noun} ${i + 1} value`}
          </label>
          <input
            id={`${id}-${row.id}-v`}
            className="input mono"
            placeholder="value"
            value={row.value}
            onChange={(e) => update(row.id, { value: e.target.value })}
          />
          <button
            type="button"
            className="btn ghost small"
            aria-label={`Remove ${noun.toLowerCase()} ${i + 1}`}
            onClick={() => onChange(rows.filter((r) => r.id !== row.id))}
          >
            <X size={14} aria-hidden="true" />
          </button>
        </div>
      ))}
      <div>
        <button type="button" className="btn small" onClick={() => onChange([...rows, newPair()])}>
          <Plus size={14} aria-hidden="true" />
          Add {noun.toLowerCase()}
        </button>
      </div>
    </fieldset>
  );
}
