/** A JSON value, pretty-printed in a scrollable block (`undefined` shows as "no value"). */
export function JsonView({ value, label, maxHeight }: { value: unknown; label?: string; maxHeight?: number }) {
  const text = value === undefined ? '(no value)' : JSON.stringify(value, null, 2);
  return (
    <pre className="json" aria-label={label} style={maxHeight ? { maxHeight } : undefined}>
      {text}
    </pre>
  );
}
