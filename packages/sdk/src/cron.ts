/**
 * The config of a `cron` trigger (the engine's `flint-cron` module). Only `expression` is required; the
 * engine refuses any other key, so a misspelt `timezone` is an error rather than a schedule in UTC.
 */
export interface CronTriggerConfig {
  /** 5 fields (minute hour day-of-month month day-of-week), 6 with leading seconds, or `@hourly` … `@yearly`. */
  expression: string;
  /** IANA time zone the expression is read in, e.g. `Europe/Berlin`; default `UTC`. */
  timezone?: string;
  /** Called with the same payload first; a literal `false` skips the run. */
  condition_function_id?: string;
  /** `skip` (default): a slot that comes while the job's previous run is still going is left out; `allow`: runs side by side. */
  overlap?: 'skip' | 'allow';
  /** After downtime: `none` (default), `latest` (the most recent missed slot) or `all` (up to `catch_up_max` missed slots). */
  catch_up?: 'none' | 'latest' | 'all';
  /** With `catch_up: all`, at most this many missed slots are run (the most recent); default 10. */
  catch_up_max?: number;
  /** Each firing waits a random 0 … `jitter_ms` after its slot; default 0. */
  jitter_ms?: number;
}

/** What the function of a `cron` trigger is called with. */
export interface CronEvent {
  trigger: { id: string; type: 'cron'; expression: string; timezone: string };
  /** The job: the function and its schedule; replicas of a trigger share it, and it fires once per slot. */
  job_id: string;
  /** The slot, ISO-8601 in the trigger's time zone with its offset (`2026-03-30T09:00:00.000+02:00`). */
  scheduled_time: string;
  /** When the run started, in the same form (later than the slot by the jitter, or after downtime). */
  actual_time: string;
  /** `true` for a run started with `flint::cron::trigger` (`flint cron run`). */
  manual: boolean;
}
