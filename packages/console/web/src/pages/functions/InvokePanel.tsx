import { History, Play, RotateCcw, Trash2 } from 'lucide-react';
import { Tabs } from 'radix-ui';
import { type FormEvent, type KeyboardEvent, useEffect, useState } from 'react';
import type { FunctionInfo, InvokeRequest, InvokeResponse } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { ErrorBox } from '../../components/ErrorBox.js';
import { JsonEditor, parseJson } from '../../components/JsonEditor.js';
import { JsonView } from '../../components/JsonView.js';
import { ApiRequestError, api } from '../../lib/api.js';
import { absoluteTime, formatDuration, timeOfDay } from '../../lib/format.js';
import { type InvocationRecord, useInvocationHistory } from './history.js';
import { SchemaForm } from './SchemaForm.js';
import { inputTemplate, isObjectSchema, isRecord, schemaType } from './schema.js';

type Tab = 'form' | 'json';
type Outcome = { kind: 'response'; res: InvokeResponse } | { kind: 'failure'; error: unknown } | { kind: 'invalid'; message: string };

const pretty = (v: unknown) => JSON.stringify(v, null, 2) ?? '';

/** Seconds since `since`, refreshed while a call is in flight. */
function Elapsed({ since }: { since: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 100);
    return () => clearInterval(t);
  }, []);
  return <span className="muted small">{formatDuration(now - since)}</span>;
}

/** A finished call: green with the result, red with the error code and message, or the API failure. */
function OutcomeView({ outcome }: { outcome: Outcome }) {
  if (outcome.kind === 'invalid') {
    return (
      <div className="card result error" data-testid="invoke-result" data-status="invalid" role="alert">
        <strong>Invalid JSON input</strong>
        <div>{outcome.message}</div>
      </div>
    );
  }
  if (outcome.kind === 'failure') {
    return (
      <div data-testid="invoke-result" data-status="failed">
        <ErrorBox error={outcome.error} />
      </div>
    );
  }
  const { res } = outcome;
  if (res.status === 'ok') {
    const text = pretty(res.result);
    return (
      <div className="card result ok" data-testid="invoke-result" data-status="ok">
        <div className="result-head">
          <strong className="ok-text">Success · {formatDuration(res.duration_ms)}</strong>
          {res.result !== undefined && <CopyButton text={text} label="Copy the result" />}
        </div>
        {res.result === undefined ? <p className="muted small">The function returned no value.</p> : <JsonView value={res.result} label="Result" />}
      </div>
    );
  }
  return (
    <div className="card result error" data-testid="invoke-result" data-status="error">
      <div className="result-head">
        <strong>
          <code className="error-code">{res.error.code}</code>
        </strong>
        <span className="muted small">failed after {formatDuration(res.duration_ms)}</span>
      </div>
      <div className="result-message">{res.error.message}</div>
    </div>
  );
}

function HistoryItem({ record, open, onToggle, onLoad }: { record: InvocationRecord; open: boolean; onToggle: () => void; onLoad: () => void }) {
  const label = record.outcome === 'ok' ? 'ok' : (record.error?.code ?? 'error');
  return (
    <li className={`history-entry${open ? ' open' : ''}`}>
      <button type="button" className="history-item" aria-expanded={open} onClick={onToggle} title={absoluteTime(record.at)}>
        <time dateTime={new Date(record.at).toISOString()} className="mono small">
          {timeOfDay(record.at)}
        </time>
        <span className={`badge ${record.outcome === 'ok' ? 'ok' : 'error'}`}>{label}</span>
        <span className="muted small history-duration">{record.duration_ms !== undefined ? formatDuration(record.duration_ms) : '—'}</span>
      </button>
      {open && (
        <div className="history-detail">
          <h4>Input</h4>
          <JsonView value={record.input} label="Input" maxHeight={180} />
          <h4>{record.outcome === 'ok' ? 'Result' : 'Error'}</h4>
          {record.outcome === 'ok' ? (
            <JsonView value={record.result} label="Result" maxHeight={180} />
          ) : (
            <div className="result-message">
              <code className="error-code">{record.error?.code}</code> {record.error?.message}
            </div>
          )}
          <div>
            <button type="button" className="btn small" onClick={onLoad}>
              <RotateCcw size={14} aria-hidden="true" />
              Load this input into the editor
            </button>
          </div>
        </div>
      )}
    </li>
  );
}

/**
 * Invoke a function from the console: a form generated from its request_format or raw JSON (kept in
 * sync), Ctrl/⌘+Enter or the button to call, the outcome inline and the last calls below.
 */
