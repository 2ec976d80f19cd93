/** `00-<trace id>-<span id>-<flags>` → the two ids, lower-case (null when absent or malformed). */
export function idsOfTraceparent(traceparent: string | undefined): { trace_id: string | null; span_id: string | null } {
  const m = traceparent ? /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/i.exec(traceparent.trim()) : null;
  if (!m) return { trace_id: null, span_id: null };
  const id = (hex: string) => (/^0+$/.test(hex) ? null : hex.toLowerCase());
  return { trace_id: id(m[1] as string), span_id: id(m[2] as string) };
}

/** Fields for a log line written about a call: its trace and span ids, when it has them (none otherwise). */
export function traceFields(traceparent: string | undefined): { trace_id?: string; span_id?: string } {
  const { trace_id, span_id } = idsOfTraceparent(traceparent);
  return trace_id && span_id ? { trace_id, span_id } : {};
}
