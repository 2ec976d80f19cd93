import type { ReactNode } from 'react';
import type { MetricsResponse } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { formatDuration } from '../../lib/format.js';
import { Sparkline } from './Sparkline.js';
import { averageRate, latestWithRate, seriesOf, windowTotals } from './sparkline.js';

const rate = (n: number | undefined) => (n === undefined ? '—' : n < 10 ? (Math.round(n * 100) / 100).toString() : Math.round(n).toLocaleString());
const percent = (ratio: number | undefined) =>
  ratio === undefined ? '—' : `${ratio === 0 ? 0 : ratio < 0.1 ? (ratio * 100).toFixed(1) : Math.round(ratio * 100)}%`;
const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

function MetricCard({ title, value, testId, sub, children }: { title: string; value: string; testId: string; sub?: ReactNode; children?: ReactNode }) {
  return (
    <section className="card metric-card" aria-label={title}>
      <h3>{title}</h3>
      <div className="metric-value" data-testid={testId}>
        {value}
      </div>
      {children}
      {sub && <div className="metric-sub muted small">{sub}</div>}
    </section>
  );
}

const SNIPPET = `modules:
  - name: flint-observability
    config:
      metrics_enabled: true`;

/** Why there are no figures, and how to get them. */
export function MetricsOff({ metrics }: { metrics: MetricsResponse }) {
  return (
    <section className="card metrics-off" data-testid="metrics-off" aria-label="Metrics are not available">
      <h2>No invocation metrics</h2>
      <p>{metrics.detail ?? 'flint-observability does not count invocations on this engine.'}</p>
      <p className="muted small">
        Turn them on in <code>flint-config.yaml</code> (flint-observability is loaded by default when no module list is given) and restart the engine; the rest
        of the dashboard works without them.
      </p>
      <div className="snippet">
        <pre className="json">{SNIPPET}</pre>
        <CopyButton text={SNIPPET} label="Copy the config" />
      </div>
    </section>
  );
}

/** Invocations per second, error rate, latency and calls in flight, each with a sparkline of the history the console keeps. */
export function MetricCards({ metrics }: { metrics: MetricsResponse }) {
  const samples = metrics.samples;
  const last = samples.at(-1);
  const withRate = latestWithRate(samples);
  const end = last?.t ?? Date.now();
  const kept = samples.length > 1 ? samples[samples.length - 1]!.t - samples[0]!.t : 0;
  // The charts span what is kept (at least a minute, at most the whole history), so a fresh console's lines are not squeezed to the right.
  const windowMs = Math.min(metrics.window_ms, Math.max(60_000, kept));
  const lastMinute = samples.filter((s) => last !== undefined && s.t >= last.t - 60_000);
  const minute = windowTotals(lastMinute);
  const now = averageRate(samples, 10_000) ?? withRate?.rate;
  const spark = (label: string, series: Parameters<typeof Sparkline>[0]['series']) => (
    <Sparkline series={series} windowMs={windowMs} end={end} label={`${label}, last ${minutes(windowMs)}`} />
  );
  return (
    <div className="metric-grid">
      <MetricCard
        title="Invocations / s"
        value={rate(now)}
        testId="metric-rate"
        sub={
          <>
            over the last 10 s · <span data-testid="metric-total">{(last?.total ?? 0).toLocaleString()}</span> calls since the engine started
          </>
        }
      >
        {spark('Invocations per second', [{ points: seriesOf(samples, (s) => s.rate), tone: 'accent' }])}
      </MetricCard>
      <MetricCard
        title="Error rate"
        value={percent(lastMinute.length < 2 ? undefined : minute.calls === 0 ? 0 : minute.errors / minute.calls)}
        testId="metric-error-rate"
        sub={
          <>
            {minute.errors.toLocaleString()} of {minute.calls.toLocaleString()} calls failed in the last minute ·{' '}
            <span data-testid="metric-errors">{(last?.error ?? 0).toLocaleString()}</span> since the engine started
          </>
        }
      >
        {spark('Share of calls failing', [
          { points: seriesOf(samples, (s) => (s.rate === undefined ? undefined : (s.error_ratio ?? 0) * 100)), tone: 'error' },
        ])}
      </MetricCard>
      <MetricCard
        title="Latency p50 / p99"
        value={last?.p50_ms === undefined ? '—' : `${formatDuration(last.p50_ms)} / ${formatDuration(last.p99_ms ?? last.p50_ms)}`}
        testId="metric-latency"
        sub="over the engine's most recent 10,000 calls"
      >
        {spark('Latency p50 and p99', [
          { points: seriesOf(samples, (s) => s.p99_ms), tone: 'info' },
          { points: seriesOf(samples, (s) => s.p50_ms), tone: 'accent' },
        ])}
      </MetricCard>
      <MetricCard
        title="In flight"
        value={(last?.in_flight ?? 0).toLocaleString()}
        testId="metric-in-flight"
        sub={`calls running now · ${last?.workers_active ?? 0} ${last?.workers_active === 1 ? 'worker' : 'workers'} connected`}
      >
        {spark('Calls in flight', [{ points: seriesOf(samples, (s) => s.in_flight), tone: 'muted' }])}
      </MetricCard>
    </div>
  );
}
