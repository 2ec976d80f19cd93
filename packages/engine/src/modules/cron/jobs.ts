import { randomUUID } from 'node:crypto';
import { FlintError } from '@flint/protocol';
import type { KvStore } from '../../adapters/kv/types.js';
import type { LockBackend } from '../../adapters/lock/types.js';
import type { Logger } from '../../core/logger.js';
import {
  type AttributeValue,
  type FiringOptions,
  type ModuleContext,
  PreparedJson,
  type TriggerRecord,
  type TriggerTypeProvider,
} from '../../core/module-api.js';
import { errorMessage } from '../../lib/errors.js';
import { burstLogOf, floodLimit } from '../../lib/log-burst.js';
import { type FireOptions, type FireOutcome, type FiringTrigger, fireTriggerWith } from '../../lib/triggers.js';
import type { CronConfig } from './config.js';
import { type Claim, type RunRecord, claimSlot, readRecord, recordRun, renewRun } from './job-state.js';
import { IsoClock, Schedule, isoInZone, jobIdOf } from './schedule.js';
import { SlotTimer, type TimerHandle } from './slot-timer.js';
import type { CronTriggerConfig } from './trigger-config.js';

/**
 * A run under way is recorded in the store until now + this, renewed every third of it while it goes: when
 * its engine dies, `overlap: skip` stops holding the job's slots back this long after.
 */
export const RUN_LEASE_MS = 30_000;

/** One schedule: the triggers that share its job id (replicas) fire it once per slot. */
interface Job {
  id: string;
  function_id: string;
  config: CronTriggerConfig;
  schedule: Schedule;
  /** Trigger ids in registration order: the first is the one a firing names. */
  triggers: string[];
  next: number | undefined;
  timer: TimerHandle | undefined;
  /** The last run this engine saw end (the store has the last of every engine). */
  lastRun: RunRecord | undefined;
  /** What a firing names (the first trigger), made again when the triggers change. */
  firingTrigger: FiringTrigger | undefined;
  /** The payload's JSON up to its times (`trigger` and `job_id`), made with `firingTrigger`. */
  payloadHead: string;
  spanName: string;
}

/** What `engine::cron::list` shows of a trigger. */
export interface CronListing {
  trigger_id: string;
  function_id: string;
  job_id: string;
  expression: string;
  timezone: string;
  overlap: string;
  catch_up: string;
  next_runs: string[];
  last_run: (Omit<RunRecord, 'slot' | 'started_at'> & { scheduled_time: string; started_at: string }) | null;
}

/**
 * The `cron` trigger type. Every job's next slot waits on one timer (SlotTimer). When a slot comes, the
 * job's lock for that slot is taken (`adapter`), then the slot is claimed in the store, which every
 * engine sharing it sees: a slot already taken (by another engine, or before a restart) is not fired
 * again, and with `overlap: skip` a slot that comes while a run is under way is skipped.
 */
export class CronJobs implements TriggerTypeProvider<CronTriggerConfig> {
  /** This engine, as lock owner and in the store's `running`. */
  readonly engineId = randomUUID();
  private readonly jobs = new Map<string, Job>();
  private readonly jobOfTrigger = new Map<string, Job>();
  private readonly timer = new SlotTimer<Job>((job, at) => this.due(job, at));
  /** Firings under way (lock, claim and run): `drain` waits for them. */
  private firing = 0;
  private idle: (() => void)[] = [];
  /** Scheduled runs under way, their leases renewed together by one interval (see RUN_LEASE_MS). */
  private readonly leases = new Set<CronRun>();
  private leaseTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Jobs whose slot came in this turn, claimed and run together (see `due`), and their slots. */
  private dueJobs: Job[] = [];
  private dueSlots: number[] = [];
  /** The payload's times as text: the same slot and the same millisecond give the same string. */
  private readonly scheduledText = new IsoClock();
  private readonly actualText = new IsoClock();

  constructor(
    private readonly ctx: ModuleContext,
    private readonly locks: LockBackend,
    private readonly store: KvStore,
    private readonly config: CronConfig,
  ) {}

