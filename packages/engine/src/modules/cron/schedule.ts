import { createHash } from 'node:crypto';
import { FlintError } from '@flint/protocol';
import { Cron } from 'croner';
import type { CronTriggerConfig } from './trigger-config.js';

/**
 * A parsed cron expression in its time zone (croner): the standard 5 fields, 6 with leading seconds, and
 * the `@yearly` … `@hourly` shorthands; names, ranges, lists and steps; weekday 0 or 7 = Sunday; day of
 * month and day of week combined with OR, as POSIX cron does. Across a DST change a fixed-time slot
 * (seconds, minutes and hours each one value, e.g. `30 2 * * *`) runs once: in a gap at the first valid
 * time after it, in a repeated hour at its first occurrence. Other expressions follow real time: a slot
 * in a gap is skipped and a repeated hour runs twice (`*\/30 2 * * *`).
 */
export class Schedule {
  private readonly cron: Cron;
  /** The last `next` asked and its answer: the jobs sharing this schedule ask the same at each slot. */
  private lastAfter = Number.NaN;
  private lastNext: number | undefined;

  /** The schedule of `expression` in `timezone`, shared by every job that has the same (see `next`). */
  static of(expression: string, timezone: string): Schedule {
    const key = `${timezone} ${expression}`;
    let schedule = shared.get(key);
    if (!schedule) {
      schedule = new Schedule(expression, timezone);
      if (shared.size >= MAX_SHARED) shared.clear();
      shared.set(key, schedule);
    }
    return schedule;
  }

  constructor(
    readonly expression: string,
    readonly timezone: string,
  ) {
    if (!validTimeZone(timezone))
      throw new FlintError('trigger_registration_failed', `Unknown time zone '${timezone}': use an IANA name such as Europe/Berlin or UTC`);
    const fields = expression.trim().split(/\s+/).length;
    if (!expression.trim().startsWith('@') && fields !== 5 && fields !== 6)
      throw new FlintError(
        'trigger_registration_failed',
        `Invalid cron expression '${expression}': it has ${fields} field${fields === 1 ? '' : 's'}; expected 5 (minute hour day-of-month month day-of-week) or 6 (with seconds first)`,
      );
    try {
      // croner reads a named zone through Intl at every step (about 15x slower): UTC is a fixed offset.
      const zone = UTC_NAMES.has(timezone) ? { utcOffset: 0 } : { timezone };
      this.cron = new Cron(expression, { mode: '5-or-6-parts', paused: true, ...zone });
    } catch (err) {
      throw new FlintError('trigger_registration_failed', `Invalid cron expression '${expression}': ${reasonOf(err)}`);
    }
    if (this.next(Date.now()) === undefined) throw new FlintError('trigger_registration_failed', `Invalid cron expression '${expression}': it never fires`);
  }

  /** The first slot strictly after `afterMs` (ms since the epoch), or undefined when there is none. */
  next(afterMs: number): number | undefined {
    if (afterMs !== this.lastAfter) {
      this.lastNext = this.cron.nextRun(new Date(afterMs))?.getTime();
      this.lastAfter = afterMs;
    }
    return this.lastNext;
  }

  /** The next `n` slots after `afterMs`. */
  upcoming(n: number, afterMs: number): number[] {
    return this.cron.nextRuns(n, new Date(afterMs)).map((d) => d.getTime());
  }

  /** Up to the last `max` slots in (fromMs, toMs], oldest first. */
  between(fromMs: number, toMs: number, max: number): number[] {
    if (toMs <= fromMs) return [];
    return this.cron
      .previousRuns(max, new Date(toMs + 1))
      .map((d) => d.getTime())
      .filter((t) => t > fromMs && t <= toMs)
      .sort((a, b) => a - b);
  }
}

/**
 * The identity of a schedule: the function it calls and everything that shapes its firings. Triggers
 * with the same job id (replicas of a worker, on one engine or several) are one job: each slot fires once.
 */
export function jobIdOf(functionId: string, config: CronTriggerConfig): string {
  const shape = JSON.stringify([
    config.expression,
    config.timezone,
    config.condition_function_id ?? null,
    config.overlap,
    config.catch_up,
    config.catch_up_max,
    config.jitter_ms,
  ]);
  return `${functionId}#${createHash('sha256').update(shape).digest('hex').slice(0, 12)}`;
}

const UTC_NAMES = new Set(['UTC', 'Etc/UTC', 'Etc/Universal', 'Universal', 'Etc/Zulu', 'Zulu', 'GMT', 'Etc/GMT', 'Etc/UCT', 'UCT']);
const MAX_SHARED = 50_000;
const shared = new Map<string, Schedule>();
const formats = new Map<string, Intl.DateTimeFormat>();
/** Per time zone: the UTC offset (minutes) of the last quarter hour asked (zones change offset on quarter hours at most). */
const offsets = new Map<string, { quarter: number; offsetMin: number }>();
const QUARTER_MS = 15 * 60_000;

function validTimeZone(timezone: string): boolean {
  try {
    formatOf(timezone);
    return true;
  } catch {
    return false;
  }
}

function formatOf(timezone: string): Intl.DateTimeFormat {
  let format = formats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(timezone, format);
  }
  return format;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** ISO-8601 of `ms` as the wall clock of `timezone` shows it, with its offset: `2026-03-29T03:30:00.000+02:00`. */
export function isoInZone(ms: number, timezone: string): string {
  const offsetMin = UTC_NAMES.has(timezone) ? 0 : offsetOf(ms, timezone);
  const wall = new Date(ms + offsetMin * 60_000).toISOString().slice(0, -1);
  const abs = Math.abs(offsetMin);
  return `${wall}${offsetMin < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * isoInZone with the last answer kept: the jobs of one slot share its time and mostly their zone, and the
 * runs started in the same millisecond their actual time, so a burst of them formats each text once.
 */
export class IsoClock {
  private ms = Number.NaN;
  private timezone = '';
  private text = '';

  of(ms: number, timezone: string): string {
    if (ms !== this.ms || timezone !== this.timezone) {
      this.text = isoInZone(ms, timezone);
      this.ms = ms;
      this.timezone = timezone;
    }
    return this.text;
  }
}

/** The UTC offset of `timezone` at `ms`, in minutes (Intl, cached per quarter hour). */
function offsetOf(ms: number, timezone: string): number {
  const quarter = Math.floor(ms / QUARTER_MS);
  const cached = offsets.get(timezone);
  if (cached?.quarter === quarter) return cached.offsetMin;
  const at = quarter * QUARTER_MS;
  const parts: Record<string, number> = {};
  for (const p of formatOf(timezone).formatToParts(new Date(at))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const { year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  const offsetMin = Math.round((Date.UTC(year, month - 1, day, hour, minute, second) - at) / 60_000);
  offsets.set(timezone, { quarter, offsetMin });
  return offsetMin;
}

function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/^CronPattern: /, '');
}
