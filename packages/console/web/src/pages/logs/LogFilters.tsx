import { X } from 'lucide-react';
import { useId } from 'react';
import { useSearchText } from '../triggers/useSearchText.js';
import { RANGE_LABELS, fromLocalInput, rangeOf, toLocalInput } from './model.js';
import { LOG_LEVELS, LOG_RANGES, type LogLevelName, type LogRange, type LogsSearch } from './search.js';

/** Changes some search params (undefined removes one). */
export type UpdateSearch = (patch: Partial<LogsSearch>, replace?: boolean) => void;

/** The filters of the Logs page: minimum level, time range (custom: from/to), text and trace id, all in the URL. */
export function LogFilters({ search, update }: { search: LogsSearch; update: UpdateSearch }) {
  const id = useId();
  const [text, setText] = useSearchText(search.q, (q) => update({ q }, true), 250);
  const [trace, setTrace] = useSearchText(search.trace_id, (v) => update({ trace_id: v?.trim().toLowerCase() || undefined, span_id: undefined }, true), 400);
  const range = rangeOf(search);
  const any = search.severity || search.range || search.q || search.trace_id || search.span_id || search.from || search.to;

  return (
    <search className="toolbar log-filters" aria-label="Log filters">
      <span className="field-inline">
        <label htmlFor={`${id}-level`}>Minimum level</label>
        <select
          id={`${id}-level`}
          className="input"
          data-testid="level-filter"
          value={search.severity ?? ''}
          onChange={(e) => update({ severity: (e.target.value || undefined) as LogLevelName | undefined })}
        >
          <option value="">All levels</option>
          {LOG_LEVELS.map((l) => (
            <option key={l} value={l}>
              {l} and above
            </option>
          ))}
        </select>
      </span>
      <span className="field-inline">
        <label htmlFor={`${id}-range`}>Time range</label>
        <select
          id={`${id}-range`}
          className="input"
          data-testid="range-filter"
          value={range}
          onChange={(e) => {
            const next = e.target.value as LogRange;
            if (next === 'custom') {
              // Start from the range shown: the last hour up to now.
              update({ range: next, from: search.from ?? new Date(Date.now() - 3_600_000).toISOString(), to: search.to });
            } else update({ range: next, from: undefined, to: undefined });
          }}
        >
          {LOG_RANGES.map((r) => (
            <option key={r} value={r}>
              {RANGE_LABELS[r]}
            </option>
          ))}
        </select>
      </span>
      {range === 'custom' && (
        <>
          <span className="field-inline">
            <label htmlFor={`${id}-from`}>From</label>
            <input
              id={`${id}-from`}
              type="datetime-local"
              className="input"
              data-testid="range-from"
              value={toLocalInput(search.from)}
              onChange={(e) => update({ from: fromLocalInput(e.target.value) }, true)}
            />
          </span>
          <span className="field-inline">
            <label htmlFor={`${id}-to`}>To</label>
            <input
              id={`${id}-to`}
              type="datetime-local"
              className="input"
              data-testid="range-to"
              value={toLocalInput(search.to)}
              onChange={(e) => update({ to: fromLocalInput(e.target.value) }, true)}
            />
          </span>
        </>
      )}
      <label htmlFor={`${id}-text`} className="sr-only">
        Search the log text
      </label>
      <input
        id={`${id}-text`}
        type="search"
        className="input log-text-filter"
        placeholder="Search text and attributes"
        data-search
        data-testid="text-filter"
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <label htmlFor={`${id}-trace`} className="sr-only">
        Trace id
      </label>
      <input
        id={`${id}-trace`}
        type="search"
        className="input mono log-trace-filter"
        placeholder="Trace id"
        spellCheck={false}
        data-testid="trace-filter"
        value={trace}
        onChange={(e) => setTrace(e.target.value)}
      />
      {search.span_id && (
        <span className="badge info log-chip">
          span <span className="mono">{search.span_id}</span>
          <button type="button" className="log-chip-x" aria-label="Remove the span filter" onClick={() => update({ span_id: undefined })}>
            <X size={12} aria-hidden="true" />
          </button>
        </span>
      )}
      {any && (
        <button
          type="button"
          className="btn ghost small"
          onClick={() => {
            setText('');
            setTrace('');
            update({ severity: undefined, range: undefined, from: undefined, to: undefined, q: undefined, trace_id: undefined, span_id: undefined });
          }}
        >
          Clear filters
        </button>
      )}
    </search>
  );
}