  registerTrigger(t: TriggerRecord<CronTriggerConfig>): void {
    const schedule = Schedule.of(t.config.expression, t.config.timezone);
    const id = jobIdOf(t.function_id, t.config);
    let job = this.jobs.get(id);
    if (!job) {
      job = {
        id,
        function_id: t.function_id,
        config: t.config,
        schedule,
        triggers: [],
        next: undefined,
        timer: undefined,
        lastRun: undefined,
        firingTrigger: undefined,
        payloadHead: '',
        spanName: `cron ${t.config.expression}`,
      };
      this.jobs.set(id, job);
      if (t.config.catch_up === 'none') this.plan(job, Date.now());
      else {
        // The missed slots go first, the job's timer after them: a regular slot that came while they ran would
        // take `last_slot` past them (they would be refused as taken) or be skipped as their overlap.
        const caught = job;
        caught.next = caught.schedule.next(Date.now());
        this.track(this.catchUp(caught).finally(() => this.resume(caught)));
      }
    }
    job.triggers.push(t.id);
    job.firingTrigger = undefined;
    this.jobOfTrigger.set(t.id, job);
  }

  unregisterTrigger(t: TriggerRecord<CronTriggerConfig>): void {
    const job = this.jobOfTrigger.get(t.id);
    if (!job) return;
    this.jobOfTrigger.delete(t.id);
    job.triggers = job.triggers.filter((id) => id !== t.id);
    job.firingTrigger = undefined;
    if (job.triggers.length > 0) return;
    job.timer?.cancel();
    job.timer = undefined;
    this.jobs.delete(job.id);
  }

