import type { KvStore } from '../../adapters/kv/types.js';

/** The store scope of the jobs' records (key: job id). */
export const JOBS_SCOPE = 'flint-cron:jobs';

/** How a run ended. */
export interface RunRecord {
  /** The slot (ms since the epoch); for a manual run, its start. */
  slot: number;
  manual: boolean;
  started_at: number;
  duration_ms: number;
  outcome: 'ok' | 'failed' | 'skipped';
  error?: { code: string; message: string };
}

/** What the store keeps per job, shared by every engine using the store. */
export interface JobRecord {
  /** The latest slot taken by an engine (fired, or skipped as an overlap). */
  last_slot?: number;
  /** The run under way, until it ends or `until` passes: its engine renews it while the run goes (see RUN_LEASE_MS in jobs.ts). */
  running?: { slot: number; engine: string; until: number };
  last_run?: RunRecord;
}

export type Claim = 'run' | 'taken' | 'overlap';

/**
 * Takes `slot` for this engine: `taken` when an engine already took it or a later one, `overlap` when
 * `skipOverlap` and a run is under way (the slot counts as taken, and is not caught up later), else
 * `run` (the slot is recorded with this run as under way). Atomic in the store.
 */
export function claimSlot(store: KvStore, jobId: string, slot: number, engine: string, skipOverlap: boolean, until: number, now: number): Promise<Claim> {
  // No async function here: a slot claims every job due in it at once (a promise less per job).
  return store
    .update<Claim>(JOBS_SCOPE, jobId, (current) => {
      const record = asRecord(current.value);
      if (record.last_slot !== undefined && record.last_slot >= slot) return { value: current.value, extra: 'taken' };
      if (skipOverlap && record.running && record.running.until > now) return { value: { ...record, last_slot: slot }, extra: 'overlap' };
      return { value: { ...record, last_slot: slot, running: { slot, engine, until } }, extra: 'run' };
    })
    .then(extraOf);
}

const extraOf = <R>(result: { extra: R }): R => result.extra;

/** Extends this engine's run of `slot` to `until` (a lease: an engine that dies stops renewing it). */
export async function renewRun(store: KvStore, jobId: string, slot: number, engine: string, until: number): Promise<void> {
  await store.update(JOBS_SCOPE, jobId, (current) => {
    const record = asRecord(current.value);
    if (record.running?.engine !== engine || record.running.slot !== slot) return { value: current.value, extra: undefined };
    return { value: { ...record, running: { slot, engine, until } }, extra: undefined };
  });
}

/** Records a finished run (and clears `running` when it is this run's). */
export async function recordRun(store: KvStore, jobId: string, run: RunRecord, engine: string): Promise<void> {
  await store.update(JOBS_SCOPE, jobId, (current) => {
    const record = asRecord(current.value);
    const next: JobRecord = { ...record, last_run: run };
    if (!run.manual && record.running?.engine === engine && record.running.slot === run.slot) delete next.running;
    return { value: next, extra: undefined };
  });
}

export async function readRecord(store: KvStore, jobId: string): Promise<JobRecord> {
  return asRecord((await store.get(JOBS_SCOPE, jobId)).value);
}

function asRecord(value: unknown): JobRecord {
  return value !== null && typeof value === 'object' ? (value as JobRecord) : {};
}
