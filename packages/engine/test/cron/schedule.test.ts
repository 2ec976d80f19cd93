import { describe, expect, test } from 'vitest';
import { IsoClock, Schedule, isoInZone, jobIdOf } from '../../dist/modules/cron/schedule.js';
import { type CronTriggerConfig, cronTriggerConfigSchema } from '../../dist/modules/cron/trigger-config.js';
import { thrownBy } from '../support/util.js';

const at = (iso: string): number => {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`bad instant in the test: ${iso}`);
  return ms;
};

/** The next `n` slots of `expression` in `timezone` after `after`, as the zone's wall clock shows them. */
const upcoming = (expression: string, timezone: string, after: string, n: number): string[] =>
  new Schedule(expression, timezone).upcoming(n, at(after)).map((ms) => isoInZone(ms, timezone));

/** Slots in UTC, as `Date#toISOString` writes them. */
const utc = (slots: number[]): string[] => slots.map((ms) => new Date(ms).toISOString());

describe('expressions', () => {
  test('5 fields: every 15 minutes from 9:00 to 17:45 on weekdays, skipping the weekend', () => {
    // 2026-01-02 is a Friday.
    expect(upcoming('*/15 9-17 * * MON-FRI', 'UTC', '2026-01-02T17:40:00Z', 6)).toEqual([
      '2026-01-02T17:45:00.000+00:00',
      '2026-01-05T09:00:00.000+00:00',
      '2026-01-05T09:15:00.000+00:00',
      '2026-01-05T09:30:00.000+00:00',
      '2026-01-05T09:45:00.000+00:00',
      '2026-01-05T10:00:00.000+00:00',
    ]);
  });

  test('6 fields: the first is seconds', () => {
    expect(upcoming('30 * * * * *', 'UTC', '2026-01-01T00:00:00Z', 3)).toEqual([
      '2026-01-01T00:00:30.000+00:00',
      '2026-01-01T00:01:30.000+00:00',
      '2026-01-01T00:02:30.000+00:00',
    ]);
    expect(upcoming('*/10 * * * * *', 'UTC', '2026-01-01T00:00:00.500Z', 2)).toEqual(['2026-01-01T00:00:10.000+00:00', '2026-01-01T00:00:20.000+00:00']);
  });

  test.each([
    ['@yearly', ['2027-01-01T00:00:00.000+00:00', '2028-01-01T00:00:00.000+00:00']],
    ['@annually', ['2027-01-01T00:00:00.000+00:00', '2028-01-01T00:00:00.000+00:00']],
    ['@monthly', ['2026-06-01T00:00:00.000+00:00', '2026-07-01T00:00:00.000+00:00']],
    ['@weekly', ['2026-05-17T00:00:00.000+00:00', '2026-05-24T00:00:00.000+00:00']],
    ['@daily', ['2026-05-14T00:00:00.000+00:00', '2026-05-15T00:00:00.000+00:00']],
    ['@midnight', ['2026-05-14T00:00:00.000+00:00', '2026-05-15T00:00:00.000+00:00']],
    ['@hourly', ['2026-05-13T11:00:00.000+00:00', '2026-05-13T12:00:00.000+00:00']],
  ])('%s', (shorthand, expected) => {
    // 2026-05-13 is a Wednesday; @weekly is Sunday midnight.
    expect(upcoming(shorthand, 'UTC', '2026-05-13T10:20:00Z', 2)).toEqual(expected);
  });

  test('month and day names, in either case', () => {
    expect(upcoming('0 0 1 JAN,JUL *', 'UTC', '2026-02-01T00:00:00Z', 3)).toEqual([
      '2026-07-01T00:00:00.000+00:00',
      '2027-01-01T00:00:00.000+00:00',
      '2027-07-01T00:00:00.000+00:00',
    ]);
    expect(upcoming('0 0 1 jan *', 'UTC', '2026-02-01T00:00:00Z', 1)).toEqual(['2027-01-01T00:00:00.000+00:00']);
    expect(upcoming('0 0 * * mon', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual(['2026-01-05T00:00:00.000+00:00', '2026-01-12T00:00:00.000+00:00']);
  });

  test('lists, ranges and steps (on a range and on a month range)', () => {
    expect(upcoming('5,10,50 1-2 * * *', 'UTC', '2026-01-01T00:00:00Z', 7)).toEqual([
      '2026-01-01T01:05:00.000+00:00',
      '2026-01-01T01:10:00.000+00:00',
      '2026-01-01T01:50:00.000+00:00',
      '2026-01-01T02:05:00.000+00:00',
      '2026-01-01T02:10:00.000+00:00',
      '2026-01-01T02:50:00.000+00:00',
      '2026-01-02T01:05:00.000+00:00',
    ]);
    expect(upcoming('1-5/2 * * * *', 'UTC', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-01T00:01:00.000+00:00',
      '2026-01-01T00:03:00.000+00:00',
      '2026-01-01T00:05:00.000+00:00',
      '2026-01-01T01:01:00.000+00:00',
    ]);
    expect(upcoming('0 0 1 JAN-DEC/5 *', 'UTC', '2026-01-01T00:00:00Z', 3)).toEqual([
      '2026-06-01T00:00:00.000+00:00',
      '2026-11-01T00:00:00.000+00:00',
      '2027-01-01T00:00:00.000+00:00',
    ]);
  });

  test('weekday 0, 7 and SUN are all Sunday, also at the end of a range', () => {
    const sundays = ['2026-01-04T00:00:00.000+00:00', '2026-01-11T00:00:00.000+00:00'];
    expect(upcoming('0 0 * * 0', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual(sundays);
    expect(upcoming('0 0 * * 7', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual(sundays);
    expect(upcoming('0 0 * * SUN', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual(sundays);
    // Saturday and Sunday.
    expect(upcoming('0 0 * * 6-7', 'UTC', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-03T00:00:00.000+00:00',
      '2026-01-04T00:00:00.000+00:00',
      '2026-01-10T00:00:00.000+00:00',
      '2026-01-11T00:00:00.000+00:00',
    ]);
  });

  test('day of month and day of week both restricted: either one matches (OR, as POSIX cron)', () => {
    // Every Friday, and the 13th whatever day it is (2026-01-13 is a Tuesday).
    expect(upcoming('0 0 13 * FRI', 'UTC', '2026-01-01T00:00:00Z', 5)).toEqual([
      '2026-01-02T00:00:00.000+00:00',
      '2026-01-09T00:00:00.000+00:00',
      '2026-01-13T00:00:00.000+00:00',
      '2026-01-16T00:00:00.000+00:00',
      '2026-01-23T00:00:00.000+00:00',
    ]);
    // Only one restricted: it alone decides.
    expect(upcoming('0 0 * * FRI', 'UTC', '2026-01-10T00:00:00Z', 2)).toEqual(['2026-01-16T00:00:00.000+00:00', '2026-01-23T00:00:00.000+00:00']);
    expect(upcoming('0 0 13 * *', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual(['2026-01-13T00:00:00.000+00:00', '2026-02-13T00:00:00.000+00:00']);
    // croner treats a stepped day of month (`*/2`) as restricted too, so it is OR-ed with the weekday
    // (Vixie cron would AND it): odd days, and Mondays (the 12th).
    expect(upcoming('0 0 */2 * MON', 'UTC', '2026-01-08T00:00:00Z', 4)).toEqual([
      '2026-01-09T00:00:00.000+00:00',
      '2026-01-11T00:00:00.000+00:00',
      '2026-01-12T00:00:00.000+00:00',
      '2026-01-13T00:00:00.000+00:00',
    ]);
  });

  test('29 February waits for a leap year', () => {
    expect(upcoming('0 0 29 2 *', 'UTC', '2026-03-01T00:00:00Z', 2)).toEqual(['2028-02-29T00:00:00.000+00:00', '2032-02-29T00:00:00.000+00:00']);
  });

  test('next is strictly after the instant given, to the millisecond', () => {
    const s = new Schedule('*/10 * * * *', 'UTC');
    expect(s.next(at('2026-01-01T00:10:00Z'))).toBe(at('2026-01-01T00:20:00Z'));
    expect(s.next(at('2026-01-01T00:09:59.999Z'))).toBe(at('2026-01-01T00:10:00Z'));
    expect(s.next(at('2026-01-01T00:10:00.001Z'))).toBe(at('2026-01-01T00:20:00Z'));
  });
});

describe('time zones and DST', () => {
  test('0 9 * * * in America/New_York stays at 9:00 local across the November change (13:00Z, then 14:00Z)', () => {
    const s = new Schedule('0 9 * * *', 'America/New_York');
    const slots = s.upcoming(4, at('2026-10-30T14:00:00Z'));
    expect(utc(slots)).toEqual(['2026-10-31T13:00:00.000Z', '2026-11-01T14:00:00.000Z', '2026-11-02T14:00:00.000Z', '2026-11-03T14:00:00.000Z']);
    expect(slots.map((ms) => isoInZone(ms, 'America/New_York'))).toEqual([
      '2026-10-31T09:00:00.000-04:00',
      '2026-11-01T09:00:00.000-05:00',
      '2026-11-02T09:00:00.000-05:00',
      '2026-11-03T09:00:00.000-05:00',
    ]);
  });

  test('spring forward in Europe/Berlin (2026-03-29, 02:00 → 03:00): 30 2 * * * fires once that day, at 03:00 local (01:00Z)', () => {
    const s = new Schedule('30 2 * * *', 'Europe/Berlin');
    const slots = s.upcoming(3, at('2026-03-28T12:00:00Z'));
    expect(utc(slots)).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z']);
    expect(slots.map((ms) => isoInZone(ms, 'Europe/Berlin'))).toEqual([
      '2026-03-29T03:00:00.000+02:00',
      '2026-03-30T02:30:00.000+02:00',
      '2026-03-31T02:30:00.000+02:00',
    ]);
    // Once the 03:00 slot has passed, the next is the following day.
    expect(s.next(at('2026-03-29T01:00:00Z'))).toBe(at('2026-03-30T00:30:00Z'));
    // Catch-up over the day sees that one slot too.
    expect(utc(s.between(at('2026-03-28T12:00:00Z'), at('2026-03-29T12:00:00Z'), 10))).toEqual(['2026-03-29T01:00:00.000Z']);
  });

  test('spring forward: an hourly job has no 02:00 that day', () => {
    expect(upcoming('0 * * * *', 'Europe/Berlin', '2026-03-28T23:30:00Z', 3)).toEqual([
      '2026-03-29T01:00:00.000+01:00',
      '2026-03-29T03:00:00.000+02:00',
      '2026-03-29T04:00:00.000+02:00',
    ]);
  });

  test('fall back in Europe/Berlin (2026-10-25, 03:00 → 02:00): 30 2 * * * fires once, in the first 02:30', () => {
    const s = new Schedule('30 2 * * *', 'Europe/Berlin');
    expect(upcoming('30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', 3)).toEqual([
      '2026-10-25T02:30:00.000+02:00',
      '2026-10-26T02:30:00.000+01:00',
      '2026-10-27T02:30:00.000+01:00',
    ]);
    // From inside the repeated hour (after the first 02:30, before the second), the next is the next day.
    expect(s.next(at('2026-10-25T00:30:00Z'))).toBe(at('2026-10-26T01:30:00Z'));
    expect(s.next(at('2026-10-25T01:15:00Z'))).toBe(at('2026-10-26T01:30:00Z'));
    expect(s.between(at('2026-10-25T00:30:00Z'), at('2026-10-25T03:00:00Z'), 10)).toEqual([]);
    expect(utc(s.between(at('2026-10-24T12:00:00Z'), at('2026-10-25T12:00:00Z'), 10))).toEqual(['2026-10-25T00:30:00.000Z']);
  });

  test('fall back: an hourly job runs in both 02:00s, an hour apart', () => {
    expect(upcoming('0 * * * *', 'Europe/Berlin', '2026-10-24T22:30:00Z', 4)).toEqual([
      '2026-10-25T01:00:00.000+02:00',
      '2026-10-25T02:00:00.000+02:00',
      '2026-10-25T02:00:00.000+01:00',
      '2026-10-25T03:00:00.000+01:00',
    ]);
  });

  test('the same expression names different instants in different zones', () => {
    const after = at('2026-07-01T00:00:00Z');
    expect(new Schedule('0 9 * * *', 'UTC').next(after)).toBe(at('2026-07-01T09:00:00Z'));
    expect(new Schedule('0 9 * * *', 'Europe/Berlin').next(after)).toBe(at('2026-07-01T07:00:00Z'));
    expect(new Schedule('0 9 * * *', 'Asia/Kolkata').next(after)).toBe(at('2026-07-01T03:30:00Z'));
  });
});

describe('isoInZone', () => {
  test('renders the offset on both sides of a change, with milliseconds', () => {
    expect(isoInZone(at('2026-03-29T00:59:59.123Z'), 'Europe/Berlin')).toBe('2026-03-29T01:59:59.123+01:00');
    expect(isoInZone(at('2026-03-29T01:00:00.456Z'), 'Europe/Berlin')).toBe('2026-03-29T03:00:00.456+02:00');
    expect(isoInZone(at('2026-10-25T00:30:00.007Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30:00.007+02:00');
    expect(isoInZone(at('2026-10-25T01:30:00.070Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30:00.070+01:00');
  });

  test('negative and non-whole-hour offsets, UTC, and instants before 1970', () => {
    expect(isoInZone(at('2026-01-01T00:00:00Z'), 'America/St_Johns')).toBe('2025-12-31T20:30:00.000-03:30');
    expect(isoInZone(at('2026-01-01T00:00:00Z'), 'Asia/Kathmandu')).toBe('2026-01-01T05:45:00.000+05:45');
    expect(isoInZone(at('2026-06-15T12:34:56.789Z'), 'UTC')).toBe('2026-06-15T12:34:56.789+00:00');
    expect(isoInZone(-1, 'UTC')).toBe('1969-12-31T23:59:59.999+00:00');
    expect(isoInZone(at('1969-07-20T20:17:40.250Z'), 'America/New_York')).toBe('1969-07-20T16:17:40.250-04:00');
  });

  test('what it renders parses back to the same instant', () => {
    for (const ms of [at('2026-03-29T00:59:59.999Z'), at('2026-10-25T01:00:00.001Z'), at('2026-11-01T06:30:00.500Z')]) {
      for (const tz of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Pacific/Chatham'])
        expect(Date.parse(isoInZone(ms, tz)), `${ms} in ${tz}`).toBe(ms);
    }
  });
});

describe('IsoClock', () => {
  test('gives what isoInZone gives, as the instant and the zone change and come back', () => {
    const clock = new IsoClock();
    const asks: [number, string][] = [
      [at('2026-03-29T00:59:59.999Z'), 'Europe/Berlin'],
      [at('2026-03-29T00:59:59.999Z'), 'Europe/Berlin'],
      [at('2026-03-29T01:00:00.000Z'), 'Europe/Berlin'],
      [at('2026-03-29T01:00:00.000Z'), 'UTC'],
      [at('2026-03-29T01:00:00.000Z'), 'Europe/Berlin'],
      [at('2026-03-29T00:59:59.999Z'), 'Europe/Berlin'],
      [0, 'Asia/Kolkata'],
      [0, 'UTC'],
    ];
    for (const [ms, tz] of asks) expect(clock.of(ms, tz), `${ms} in ${tz}`).toBe(isoInZone(ms, tz));
  });
});

describe('between (catch-up)', () => {
  const s = new Schedule('*/10 * * * *', 'UTC');

  test('oldest first, excluding `from`, including `to`', () => {
    expect(utc(s.between(at('2026-01-01T00:00:00Z'), at('2026-01-01T01:00:00Z'), 100))).toEqual([
      '2026-01-01T00:10:00.000Z',
      '2026-01-01T00:20:00.000Z',
      '2026-01-01T00:30:00.000Z',
      '2026-01-01T00:40:00.000Z',
      '2026-01-01T00:50:00.000Z',
      '2026-01-01T01:00:00.000Z',
    ]);
    // One millisecond short of a slot leaves it out; one past `from` still leaves `from`'s slot out.
    expect(utc(s.between(at('2026-01-01T00:00:00.001Z'), at('2026-01-01T00:59:59.999Z'), 100))).toEqual([
      '2026-01-01T00:10:00.000Z',
      '2026-01-01T00:20:00.000Z',
      '2026-01-01T00:30:00.000Z',
      '2026-01-01T00:40:00.000Z',
      '2026-01-01T00:50:00.000Z',
    ]);
    // One millisecond before a slot as `from` takes it in.
    expect(utc(s.between(at('2026-01-01T00:09:59.999Z'), at('2026-01-01T00:10:00Z'), 100))).toEqual(['2026-01-01T00:10:00.000Z']);
  });

  test('at most the last `max` slots', () => {
    expect(utc(s.between(at('2026-01-01T00:00:00Z'), at('2026-01-01T01:00:00Z'), 3))).toEqual([
      '2026-01-01T00:40:00.000Z',
      '2026-01-01T00:50:00.000Z',
      '2026-01-01T01:00:00.000Z',
    ]);
    expect(utc(s.between(at('2026-01-01T00:00:00Z'), at('2026-01-01T01:05:00Z'), 1))).toEqual(['2026-01-01T01:00:00.000Z']);
  });

  test('nothing in the interval, or an empty or reversed interval, gives nothing', () => {
    expect(s.between(at('2026-01-01T00:00:00Z'), at('2026-01-01T00:05:00Z'), 10)).toEqual([]);
    expect(s.between(at('2026-01-01T00:10:00Z'), at('2026-01-01T00:10:00Z'), 10)).toEqual([]);
    expect(s.between(at('2026-01-01T01:00:00Z'), at('2026-01-01T00:00:00Z'), 10)).toEqual([]);
  });

  test('with seconds, and across a DST change in the zone', () => {
    const seconds = new Schedule('*/10 * * * * *', 'UTC');
    expect(utc(seconds.between(at('2026-01-01T00:00:00.500Z'), at('2026-01-01T00:00:30.500Z'), 10))).toEqual([
      '2026-01-01T00:00:10.000Z',
      '2026-01-01T00:00:20.000Z',
      '2026-01-01T00:00:30.000Z',
    ]);
    const ny = new Schedule('0 9 * * *', 'America/New_York');
    expect(utc(ny.between(at('2026-10-30T00:00:00Z'), at('2026-11-02T23:00:00Z'), 10))).toEqual([
      '2026-10-30T13:00:00.000Z',
      '2026-10-31T13:00:00.000Z',
      '2026-11-01T14:00:00.000Z',
      '2026-11-02T14:00:00.000Z',
    ]);
  });
});

describe('registration errors', () => {
  test.each([
    ['61 * * * *', /minute/],
    ['0 24 * * *', /hour/],
    ['* * * * 8', /dayOfWeek/],
    ['60 * * * * *', /second/],
    ['5-1 * * * *', /5-1/],
    ['* * * *', /it has 4 fields; expected 5 \(minute hour day-of-month month day-of-week\) or 6 \(with seconds first\)/],
    ['* * * * * * *', /it has 7 fields; expected 5/],
    ['garbage', /it has 1 field; expected 5/],
    ['a b c d e', /illegal characters/],
    ['@reboot', /@reboot/],
  ])("'%s' is refused with its reason", (expression, reason) => {
    const err = thrownBy(() => new Schedule(expression, 'UTC'));
    expect(err.code).toBe('trigger_registration_failed');
    const prefix = `Invalid cron expression '${expression}': `;
    expect(err.message.startsWith(prefix), err.message).toBe(true);
    const text = err.message.slice(prefix.length);
    expect(text).toMatch(reason);
    // croner's own class prefix is not passed on.
    expect(text).not.toMatch(/^CronPattern/);
  });

  test.each(['0 0 30 2 *', '0 0 31 4 *', '0 0 0 31 FEB *'])("'%s' never fires and is refused", (expression) => {
    const err = thrownBy(() => new Schedule(expression, 'UTC'));
    expect(err.code).toBe('trigger_registration_failed');
    expect(err.message).toBe(`Invalid cron expression '${expression}': it never fires`);
  });

  test.each(['Mars/Olympus', 'Europe/Berln', 'UTC+2', ''])("time zone '%s' is refused", (timezone) => {
    const err = thrownBy(() => new Schedule('0 9 * * *', timezone));
    expect(err.code).toBe('trigger_registration_failed');
    expect(err.message).toMatch(new RegExp(`^Unknown time zone '${timezone.replace(/[+]/g, '\\+')}'`));
  });

  test('a valid expression in a valid zone is accepted and keeps what it was given', () => {
    const s = new Schedule('0 9 * * MON', 'Europe/Berlin');
    expect(s.expression).toBe('0 9 * * MON');
    expect(s.timezone).toBe('Europe/Berlin');
  });
});

describe('jobIdOf', () => {
  const config = (over: Partial<CronTriggerConfig> = {}): CronTriggerConfig =>
    cronTriggerConfigSchema.parse({ expression: '*/5 * * * *', timezone: 'Europe/Berlin', ...over });

  test('the same function and config give the same id, the function id prefixing it', () => {
    const id = jobIdOf('reports::daily', config());
    expect(id).toBe(jobIdOf('reports::daily', config()));
    expect(id).toMatch(/^reports::daily#[0-9a-f]{12}$/);
  });

  test('defaults and spelt-out defaults are the same job', () => {
    expect(jobIdOf('f', cronTriggerConfigSchema.parse({ expression: '0 9 * * *' }))).toBe(
      jobIdOf('f', cronTriggerConfigSchema.parse({ expression: '0 9 * * *', timezone: 'UTC', overlap: 'skip', catch_up: 'none', jitter_ms: 0 })),
    );
  });

  test('another function, expression, time zone, overlap, condition, catch-up or jitter is another job', () => {
    const base = jobIdOf('f', config());
    const others = [
      jobIdOf('g', config()),
      jobIdOf('f', config({ expression: '*/10 * * * *' })),
      jobIdOf('f', config({ timezone: 'UTC' })),
      jobIdOf('f', config({ overlap: 'allow' })),
      jobIdOf('f', config({ condition_function_id: 'f::when' })),
      jobIdOf('f', config({ condition_function_id: 'f::other' })),
      jobIdOf('f', config({ catch_up: 'latest' })),
      jobIdOf('f', config({ catch_up: 'all', catch_up_max: 3 })),
      jobIdOf('f', config({ jitter_ms: 500 })),
    ];
    expect(new Set([base, ...others]).size).toBe(others.length + 1);
  });
});
