/**
 * The `log` trigger's rules (src/modules/observability/log-trigger-match.ts) and the severity and id
 * helpers they stand on (log-record.ts): the config schema, which records a config matches (`level`
 * exact, `min_level` a floor, both together), the payload a handler gets, and the mark that keeps a
 * trigger's own logging from firing it again.
 *
 * Not part of the package's public entry: this file imports the built modules (dist/; `npx tsc -b` first).
 */
import { describe, expect, test } from 'vitest';
import {
  LOG_LEVEL_NAMES,
  SEVERITY_NUMBER,
  SEVERITY_TEXT,
  levelOfRecord,
  levelOfSeverityNumber,
  nanosToMillis,
  normaliseId,
} from '../../dist/modules/observability/log-record.js';
import {
  type LogTriggerConfig,
  TRIGGER_TYPE_ATTRIBUTE,
  causedByLogTrigger,
  logTriggerConfigSchema,
  logTriggerPayload,
  matches,
  shouldFire,
  withLogTriggerMark,
} from '../../dist/modules/observability/log-trigger-match.js';
import { BASE_MS, logRecord, prng } from '../support/observability/log-records.js';

type Level = (typeof LOG_LEVEL_NAMES)[number];

/** A record written at `level` the way the engine writes it (the level's number and text). */
const recordAt = (level: Level) => logRecord({ severity_number: SEVERITY_NUMBER[level], severity_text: SEVERITY_TEXT[level], body: `${level} line` });

const config = (input: unknown): LogTriggerConfig => logTriggerConfigSchema.parse(input);

/** The levels (of all six) whose records fire a trigger with this config. */
const firingLevels = (input: unknown): Level[] => LOG_LEVEL_NAMES.filter((level) => matches(config(input), recordAt(level)));

describe('severity', () => {
  test('each level has its OTLP number and text', () => {
    expect(LOG_LEVEL_NAMES.map((level) => [level, SEVERITY_NUMBER[level], SEVERITY_TEXT[level]])).toEqual([
      ['trace', 1, 'TRACE'],
      ['debug', 5, 'DEBUG'],
      ['info', 9, 'INFO'],
      ['warn', 13, 'WARN'],
      ['error', 17, 'ERROR'],
      ['fatal', 21, 'FATAL'],
    ]);
  });

  test('a severity number maps to the level of its range of four; outside 1–24 to none', () => {
    const expected: [number, Level | null][] = [
      [0, null],
      [1, 'trace'],
      [4, 'trace'],
      [5, 'debug'],
      [8, 'debug'],
      [9, 'info'],
      [12, 'info'],
      [13, 'warn'],
      [16, 'warn'],
      [17, 'error'],
      [20, 'error'],
      [21, 'fatal'],
      [24, 'fatal'],
      [25, null],
      [-1, null],
      [9.5, null],
      [Number.NaN, null],
    ];
    expect(expected.map(([n]) => [n, levelOfSeverityNumber(n)])).toEqual(expected);
  });

  test("a record's level: from its number; with no usable number, from its text in any case; else none", () => {
    expect(levelOfRecord({ severity_number: 13, severity_text: 'WARNING' })).toBe('warn');
    expect(levelOfRecord({ severity_number: 17, severity_text: 'INFO' })).toBe('error');
    expect(levelOfRecord({ severity_number: 0, severity_text: 'Error' })).toBe('error');
    expect(levelOfRecord({ severity_number: 0, severity_text: 'WARNING' })).toBeNull();
    expect(levelOfRecord({ severity_number: 99, severity_text: '' })).toBeNull();
  });
});