  /** Stops firing; waits for the runs under way. */
  async drain(): Promise<void> {
    this.stopped = true;
    this.timer.stop();
    if (this.firing > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.leaseTimer = undefined;
  }

  /** Runs a trigger now (`flint::cron::trigger`): condition applied, lock and overlap bypassed; the result is returned. */
  async runNow(triggerId: string): Promise<{ trigger_id: string; function_id: string; job_id: string; status: 'invoked' | 'skipped'; result?: unknown }> {
    const job = this.jobOfTrigger.get(triggerId);
    if (!job) throw new FlintError('trigger_not_found', `no cron trigger ${triggerId}`);
    const now = Date.now();
    const outcome = await this.run(job, now, true);
    const base = { trigger_id: triggerId, function_id: job.function_id, job_id: job.id };
    if (outcome.status === 'invoked') return { ...base, status: 'invoked', result: outcome.result };
    if (outcome.status === 'skipped') return { ...base, status: 'skipped' };
    throw new FlintError(outcome.error.code, outcome.error.message);
  }

  /** Every cron trigger, with its next three slots and its job's last run (from the store when it answers). */
  async list(): Promise<CronListing[]> {
    const out: CronListing[] = [];
    const now = Date.now();
    for (const job of this.jobs.values()) {
      let last = job.lastRun;
      try {
        last = (await readRecord(this.store, job.id)).last_run ?? last;
      } catch {
        // The store is unavailable: this engine's own record.
      }
      const tz = job.config.timezone;
      const listing = {
        function_id: job.function_id,
        job_id: job.id,
        expression: job.config.expression,
        timezone: tz,
        overlap: job.config.overlap,
        catch_up: job.config.catch_up,
        next_runs: job.schedule.upcoming(3, now).map((ms) => isoInZone(ms, tz)),
        last_run: last ? { ...last, scheduled_time: isoInZone(last.slot, tz), started_at: isoInZone(last.started_at, tz) } : null,
      };
      for (const trigger_id of job.triggers) out.push({ trigger_id, ...listing });
    }
    return out;
  }

  get size(): number {
    return this.jobs.size;
  }

  private plan(job: Job, after: number): void {
    job.next = job.schedule.next(after);
    job.timer = job.next === undefined ? undefined : this.timer.add(job.next, job);
  }

  /** The next slot of each job fired in `slots` (and still registered). */
  private planAfter(jobs: Job[], slots: number[]): void {
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i] as Job;
      if (!this.stopped && this.jobs.get(job.id) === job) this.plan(job, slots[i] as number);
    }
  }

  /** After its catch-up: the job's timer, from the latest slot that came meanwhile (if any) or its next one. */
  private resume(job: Job): void {
    if (this.stopped || this.jobs.get(job.id) !== job || job.next === undefined) return;
    const late = job.schedule.between(job.next - 1, Date.now(), 1)[0];
    if (late !== undefined) job.next = late;
    job.timer = this.timer.add(job.next, job);
  }

  private due(job: Job, slot: number): void {
    if (this.stopped || this.jobs.get(job.id) !== job) return;
    const jitter = job.config.jitter_ms > 0 ? Math.floor(Math.random() * (job.config.jitter_ms + 1)) : 0;
    if (jitter > 0) {
      this.plan(job, slot);
      setTimeout(() => this.track(this.fireSlot(job, slot)), jitter).unref?.();
    } else {
      // Every job due now is known once the timer has handed them all over: they are locked and claimed
      // together, then run in one go (a slot of 10,000 jobs is one burst, not 10,000 chains of promises).
      if (this.dueJobs.length === 0) {
        // Under way from now: `drain` waits for these jobs too.
        this.firing++;
        queueMicrotask(this.fireDue);
      }
      this.dueJobs.push(job);
      this.dueSlots.push(slot);
    }
  }

  /** The jobs due this turn: their locks and claims, then the runs of the slots won, in one loop. */
  private readonly fireDue = (): void => {
    const jobs = this.dueJobs;
    const slots = this.dueSlots;
    this.dueJobs = [];
    this.dueSlots = [];
    const claims = jobs.map((job, i) => this.claim(job, slots[i] as number).then(undefined, asError));
    this.track(
      Promise.all(claims).then((outcomes) => {
        // One loop, so that the frames of the runs leave as one burst per connection (FrameBatcher).
        for (let i = 0; i < jobs.length; i++) this.afterClaim(jobs[i] as Job, slots[i] as number, outcomes[i] as Claim | Error);
      }),
    );
    // Each job's next slot in the next turn: working out 10,000 next times first would hold the whole slot
    // back. Claims in an in-process store are answered, and their runs started, in this turn; claims of a
    // store across the network come back later, and the next slots are then planned without waiting for them.
    setImmediate(() => this.planAfter(jobs, slots));
    // The turn's own count (taken when its first job was queued).
    this.untrack();
  };

  /** Runs a claimed slot; says why a slot is not run when that is news (an overlap, a store failure). */
  private afterClaim(job: Job, slot: number, claim: Claim | Error): void {
    if (claim === 'run') return this.start(job, slot, false);
    if (claim === 'taken') return;
    const scheduled_time = isoInZone(slot, job.config.timezone);
    const f = { job_id: job.id, function_id: job.function_id, scheduled_time };
    if (claim === 'overlap') {
      this.ctx.logger.info(f, `cron job ${job.id}: slot ${scheduled_time} skipped, the previous run is still going (overlap: skip)`);
      return;
    }
    burstLogOf(this.ctx.logger, NOT_FIRED_LOG).add(job.id, () =>
      this.ctx.logger.warn(
        { ...f, code: claim instanceof FlintError ? claim.code : undefined },
        `cron job ${job.id}: slot ${scheduled_time} not fired: ${errorMessage(claim)}`,
      ),
    );
  }

  /** After downtime: the most recent missed slot (`latest`) or the missed slots up to `catch_up_max` (`all`), oldest first. */
  private async catchUp(job: Job): Promise<void> {
    let lastSlot: number | undefined;
    try {
      lastSlot = (await readRecord(this.store, job.id)).last_slot;
    } catch (err) {
      this.ctx.logger.warn({ job_id: job.id }, `cron job ${job.id}: missed slots not caught up, the store is unavailable (${errorMessage(err)})`);
      return;
    }
    if (lastSlot === undefined) return;
    const upTo = (job.next ?? Date.now()) - 1;
    const max = job.config.catch_up === 'latest' ? 1 : job.config.catch_up_max;
    const missed = job.schedule.between(lastSlot, Math.min(upTo, Date.now()), max);
    if (missed.length === 0) return;
    this.ctx.logger.info(
      { job_id: job.id, function_id: job.function_id },
      `cron job ${job.id}: catching up ${missed.length} missed slot${missed.length === 1 ? '' : 's'}`,
    );
    for (const slot of missed) {
      if (this.stopped || this.jobs.get(job.id) !== job) return;
      await this.fireSlot(job, slot);
    }
  }

  /**
   * Takes a slot: its lock (a lock only this engine sees adds nothing to the store's claim, atomic for
   * every engine sharing the store), then its claim in the store. A lock held by another engine: `taken`.
   */
  private claim(job: Job, slot: number): Promise<Claim> {
    if (!this.locks.shared) return this.claimInStore(job, slot);
    return this.locks.acquire(`cron:${job.id}:${slot}`, this.engineId, this.config.lock_ttl_ms).then((won) => (won ? this.claimInStore(job, slot) : 'taken'));
  }

  private claimInStore(job: Job, slot: number): Promise<Claim> {
    const now = Date.now();
    return claimSlot(this.store, job.id, slot, this.engineId, job.config.overlap === 'skip', now + RUN_LEASE_MS, now);
  }

  /** One slot on its own (after a jitter, or caught up): its lock and claim, then the run. Never throws. */
  private async fireSlot(job: Job, slot: number): Promise<void> {
    const claim = await this.claim(job, slot).then(undefined, asError);
    if (claim !== 'run') return this.afterClaim(job, slot, claim);
    await this.run(job, slot, false);
  }

  /** Runs the job's function (after its condition) and records how it went. */
  private run(job: Job, slot: number, manual: boolean): Promise<FireOutcome> {
    return new Promise((resolve) => this.start(job, slot, manual, resolve));
  }

  /**
   * Starts a run: the job's function after its condition. The run counts as under way (`drain` waits for
   * it) until its record is written; `done` then gets the outcome. Callbacks rather than promises: a slot
   * starts every job due in it at once, and each promise would live (and be copied by the garbage
   * collector) until the job's answer came.
   */
  private start(job: Job, slot: number, manual: boolean, done?: (outcome: FireOutcome) => void): void {
    this.firing++;
    const startedAt = Date.now();
    const tz = job.config.timezone;
    const trigger = this.firingTriggerOf(job);
    const scheduled_time = this.scheduledText.of(slot, tz);
    // The payload `{trigger: {id, type, expression, timezone}, job_id, scheduled_time, actual_time, manual}`
    // as JSON: the job's part is written once (firingTriggerOf), the times (ISO-8601, nothing to escape) per run.
    const payload = new PreparedJson(
      `${job.payloadHead}"scheduled_time":"${scheduled_time}","actual_time":"${this.actualText.of(startedAt, tz)}","manual":${manual}}`,
    );
    const run = new CronRun(this, job, slot, scheduled_time, manual, startedAt, done);
    // Manual runs do not hold the job (overlap applies to scheduled slots): only a claimed slot's run renews.
    if (!manual) this.holdLease(run);
    try {
      fireTriggerWith(this.ctx, trigger, payload, run, run.end);
    } catch (err) {
      // Not expected (a firing reports its failures to `end`); the run must still end, or `drain` would wait for ever.
      run.end({ status: 'failed', stage: 'function', error: { code: 'internal_error', message: errorMessage(err) } });
    }
  }

  /** A run's end (once, from CronRun): its record, then `drain` no longer waits for it. */
  ended(run: CronRun, outcome: FireOutcome): void {
    const { job, slot, manual, since } = run;
    if (!manual) this.leases.delete(run);
    const record: RunRecord = {
      slot,
      manual,
      started_at: since,
      duration_ms: Date.now() - since,
      outcome: outcome.status === 'invoked' ? 'ok' : outcome.status === 'skipped' ? 'skipped' : 'failed',
    };
    if (outcome.status === 'failed') record.error = { code: outcome.error.code, message: outcome.error.message };
    job.lastRun = record;
    recordRun(this.store, job.id, record, this.engineId)
      .catch((err: unknown) =>
        burstLogOf(this.ctx.logger, NOT_RECORDED_LOG).add(job.id, () =>
          this.ctx.logger.warn({ job_id: job.id }, `cron job ${job.id}: run not recorded (${errorMessage(err)})`),
        ),
      )
      .finally(() => {
        this.untrack();
        run.done?.(outcome);
      });
  }

  /** The module's logger, for its runs (CronRun). */
  get logger(): Logger {
    return this.ctx.logger;
  }

  /** `run_timeout_ms`, for its runs (CronRun). */
  get runTimeoutMs(): number {
    return this.config.run_timeout_ms;
  }

  /** What a firing of the job names: its first trigger (and the payload's part that says so). */
  private firingTriggerOf(job: Job): FiringTrigger {
    if (job.firingTrigger) return job.firingTrigger;
    const id = job.triggers[0] ?? job.id;
    const { expression, timezone } = job.config;
    job.payloadHead = `{"trigger":${JSON.stringify({ id, type: 'cron', expression, timezone })},"job_id":${JSON.stringify(job.id)},`;
    job.firingTrigger = {
      id,
      type: 'cron',
      function_id: job.function_id,
      condition_function_id: job.config.condition_function_id,
      origin: { id, type: 'cron' },
    };
    return job.firingTrigger;
  }

  private track(work: Promise<unknown>): void {
    this.firing++;
    work.then(this.untrack, this.untrack);
  }

  private readonly untrack = (): void => {
    if (--this.firing === 0) for (const resolve of this.idle.splice(0)) resolve();
  };

  /** Keeps a run's lease in the store alive while it goes: one interval for every run under way. */
  private holdLease(lease: CronRun): void {
    this.leases.add(lease);
    if (this.leaseTimer || this.stopped) return;
    this.leaseTimer = setInterval(() => {
      const now = Date.now();
      if (this.leases.size === 0) {
        clearInterval(this.leaseTimer);
        this.leaseTimer = undefined;
        return;
      }
      for (const { job, slot, since } of this.leases) {
        if (now - since < RUN_LEASE_MS / 3) continue;
        renewRun(this.store, job.id, slot, this.engineId, now + RUN_LEASE_MS).catch((err: unknown) =>
          this.ctx.logger.debug(`cron job ${job.id}: run lease not renewed (${errorMessage(err)})`),
        );
      }
    }, RUN_LEASE_MS / 3);
    this.leaseTimer.unref?.();
  }
}

