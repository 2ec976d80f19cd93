import { createHash } from 'node:crypto';
import { FlintError } from '@flint/protocol';
import { Cron } from 'croner';
import type { CronTriggerConfig } from './trigger-config.js';

/**
 * A parsed cron expression in its time zone (croner): the standard 5 fields, 6 with leading seconds, and
 * the `@yearly` … `@hourly` shorthands; names, ranges, lists and steps; weekday 0 or 7 = Sunday; day of
 * month and day of week combined with OR, as POSIX cron does. In a DST gap a fixed-time slot (e.g.
 * `30 2 * * *`) runs at the first valid time after the gap, and a repeated hour runs it once.
 */
export class Schedule {
  private readonly cron: Cron;

  constructor(
    readonly expression: string,
    readonly timezone: string,
  ) {
    if (!validTimeZone(timezone))
      throw new FlintError('trigger_registration_failed', `Unknown time zone '${timezone}': use an IANA name such as Europe/Berlin or UTC`);
    try {
      this.cron = new Cron(expression, { mode: '5-or-6-parts', timezone, paused: true });
    } catch (err) {
      throw new FlintError('trigger_registration_failed', `Invalid cron expression '${expression}': ${reasonOf(err)}`);
    }
    if (this.next(Date.now()) === undefined) throw new FlintError('trigger_registration_failed', `Invalid cron expression '${expression}': it never fires`);
  }

  /** The first slot strictly after `afterMs` (ms since the epoch), or undefined when there is none. */
  next(afterMs: number): number | undefined {
    return this.cron.nextRun(new Date(afterMs))?.getTime();
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

const formats = new Map<string, Intl.DateTimeFormat>();

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
  const parts: Record<string, number> = {};
  for (const p of formatOf(timezone).formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const { year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  const offsetMin = Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  return `${year}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}.${pad(((ms % 1000) + 1000) % 1000, 3)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/^CronPattern: /, '');
}