describe('ids and instants', () => {
  test('an all-zero, empty or missing id is null; others are lower-cased and trimmed', () => {
    expect(normaliseId('00000000000000000000000000000000')).toBeNull();
    expect(normaliseId('0000000000000000')).toBeNull();
    expect(normaliseId('')).toBeNull();
    expect(normaliseId('   ')).toBeNull();
    expect(normaliseId(undefined)).toBeNull();
    expect(normaliseId(null)).toBeNull();
    expect(normaliseId(42)).toBeNull();
    expect(normaliseId(' 4BF92F3577B34DA6A3CE929D0E0E4736 ')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(normaliseId('00f067aa0ba902b7')).toBe('00f067aa0ba902b7');
  });

  test('nanoseconds to whole milliseconds: exact on every millisecond, rounded down up to the last nanosecond (seeded sample)', () => {
    const rng = prng(7);
    for (let i = 0; i < 20_000; i++) {
      const ms = BASE_MS + Math.floor(rng() * 1e11);
      expect(nanosToMillis(ms * 1e6)).toBe(ms);
      expect(nanosToMillis(ms * 1e6 + 999_000)).toBe(ms);
      // The largest nanosecond count a double holds below the next millisecond (doubles are 256 ns apart here).
      expect(nanosToMillis((ms + 1) * 1e6 - 256)).toBe(ms);
    }
    // 2039-09-11: here a plain Math.floor(ns / 1e6) rounds up into the next millisecond.
    const nanos = Number(2_199_358_498_605_999_872n);
    expect(Math.floor(nanos / 1e6)).toBe(2_199_358_498_606);
    expect(nanosToMillis(nanos)).toBe(2_199_358_498_605);
  });
});

describe('config schema', () => {
  test('level defaults to all; every level name is taken; min_level and condition_function_id are optional', () => {
    expect(config({})).toEqual({ level: 'all' });
    for (const level of ['all', ...LOG_LEVEL_NAMES]) expect(config({ level }).level).toBe(level);
    expect(config({ level: 'error', min_level: 'warn', condition_function_id: 'alerts::only_prod' })).toEqual({
      level: 'error',
      min_level: 'warn',
      condition_function_id: 'alerts::only_prod',
    });
  });

  test.each([
    ['an unknown level', { level: 'warning' }, /level must be one of all, trace, debug, info, warn, error, fatal/],
    ['an upper-case level', { level: 'WARN' }, /level must be one of/],
    ['min_level all', { min_level: 'all' }, /min_level must be one of trace, debug, info, warn, error, fatal/],
    ['an unknown key', { levle: 'warn' }, /levle/],
    ['an empty condition function id', { condition_function_id: '' }, /condition_function_id/],
  ])('%s is refused', (_what, input, message) => {
    const result = logTriggerConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error!.message).toMatch(message);
  });
});

describe('matching', () => {
  test('level all (or absent) fires for every level', () => {
    expect(firingLevels({})).toEqual(LOG_LEVEL_NAMES);
    expect(firingLevels({ level: 'all' })).toEqual(LOG_LEVEL_NAMES);
  });

  test.each(LOG_LEVEL_NAMES.map((level) => [level]))('level %s fires for that level alone', (level) => {
    expect(firingLevels({ level })).toEqual([level]);
  });

  test.each([
    ['trace', ['trace', 'debug', 'info', 'warn', 'error', 'fatal']],
    ['info', ['info', 'warn', 'error', 'fatal']],
    ['warn', ['warn', 'error', 'fatal']],
    ['fatal', ['fatal']],
  ])('min_level %s fires for that level and above', (min_level, expected) => {
    expect(firingLevels({ min_level })).toEqual(expected);
  });

  test('level with min_level: both must hold', () => {
    expect(firingLevels({ level: 'error', min_level: 'warn' })).toEqual(['error']);
    expect(firingLevels({ level: 'info', min_level: 'warn' })).toEqual([]);
    expect(firingLevels({ level: 'all', min_level: 'error' })).toEqual(['error', 'fatal']);
  });

  test('the level is read from the severity number: any number of a range, a source word like WARNING', () => {
    const warning = logRecord({ severity_number: 15, severity_text: 'WARNING' });
    expect(matches(config({ level: 'warn' }), warning)).toBe(true);
    expect(matches(config({ min_level: 'error' }), warning)).toBe(false);
    expect(matches(config({ level: 'error' }), logRecord({ severity_number: 0, severity_text: 'error' }))).toBe(true);
  });

  test('a record with no level fires only a trigger for all levels with no floor', () => {
    const unknown = logRecord({ severity_number: 0, severity_text: 'NOTICE' });
    expect(matches(config({}), unknown)).toBe(true);
    expect(matches(config({ level: 'info' }), unknown)).toBe(false);
    expect(matches(config({ min_level: 'trace' }), unknown)).toBe(false);
  });
});