/**
 * A store or lock that goes down fails every job's slot at once (10,000 jobs, 10,000 lines a second): ten
 * lines a second in full, then one line a second counting the rest per job (written at the module's stop too).
 */
const cronSlotLog = (what: string) =>
  floodLimit('warn', 'jobs', (n, detail) => `${n.toLocaleString('en-US')} more cron slot${n === 1 ? '' : 's'} ${what} in the last second (${detail})`);
const NOT_FIRED_LOG = cronSlotLog('not fired');
const NOT_RECORDED_LOG = cronSlotLog('run but not recorded');

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * One run of a job: its lease while it goes (see RUN_LEASE_MS), and the options of its firing, with the
 * failure log's fields and the span's attributes made only when read (on a failure, for a tracer). One
 * object per run: a slot of 10,000 jobs keeps 10,000 of them alive until their answers come.
 */
class CronRun implements FireOptions, FiringOptions {
  readonly traceparent = undefined;
  readonly baggage = undefined;
  private over = false;

  constructor(
    private readonly owner: CronJobs,
    readonly job: Job,
    readonly slot: number,
    private readonly scheduledTime: string,
    readonly manual: boolean,
    /** When the run started. */
    readonly since: number,
    readonly done: ((outcome: FireOutcome) => void) | undefined,
  ) {}

  readonly end = (outcome: FireOutcome): void => {
    if (this.over) return;
    this.over = true;
    this.owner.ended(this, outcome);
  };

  get logger(): Logger {
    return this.owner.logger;
  }

  get timeoutMs(): number {
    return this.owner.runTimeoutMs;
  }

  get firing(): FiringOptions {
    return this;
  }

  get name(): string {
    return this.job.spanName;
  }

  get logFields(): Record<string, unknown> {
    return { job_id: this.job.id, scheduled_time: this.scheduledTime, manual: this.manual };
  }

  get attributes(): Record<string, AttributeValue> {
    return {
      'flint.cron.job_id': this.job.id,
      'flint.cron.expression': this.job.config.expression,
      'flint.cron.scheduled_time': this.scheduledTime,
      'flint.cron.manual': this.manual,
    };
  }
}
