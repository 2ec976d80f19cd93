import { Plus, X } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { useDebouncedUrlText } from './hooks.js';
import { STATUSES, TIME_RANGES, type TimeRange, type TracesSearch, formatAttribute, fromLocalInput, parseAttribute, toLocalInput } from './model/filters.js';

const STATUS_LABEL = { ok: 'OK', error: 'Error', unset: 'Pending' } as const;
const RANGE_LABEL: Record<TimeRange, string> = { '15m': 'Last 15 min', '1h': 'Last hour', '6h': 'Last 6 hours', '24h': 'Last 24 hours', custom: 'Custom…' };

type Update = (patch: Partial<TracesSearch>, replace?: boolean) => void;

/** A text filter written to the URL a moment after typing stops. */
function TextFilter({
  label,
  value,
  onChange,
  placeholder,
  className,
  testId,
  search,
}: {
  label: string;
  value: string | undefined;
  onChange: (v: string | undefined) => void;
  placeholder?: string;
  className?: string;
  testId: string;
  search?: boolean;
}) {
  const id = useId();
  const [text, setText] = useDebouncedUrlText(value, onChange);
  return (
    <div className={`field trc-field ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        className="input"
        type="search"
        value={text}
        placeholder={placeholder}
        onChange={(e) => setText(e.target.value)}
        data-testid={testId}
        data-search={search ? '' : undefined}
        spellCheck={false}
        autoComplete="off"
      />
    </div>
  );
}

/** A number of milliseconds, written to the URL a moment after typing stops. */
function DurationInput({
  label,
  value,
  onChange,
  testId,
}: {
  label: string;
  value: number | undefined;
  onChange: (v: number | undefined) => void;
  testId: string;
}) {
  const [text, setText] = useDebouncedUrlText(value === undefined ? undefined : String(value), (v) => {
    const n = v === undefined ? undefined : Number(v);
    onChange(n !== undefined && Number.isFinite(n) && n >= 0 ? n : undefined);
  });
  return (
    <input
      className="input trc-ms"
      type="number"
      min={0}
      step="any"
      inputMode="decimal"
      aria-label={label}
      placeholder={label.startsWith('Minimum') ? 'min' : 'max'}
      value={text}
      onChange={(e) => setText(e.target.value)}
      data-testid={testId}
    />
  );
}

/** The seven filters of the list, each kept in the URL. */
export function FilterBar({ search, update, active, onClear }: { search: TracesSearch; update: Update; active: number; onClear: () => void }) {
  const statusId = useId();
  const rangeId = useId();
  const attrId = useId();
  const [attrText, setAttrText] = useState('');
  const attrs = search.attr ?? [];
  const pendingAttr = attrText.trim() === '' ? undefined : parseAttribute(attrText);

  const addAttr = (e: FormEvent) => {
    e.preventDefault();
    if (!pendingAttr) return;
    const pair = formatAttribute(pendingAttr);
    if (!attrs.includes(pair)) update({ attr: [...attrs, pair] });
    setAttrText('');
  };

  return (
    <div className="trc-filters" data-testid="trace-filters">
      <div className="trc-filter-row">
        <TextFilter
          label="Trace ID"
          value={search.id}
          onChange={(id) => update({ id })}
          placeholder="4bf92f35…"
          className="trc-f-id"
          testId="filter-trace-id"
        />
        <TextFilter
          label="Service (root span)"
          value={search.service}
          onChange={(service) => update({ service })}
          placeholder="substring"
          testId="filter-service"
        />
        <TextFilter
          label="Span name"
          value={search.name}
          onChange={(name) => update({ name })}
          placeholder="substring, e.g. GET /orders"
          testId="filter-name"
          search
        />
        <div className="field trc-field">
          <label htmlFor={statusId}>Status</label>
          <select
            id={statusId}
            className="input"
            value={search.status ?? ''}
            onChange={(e) => update({ status: e.target.value === '' ? undefined : (e.target.value as TracesSearch['status']) })}
            data-testid="filter-status"
          >
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABEL[s]}
              </option>
            ))}
          </select>
        </div>
        <fieldset className="field trc-field trc-duration">
          <legend>Duration (ms)</legend>
          <div className="trc-inline">
            <DurationInput label="Minimum duration in ms" value={search.min} onChange={(min) => update({ min })} testId="filter-min" />
            <span className="muted">–</span>
            <DurationInput label="Maximum duration in ms" value={search.max} onChange={(max) => update({ max })} testId="filter-max" />
          </div>
        </fieldset>
        <div className="field trc-field">
          <label htmlFor={rangeId}>Time</label>
          <select
            id={rangeId}
            className="input"
            value={search.range ?? ''}
            onChange={(e) => {
              const range = e.target.value === '' ? undefined : (e.target.value as TimeRange);
              update(range === 'custom' ? { range, from: search.from ?? Date.now() - 3_600_000, to: search.to } : { range, from: undefined, to: undefined });
            }}
            data-testid="filter-range"
          >
            <option value="">Any time</option>
            {TIME_RANGES.map((r) => (
              <option key={r} value={r}>
                {RANGE_LABEL[r]}
              </option>
            ))}
          </select>
        </div>
        {search.range === 'custom' && (
          <fieldset className="field trc-field">
            <legend>From – to (local time)</legend>
            <div className="trc-inline">
              <input
                className="input"
                type="datetime-local"
                aria-label="From"
                value={toLocalInput(search.from)}
                onChange={(e) => update({ from: fromLocalInput(e.target.value) })}
                data-testid="filter-from"
              />
              <span className="muted">–</span>
              <input
                className="input"
                type="datetime-local"
                aria-label="To"
                value={toLocalInput(search.to)}
                onChange={(e) => update({ to: fromLocalInput(e.target.value) })}
                data-testid="filter-to"
              />
            </div>
          </fieldset>
        )}
      </div>
      <div className="trc-filter-row">
        <form className="field trc-field trc-attr-form" onSubmit={addAttr}>
          <label htmlFor={attrId}>Attribute (key=value, all must match)</label>
          <div className="trc-inline">
            <input
              id={attrId}
              className={`input${attrText.trim() !== '' && !pendingAttr ? ' invalid' : ''}`}
              value={attrText}
              onChange={(e) => setAttrText(e.target.value)}
              placeholder="http.response.status_code=500"
              spellCheck={false}
              autoComplete="off"
              data-testid="filter-attr-input"
            />
            <button type="submit" className="btn small" disabled={!pendingAttr} data-testid="filter-attr-add">
              <Plus size={14} aria-hidden="true" /> Add
            </button>
          </div>
        </form>
        {attrs.length > 0 && (
          <ul className="trc-chips" aria-label="Attribute filters">
            {attrs.map((a) => (
              <li key={a} className="trc-chip" data-testid="filter-attr-chip">
                <span className="mono">{a}</span>
                <button type="button" className="btn ghost small" aria-label={`Remove ${a}`} onClick={() => update({ attr: attrs.filter((x) => x !== a) })}>
                  <X size={12} aria-hidden="true" />
                </button>
              </li>
            ))}
          </ul>
        )}
        <span className="spacer" />
        <label className="check" title="Name and attributes: match the root span only (default: any span of the trace)">
          <input type="checkbox" checked={search.root === true} onChange={(e) => update({ root: e.target.checked ? true : undefined })} />
          Root span only
        </label>
        <label className="check" title="Include traces of the engine's own work">
          <input type="checkbox" checked={search.internal === true} onChange={(e) => update({ internal: e.target.checked ? true : undefined })} />
          Show internal
        </label>
        {active > 0 && (
          <button type="button" className="btn small" onClick={onClear} data-testid="clear-filters">
            <X size={14} aria-hidden="true" /> Clear filters ({active})
          </button>
        )}
      </div>
    </div>
  );
}
