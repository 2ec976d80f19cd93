import type { CronListing } from '@flint/engine';
import { withModule } from '../client.js';
import { table, truncate } from '../table.js';

export interface CronCommandOptions {
  json?: boolean;
  url?: string;
  token?: string;
  timeoutMs?: number;
}

interface ManualRun {
  trigger_id: string;
  function_id: string;
  job_id: string;
  status: 'invoked' | 'skipped';
  result?: unknown;
}

const CRON_MODULE = { module: 'flint-cron', what: 'cron module' };

/** `flint cron`: every cron trigger with its schedule, next run and last run, soonest next run first. */
export function cronList(options: CronCommandOptions): Promise<string> {
  return withModule(options, CRON_MODULE, async (w) => {
    const answer = (await w.trigger({ function_id: 'engine::cron::list', payload: {} })) as { triggers: CronListing[] };
    if (options.json) return JSON.stringify(answer, null, 2);
    const rows = [...answer.triggers].sort(
      (a, b) =>
        (a.next_runs[0] ? Date.parse(a.next_runs[0]) : Number.POSITIVE_INFINITY) - (b.next_runs[0] ? Date.parse(b.next_runs[0]) : Number.POSITIVE_INFINITY) ||
        a.function_id.localeCompare(b.function_id),
    );
    return table(
      ['TRIGGER', 'FUNCTION', 'EXPRESSION', 'TIME ZONE', 'NEXT RUN', 'LAST RUN', 'OUTCOME'],
      rows.map((t) => [
        t.trigger_id,
        t.function_id,
        t.expression,
        t.timezone,
        t.next_runs[0] ? shortTime(t.next_runs[0]) : '-',
        t.last_run ? shortTime(t.last_run.scheduled_time) : '-',
        t.last_run ? outcome(t.last_run) : '-',
      ]),
    );
  });
}

/** `flint cron run TRIGGER_ID`: runs a cron trigger now (`flint::cron::trigger`) and prints what its function returned. */
export function cronRun(triggerId: string, options: CronCommandOptions): Promise<string> {
  return withModule(options, CRON_MODULE, async (w) => {
    const run = (await w.trigger({ function_id: 'flint::cron::trigger', payload: { trigger_id: triggerId }, timeoutMs: options.timeoutMs })) as ManualRun;
    if (options.json) return JSON.stringify(run, null, 2);
    if (run.status === 'skipped') return `${run.function_id} did not run: its condition returned false`;
    const head = `ran ${run.function_id} now (trigger ${run.trigger_id})`;
    return run.result === undefined || run.result === null ? head : `${head}\n${JSON.stringify(run.result, null, 2)}`;
  });
}

/** `2026-03-30T09:00:00.000+02:00` as `2026-03-30 09:00:00+02:00` (milliseconds only when there are some). */
function shortTime(iso: string): string {
  return iso.replace('T', ' ').replace(/\.000(?=[+-]\d\d:\d\d$|Z$)/, '');
}

/** `ok, 12 ms`, `failed, 3 ms: invocation_failed: boom`, `skipped by its condition, 2 ms`; `(manual)` for a run started by hand. */
function outcome(run: NonNullable<CronListing['last_run']>): string {
  const what = run.outcome === 'skipped' ? 'skipped by its condition' : run.outcome;
  const manual = run.manual ? ' (manual)' : '';
  const error = run.error ? `: ${run.error.code}: ${run.error.message.replace(/\s+/g, ' ')}` : '';
  return truncate(`${what}, ${run.duration_ms} ms${manual}${error}`, 70);
}
