import { useQuery } from '@tanstack/react-query';
import type { MetricsResponse, RecentErrorsResponse } from '../../../src/api-types.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { api } from '../lib/api.js';
import { useNow } from '../lib/format.js';
import { useFunctions, useQueues, useTriggers, useWorkers } from '../lib/queries.js';
import { MetricCards, MetricsOff } from './dashboard/MetricCards.js';
import { QueuesPanel, RecentErrorsPanel, RegistryCards } from './dashboard/Panels.js';
import { LoadingLine } from './PageStatus.js';
import './pages.css';
import './dashboard/dashboard.css';

/** The figures are read this often (the console's sampler reads the engine every 2 s). */
const POLL_MS = 2000;

/** Dashboard: the registry at a glance, invocation rate, errors and latency over the last minutes, queues, and the newest failures. */
export function DashboardPage() {
  const metrics = useQuery({ queryKey: ['metrics'], queryFn: () => api.get<MetricsResponse>('_console/metrics?by_function=false'), refetchInterval: POLL_MS });
  const errors = useQuery({
    queryKey: ['recent-errors'],
    queryFn: () => api.get<RecentErrorsResponse>('_console/metrics/errors?limit=8'),
    refetchInterval: POLL_MS,
  });
  const workers = useWorkers();
  const functions = useFunctions(false);
  const triggers = useTriggers(false);
  const queues = useQueues();
  const now = useNow(5000);
  const m = metrics.data;

  return (
    <div className="page">
      <header className="page-header">
        <h1>Dashboard</h1>
        <span className="spacer" />
        <span className="muted small" data-testid="dash-live">
          {m?.bridge && m.bridge !== 'connected' ? 'The engine is not connected: figures resume when it is back' : 'Refreshed every 2 s'}
        </span>
      </header>
      <div className="dashboard">
        <RegistryCards workers={workers.data?.workers} functions={functions.data?.functions} triggers={triggers.data?.triggers} />
        <section aria-labelledby="dash-invocations" className="dash-section">
          <h2 id="dash-invocations" className="sr-only">
            Invocations
          </h2>
          {metrics.isPending ? (
            <LoadingLine />
          ) : metrics.isError && !m ? (
            <ErrorBox error={metrics.error} />
          ) : m && !m.available ? (
            <MetricsOff metrics={m} />
          ) : m ? (
            <MetricCards metrics={m} />
          ) : null}
        </section>
        <div className="dash-panels">
          <RecentErrorsPanel errors={errors.data} failure={errors.error} now={now} />
          <QueuesPanel queues={queues.data} error={queues.error} />
        </div>
      </div>
    </div>
  );
}
