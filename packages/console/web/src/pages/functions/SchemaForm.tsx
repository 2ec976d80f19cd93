import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { type FieldKind, type JsonSchema, fieldKind, fits, isRecord, requiredOf } from './schema.js';

type Obj = Record<string, unknown>;

/** `obj` with `key` set to `value` (removed when `value` is undefined). */
function withKey(obj: Obj, key: string, value: unknown): Obj {
  const next = { ...obj };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * A form generated from an object JSON Schema: nested objects as fieldsets, strings as text inputs
 * (`enum` as a select), numbers and integers as number inputs, booleans as checkboxes, anything else
 * as a small JSON text area. Required fields are marked with `*` and required by the browser.
 */
export function SchemaForm({ schema, value, onChange }: { schema: JsonSchema; value: Obj; onChange: (value: Obj) => void }) {
  return (
    <div className="schema-form" data-testid="schema-form">
      <ObjectFields schema={schema} value={value} onChange={onChange} depth={0} />
    </div>
  );
}

function ObjectFields({ schema, value, onChange, depth }: { schema: JsonSchema; value: Obj; onChange: (value: Obj) => void; depth: number }) {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = requiredOf(schema);
  return (
    <>
      {Object.entries(properties).map(([key, prop]) => (
        <Field
          key={key}
          name={key}
          schema={isRecord(prop) ? prop : {}}
          required={required.includes(key)}
          value={value[key]}
          onChange={(v) => onChange(withKey(value, key, v))}
          depth={depth}
        />
      ))}
    </>
  );
}

function Label({ htmlFor, title, name, required }: { htmlFor: string; title: string | undefined; name: string; required: boolean }) {
  return (
    <label htmlFor={htmlFor} className="schema-label">
      <span className="schema-label-text">{title ?? name}</span>
      {title && title !== name && <code className="muted small"> {name}</code>}
      {required && (
        <span className="required-mark" title="required">
          {' '}
          *
        </span>
      )}
    </label>
  );
}

function Field({
  name,
  schema,
  required,
  value,
  onChange,
  depth,
}: {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: unknown;
  onChange: (value: unknown) => void;
  depth: number;
}) {
  const id = useId();
  let kind: FieldKind = fieldKind(schema);
  if (!fits(kind, value) || (kind === 'object' && depth > 8)) kind = 'json';
  const title = str(schema.title);
  const help = str(schema.description);
  const helpId = help ? `${id}-help` : undefined;
  const helpText = help && (
    <span id={helpId} className="schema-help small muted">
      {help}
    </span>
  );

  if (kind === 'object') {
    return (
      <fieldset className="schema-fieldset" aria-describedby={helpId}>
        <legend>
          {title ?? name}
          {title && title !== name && <code className="muted small"> {name}</code>}
          {required && (
            <span className="required-mark" title="required">
              {' '}
              *
            </span>
          )}
        </legend>
        {helpText}
        <ObjectFields schema={schema} value={isRecord(value) ? value : {}} onChange={onChange} depth={depth + 1} />
      </fieldset>
    );
  }

  if (kind === 'boolean') {
    return (
      <div className="field schema-field">
        <label className="check" htmlFor={id}>
          <input id={id} type="checkbox" checked={value === true} aria-describedby={helpId} onChange={(e) => onChange(e.target.checked)} />
          <span className="schema-label-text">{title ?? name}</span>
          {title && title !== name && <code className="muted small">{name}</code>}
          {required && (
            <span className="required-mark" title="required">
              *
            </span>
          )}
        </label>
        {helpText}
      </div>
    );
  }

  let control: ReactNode;
  if (kind === 'string') {
    control = (
      <input
        id={id}
        type="text"
        className="input"
        value={typeof value === 'string' ? value : ''}
        required={required}
        minLength={num(schema.minLength)}
        maxLength={num(schema.maxLength)}
        placeholder={Array.isArray(schema.examples) ? str(schema.examples[0]) : undefined}
        aria-describedby={helpId}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  } else if (kind === 'number' || kind === 'integer') {
    control = (
      <input
        id={id}
        type="number"
        className="input"
        inputMode={kind === 'integer' ? 'numeric' : 'decimal'}
        step={kind === 'integer' ? 1 : 'any'}
        min={num(schema.minimum)}
        max={num(schema.maximum)}
        value={typeof value === 'number' ? value : ''}
        required={required}
        aria-describedby={helpId}
        onChange={(e) => {
          const n = e.target.valueAsNumber;
          onChange(e.target.value === '' || Number.isNaN(n) ? undefined : n);
        }}
      />
    );
  } else if (kind === 'enum') {
    const options = (schema.enum as unknown[]).map((v) => ({ v, text: typeof v === 'string' ? v : JSON.stringify(v) }));
    const index = options.findIndex((o) => JSON.stringify(o.v) === JSON.stringify(value));
    control = (
      <select
        id={id}
        className="input"
        value={index < 0 ? '' : String(index)}
        required={required}
        aria-describedby={helpId}
        onChange={(e) => onChange(e.target.value === '' ? undefined : options[Number(e.target.value)]?.v)}
      >
        <option value="" disabled={required}>
          {required ? 'Choose…' : '(not set)'}
        </option>
        {options.map((o, i) => (
          <option key={o.text} value={String(i)}>
            {o.text}
          </option>
        ))}
      </select>
    );
  } else {
    control = <JsonField id={id} value={value} required={required} helpId={helpId} onChange={onChange} />;
  }

  return (
    <div className="field schema-field">
      <Label htmlFor={id} title={title} name={name} required={required} />
      {control}
      {helpText}
      {kind === 'json' && <span className="small muted">JSON{typeof schema.type === 'string' ? ` (${schema.type})` : ''}</span>}
    </div>
  );
}

/** A value of any type edited as JSON text; invalid JSON blocks the form's submission (custom validity). */
function JsonField({
  id,
  value,
  required,
  helpId,
  onChange,
}: {
  id: string;
  value: unknown;
  required: boolean;
  helpId: string | undefined;
  onChange: (value: unknown) => void;
}) {
  const [text, setText] = useState(() => (value === undefined ? '' : JSON.stringify(value, null, 2)));
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    ref.current?.setCustomValidity(error ? `Invalid JSON: ${error}` : '');
  }, [error]);
  const errorId = `${id}-error`;
  return (
    <>
      <textarea
        ref={ref}
        id={id}
        className={`input json-field${error ? ' invalid' : ''}`}
        rows={Math.min(6, Math.max(2, text.split('\n').length))}
        spellCheck={false}
        value={text}
        required={required}
        aria-invalid={error ? true : undefined}
        aria-describedby={[helpId, error ? errorId : undefined].filter(Boolean).join(' ') || undefined}
        onChange={(e) => {
          const t = e.target.value;
          setText(t);
          if (t.trim() === '') {
            setError(null);
            onChange(undefined);
            return;
          }
          try {
            onChange(JSON.parse(t));
            setError(null);
          } catch (err) {
            setError((err as Error).message);
          }
        }}
      />
      {error && (
        <span id={errorId} className="error-text small" role="status">
          Invalid JSON: {error}
        </span>
      )}
    </>
  );
}
