import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Play } from 'lucide-react';
import { useId } from 'react';
import type { CronJob, CronTriggerRequest, InvokeResponse, TriggerInfo } from '../../../../src/api-types.js';
import { ErrorBox } from '../../components/ErrorBox.js';
import { api } from '../../lib/api.js';
import { useCron } from '../../lib/queries.js';
import { ActionError, InvokeResult } from './InvokeResult.js';
import { configString } from './model.js';

/** An ISO time (in the job's zone) as local time, with the original in the tooltip. */
export function LocalTime({ iso }: { iso: string }) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return <span className="mono">{iso}</span>;
  return (
    <time dateTime={iso} title={iso}>
      {d.toLocaleString()}
    </time>
  );
}

function LastRun({ run }: { run: CronJob['last_run'] }) {
  if (!run) return <span className="muted">never run</span>;
  const outcome = typeof run.outcome === 'string' ? run.outcome : undefined;
  const started = typeof run.started_at === 'string' ? run.started_at : typeof run.scheduled_time === 'string' ? run.scheduled_time : undefined;
  const duration = typeof run.duration_ms === 'number' ? run.duration_ms : undefined;
  const error = run.error && typeof run.error === 'object' ? (run.error as { code?: unknown; message?: unknown }) : undefined;
  return (
    <span className="tr-last-run">
      {outcome && <span className={`badge ${outcome === 'ok' ? 'ok' : outcome === 'failed' ? 'error' : 'warn'}`}>{outcome}</span>}
      {started && <LocalTime iso={started} />}
      {duration !== undefined && <span className="muted small">{duration} ms</span>}
      {run.manual === true && <span className="badge info">manual</span>}
      {error && (
        <span className="error-text small">
          {String(error.code ?? '')} {String(error.message ?? '')}
        </span>
      )}
    </span>
  );
}

/** A cron trigger: its schedule, the next runs, the last run and Trigger Now. */
export function CronPanel({ trigger }: { trigger: TriggerInfo }) {
  const id = useId();
  const cron = useCron();
  const queryClient = useQueryClient();
  const job = cron.data?.jobs.find((j) => j.trigger_id === trigger.id);
  const run = useMutation({
    mutationFn: () => api.post<InvokeResponse>('_console/cron/trigger', { trigger_id: trigger.id } satisfies CronTriggerRequest),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['cron'] }),
  });

  const expression = job?.expression ?? configString(trigger, 'expression');
  const timezone = job?.timezone ?? configString(trigger, 'timezone') ?? 'UTC';

  return (
    <section className="section" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Schedule</h3>
      <dl className="grid-info">
        <dt>Expression</dt>
        <dd className="code-id">{expression ?? '(none)'}</dd>
        <dt>Time zone</dt>
        <dd>{timezone}</dd>
        {job && (
          <>
            <dt>Next runs</dt>
            <dd>
              {job.next_runs.length === 0 ? (
                <span className="muted">none scheduled</span>
              ) : (
                <ol className="tr-runs">
                  {job.next_runs.map((r) => (
                    <li key={r}>
                      <LocalTime iso={r} />
                    </li>
                  ))}
                </ol>
              )}
            </dd>
            <dt>Last run</dt>
            <dd>
              <LastRun run={job.last_run} />
            </dd>
          </>
        )}
      </dl>
      {cron.isPending && <p className="muted">Loading…</p>}
      <ErrorBox error={cron.error} />
      {cron.data && !cron.data.available && <p className="muted">The cron module (flint-cron) is not loaded: this trigger waits until it is.</p>}
      {cron.data?.available && !job && <p className="muted small">The cron module has no job for this trigger (it is parked or was refused).</p>}
      <div>
        <button
          type="button"
          className="btn primary"
          data-testid="cron-trigger-now"
          disabled={run.isPending || cron.data?.available === false}
          onClick={() => run.mutate()}
        >
          <Play size={14} aria-hidden="true" />
          {run.isPending ? 'Running…' : 'Trigger Now'}
        </button>
      </div>
      <ActionError error={run.error} />
      {run.data && <InvokeResult response={run.data} />}
    </section>
  );
}