export function InvokePanel({ fn }: { fn: FunctionInfo }) {
  const schema = fn.request_format;
  const formable = isObjectSchema(schema);
  const [initial] = useState(() => inputTemplate(schema));
  const [tab, setTab] = useState<Tab>(formable ? 'form' : 'json');
  const [formValue, setFormValue] = useState<Record<string, unknown>>(() => (isRecord(initial) ? initial : {}));
  const [formKey, setFormKey] = useState(0);
  const [jsonText, setJsonText] = useState(() => pretty(initial));
  const [switchError, setSwitchError] = useState<string | null>(null);
  const [pendingSince, setPendingSince] = useState<number | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [openRecord, setOpenRecord] = useState<string | null>(null);
  const history = useInvocationHistory(fn.function_id);

  const changeTab = (next: string) => {
    if (next === tab || (next !== 'form' && next !== 'json')) return;
    setSwitchError(null);
    if (next === 'json') {
      if (formable) setJsonText(pretty(formValue));
      setTab('json');
      return;
    }
    if (formable) {
      const parsed = parseJson(jsonText, {});
      if (!parsed.ok) {
        setSwitchError(`Fix the JSON before switching to the form (${parsed.error}).`);
        return;
      }
      if (!isRecord(parsed.value)) {
        setSwitchError('The form edits an object, and this input is not one: keep editing it as JSON.');
        return;
      }
      setFormValue(parsed.value);
      setFormKey((k) => k + 1);
    }
    setTab('form');
  };

  const loadInput = (input: unknown) => {
    setJsonText(pretty(input));
    if (formable && isRecord(input)) {
      setFormValue(input);
      setFormKey((k) => k + 1);
    } else {
      setTab('json');
    }
    setSwitchError(null);
  };

  const invoke = async () => {
    if (pendingSince !== null) return;
    let input: unknown;
    if (tab === 'form' && formable) input = formValue;
    else {
      const parsed = parseJson(jsonText, {});
      if (!parsed.ok) {
        setOutcome({ kind: 'invalid', message: parsed.error });
        return;
      }
      input = parsed.value;
    }
    const at = Date.now();
    setPendingSince(at);
    setOutcome(null);
    const body: InvokeRequest = { function_id: fn.function_id, input };
    try {
      const res = await api.post<InvokeResponse>('_console/invoke', body);
      setOutcome({ kind: 'response', res });
      history.add(
        res.status === 'ok'
          ? { at, input, outcome: 'ok', duration_ms: res.duration_ms, result: res.result }
          : { at, input, outcome: 'error', duration_ms: res.duration_ms, error: res.error },
      );
    } catch (error) {
      setOutcome({ kind: 'failure', error });
      const code = error instanceof ApiRequestError ? (error.engineCode ?? error.code) : 'request_failed';
      history.add({ at, input, outcome: 'failed', error: { code, message: error instanceof Error ? error.message : String(error) } });
    } finally {
      setPendingSince(null);
    }
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void invoke();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLFormElement>) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.defaultPrevented) {
      e.preventDefault();
      e.currentTarget.requestSubmit();
    }
  };

  const schemaKind = isRecord(schema) ? schemaType(schema) : undefined;
  return (
    <section className="section invoke" aria-labelledby="invoke-title">
      <h3 id="invoke-title">Invoke</h3>
      <form className="invoke-form" onSubmit={onSubmit} onKeyDown={onKeyDown} aria-labelledby="invoke-title">
        <Tabs.Root value={tab} onValueChange={changeTab} className="tabs">
          <Tabs.List className="tab-list" aria-label="Input editor">
            <Tabs.Trigger value="form" className="tab">
              Form
            </Tabs.Trigger>
            <Tabs.Trigger value="json" className="tab">
              JSON
            </Tabs.Trigger>
          </Tabs.List>
          {switchError && (
            <p className="error-text small" role="alert">
              {switchError}
            </p>
          )}
          <Tabs.Content value="form" className="tab-panel">
            {formable ? (
              <SchemaForm key={formKey} schema={schema} value={formValue} onChange={setFormValue} />
            ) : (
              <p className="muted" data-testid="no-form">
                {schema == null
                  ? 'This function declares no request_format, so there is no form: write its input in the JSON tab.'
                  : `Its request_format is not an object schema with properties${schemaKind ? ` (type: ${schemaKind})` : ''}, so there is no form: write its input in the JSON tab.`}
              </p>
            )}
          </Tabs.Content>
          <Tabs.Content value="json" className="tab-panel">
            <JsonEditor label="Input (JSON)" value={jsonText} onChange={setJsonText} onSubmit={() => void invoke()} emptyAs={{}} rows={8} />
          </Tabs.Content>
        </Tabs.Root>
        <div className="invoke-actions">
          <button
            type="submit"
            className="btn primary"
            data-testid="invoke-button"
            disabled={pendingSince !== null}
            aria-keyshortcuts="Control+Enter Meta+Enter"
          >
            <Play size={14} aria-hidden="true" />
            {pendingSince !== null ? 'Invoking…' : 'Invoke'}
          </button>
          {pendingSince !== null ? <Elapsed since={pendingSince} /> : <kbd className="hint">Ctrl+Enter</kbd>}
          <span className="spacer" />
          <button type="button" className="btn ghost small" onClick={() => loadInput(initial)} title="Reset the input to the template from request_format">
            <RotateCcw size={14} aria-hidden="true" />
            Reset input
          </button>
        </div>
      </form>
      <div aria-live="polite" className="invoke-outcome">
        {outcome && <OutcomeView outcome={outcome} />}
      </div>
      <section className="section" aria-labelledby="history-title">
        <div className="section-head">
          <h3 id="history-title">
            <History size={13} aria-hidden="true" /> Recent invocations
          </h3>
          {history.list.length > 0 && (
            <button type="button" className="btn ghost small" onClick={history.clear}>
              <Trash2 size={14} aria-hidden="true" />
              Clear
            </button>
          )}
        </div>
        {history.list.length === 0 ? (
          <p className="muted small">No invocations from this console yet (the last 20 are kept for this browser session).</p>
        ) : (
          <ol className="history-list" data-testid="invoke-history">
            {history.list.map((r) => (
              <HistoryItem
                key={r.id}
                record={r}
                open={openRecord === r.id}
                onToggle={() => setOpenRecord((o) => (o === r.id ? null : r.id))}
                onLoad={() => loadInput(r.input)}
              />
            ))}
          </ol>
        )}
      </section>
    </section>
  );
}
