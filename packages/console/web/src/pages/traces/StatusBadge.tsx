import type { TraceSpanStatus } from '../../../../src/api-types.js';

const LABEL: Record<TraceSpanStatus, string> = { ok: 'OK', error: 'Error', unset: 'Pending' };
const CLASS: Record<TraceSpanStatus, string> = { ok: 'ok', error: 'error', unset: 'warn' };

/** A span's status: OK, Error, or Pending (no status set). */
export function StatusBadge({ status }: { status: TraceSpanStatus }) {
  return (
    <span className={`badge ${CLASS[status] ?? ''}`} data-status={status}>
      {LABEL[status] ?? status}
    </span>
  );
}