describe('payload', () => {
  test('the fields a handler gets, and no others', () => {
    const record = logRecord({
      at_ms: Date.parse('2026-03-01T12:34:56.789Z'),
      severity_number: 13,
      severity_text: 'WARNING',
      body: 'disk almost full',
      attributes: { function_id: 'disk::check', free_pct: 3 },
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      span_id: '00f067aa0ba902b7',
      service_name: 'storage',
      instrumentation_scope_name: 'flint',
    });
    expect(logTriggerPayload(record)).toStrictEqual({
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      span_id: '00f067aa0ba902b7',
      message: 'disk almost full',
      level: 'warn',
      function_name: 'disk::check',
      date: '2026-03-01T12:34:56.789Z',
      attributes: { function_id: 'disk::check', free_pct: 3 },
      service_name: 'storage',
    });
  });

  test('function_name: function_id, else function_name (strings only), else null', () => {
    const nameOf = (attributes: Record<string, unknown>) => logTriggerPayload(logRecord({ attributes })).function_name;
    expect(nameOf({ function_id: 'a::b', function_name: 'other' })).toBe('a::b');
    expect(nameOf({ function_name: 'orders::create' })).toBe('orders::create');
    expect(nameOf({ function_id: 7, function_name: 'fallback' })).toBe('fallback');
    expect(nameOf({ function_id: { id: 'x' } })).toBeNull();
    expect(nameOf({})).toBeNull();
  });

  test('level: lower-case name of every level; a record with no level gives its text in lower case', () => {
    expect(LOG_LEVEL_NAMES.map((level) => logTriggerPayload(recordAt(level)).level)).toEqual([...LOG_LEVEL_NAMES]);
    expect(logTriggerPayload(logRecord({ severity_number: 0, severity_text: 'NOTICE' })).level).toBe('notice');
  });

  test('trace and span null stay null; date falls back to the observed time when the timestamp is unset', () => {
    const payload = logTriggerPayload(
      logRecord({ timestamp_unix_nano: 0, observed_timestamp_unix_nano: Date.parse('2026-01-02T03:04:05.006Z') * 1e6 + 700_000 }),
    );
    expect(payload.trace_id).toBeNull();
    expect(payload.span_id).toBeNull();
    expect(payload.date).toBe('2026-01-02T03:04:05.006Z');
  });
});

describe('no loop', () => {
  test('the mark is the attribute flint.trigger.type set to log; adding it leaves the original alone', () => {
    expect(TRIGGER_TYPE_ATTRIBUTE).toBe('flint.trigger.type');
    const attributes = { user: 'alice' };
    const marked = withLogTriggerMark(attributes);
    expect(marked).toEqual({ user: 'alice', 'flint.trigger.type': 'log' });
    expect(attributes).toEqual({ user: 'alice' });
  });

  test('a marked record is caused by a log trigger; unmarked or marked by another trigger type is not', () => {
    expect(causedByLogTrigger(logRecord({ attributes: withLogTriggerMark({}) }))).toBe(true);
    expect(causedByLogTrigger(logRecord({ attributes: {} }))).toBe(false);
    expect(causedByLogTrigger(logRecord({ attributes: { 'flint.trigger.type': 'http' } }))).toBe(false);
    expect(causedByLogTrigger(logRecord({ attributes: { flint: { trigger: { type: 'log' } } } }))).toBe(false);
  });

  test('the dispatcher skips marked records even where the config matches them', () => {
    const all = config({});
    const marked = logRecord({ severity_number: 17, severity_text: 'ERROR', attributes: withLogTriggerMark({ function_id: 'alerts::on_error' }) });
    expect(matches(all, marked)).toBe(true);
    expect(shouldFire(all, marked)).toBe(false);
    expect(shouldFire(config({ level: 'error' }), { ...marked, attributes: { function_id: 'alerts::on_error' } })).toBe(true);
  });
});
