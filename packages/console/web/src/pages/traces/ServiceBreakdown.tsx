import { useMemo } from 'react';
import { serviceColorVar } from './colors.js';
import { type BreakdownRow, serviceBreakdown } from './model/breakdown.js';
import { formatNs, formatShare } from './model/format.js';
import type { TraceModel } from './model/tree.js';

/** Where the trace's time went: per service and per function, total and self time, with bars (plain DOM). */
export function ServiceBreakdown({ model, serviceIndex }: { model: TraceModel; serviceIndex: Map<string, number> }) {
  const breakdown = useMemo(() => serviceBreakdown(model), [model]);
  const whole = breakdown.selfTotalNs;
  const color = (service: string) => serviceColorVar(serviceIndex.get(service) ?? 0);

  return (
    <div className="trc-breakdown" data-testid="service-breakdown">
      <section className="section">
        <h3>Self time by service</h3>
        <div className="trc-stack" role="img" aria-label="Share of self time by service">
          {breakdown.services.map((s) =>
            s.selfNs > 0 ? (
              <span
                key={s.key}
                className="trc-stack-part"
                style={{ width: `${(s.selfNs / (whole || 1)) * 100}%`, background: color(s.service) }}
                title={`${s.service}: ${formatNs(s.selfNs)} (${formatShare(s.selfNs, whole)})`}
              />
            ) : null,
          )}
        </div>
        <p className="hint">
          Self time is the time a span spent while none of its children ran: it adds up to the work of the trace, without counting nested calls twice. Total
          time sums the spans&apos; durations (a call and the spans under it both count). Bars: self time filled, total time outlined.
        </p>
        <BreakdownTable rows={breakdown.services} whole={whole} color={color} kind="service" />
      </section>
      <section className="section">
        <h3>By function</h3>
        <BreakdownTable rows={breakdown.functions} whole={whole} color={color} kind="function" />
      </section>
    </div>
  );
}

function BreakdownTable({
  rows,
  whole,
  color,
  kind,
}: {
  rows: BreakdownRow[];
  whole: number;
  color: (service: string) => string;
  kind: 'service' | 'function';
}) {
  const maxTotal = Math.max(1, ...rows.map((r) => r.totalNs));
  return (
    <table className="table trc-bd-table" data-testid={`breakdown-${kind}s`}>
      <thead>
        <tr>
          <th scope="col">{kind === 'service' ? 'Service' : 'Function / span'}</th>
          <th scope="col" className="trc-num">
            {kind === 'service' ? 'Spans' : 'Calls'}
          </th>
          <th scope="col" className="trc-num">
            Errors
          </th>
          <th scope="col" className="trc-num">
            Total
          </th>
          <th scope="col" className="trc-num">
            Self
          </th>
          {kind === 'function' && (
            <th scope="col" className="trc-num">
              Avg
            </th>
          )}
          <th scope="col" className="trc-bd-bar-col">
            Self time share
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key} data-testid={`breakdown-${kind}-row`}>
            <td className="trc-bd-name">
              <span className="trc-bd-label">
                <span className="trc-swatch" style={{ background: color(r.service) }} aria-hidden="true" />
                {kind === 'service' ? (
                  <span>{r.service}</span>
                ) : (
                  <span>
                    <span className="mono">{r.operation}</span>
                    <span className="muted small trc-bd-service">{r.service}</span>
                  </span>
                )}
              </span>
            </td>
            <td className="trc-num">{r.count.toLocaleString()}</td>
            <td className="trc-num">{r.errors > 0 ? <span className="badge error">{r.errors}</span> : 0}</td>
            <td className="trc-num">{formatNs(r.totalNs)}</td>
            <td className="trc-num">{formatNs(r.selfNs)}</td>
            {kind === 'function' && <td className="trc-num">{formatNs(r.totalNs / r.count)}</td>}
            <td className="trc-bd-bar-col">
              <span className="trc-bd-track">
                <span className="trc-bd-total" style={{ width: `${(r.totalNs / maxTotal) * 100}%` }} />
                <span className="trc-bd-self" style={{ width: `${(r.selfNs / maxTotal) * 100}%`, background: color(r.service) }} />
              </span>
              <span className="trc-bd-share small">{formatShare(r.selfNs, whole)}</span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
