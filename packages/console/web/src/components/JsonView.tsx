/** A JSON value, pretty-printed in a scrollable block (`undefined` shows as "no value"); `label` names it for screen readers. */
export function JsonView({ value, label, maxHeight }: { value: unknown; label?: string; maxHeight?: number }) {
  const text = value === undefined ? '(no value)' : JSON.stringify(value, null, 2);
  const block = (
    <pre className="json" style={maxHeight ? { maxHeight } : undefined}>
      {text}
    </pre>
  );
  return label ? (
    <figure className="json-figure" aria-label={label}>
      {block}
    </figure>
  ) : (
    block
  );
}
