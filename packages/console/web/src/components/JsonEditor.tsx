import { useId } from 'react';

/** The outcome of parsing an editor's text: the value, or the parser's message. */
export type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

/** Parses JSON text; empty text is `emptyAs` (default: an error). */
export function parseJson(text: string, emptyAs?: unknown): Parsed {
  if (text.trim() === '') return emptyAs !== undefined ? { ok: true, value: emptyAs } : { ok: false, error: 'Enter a JSON value' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/**
 * A JSON text editor with validation as you type: the parse error is shown under it and announced to
 * screen readers; Ctrl/⌘+Enter calls `onSubmit`.
 */
export function JsonEditor({
  label,
  value,
  onChange,
  onSubmit,
  rows = 8,
  emptyAs,
}: {
  label: string;
  value: string;
  onChange: (text: string) => void;
  onSubmit?: () => void;
  rows?: number;
  emptyAs?: unknown;
}) {
  const id = useId();
  const parsed = parseJson(value, emptyAs);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className={`input${parsed.ok ? '' : ' invalid'}`}
        rows={rows}
        spellCheck={false}
        value={value}
        aria-invalid={!parsed.ok}
        aria-describedby={parsed.ok ? undefined : `${id}-error`}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && parsed.ok) {
            e.preventDefault();
            onSubmit?.();
          }
        }}
      />
      {!parsed.ok && (
        <span id={`${id}-error`} className="error-text small" role="status">
          Invalid JSON: {parsed.error}
        </span>
      )}
    </div>
  );
}
