import { z } from 'zod';
import { LOG_LEVEL_NAMES, type StoredLogRecord, levelOfRecord, levelRank, recordTimeMillis } from './log-record.js';

/**
 * The config of a `log` trigger; unknown keys are refused (a misspelt `level` would silently fire for
 * every record). `level` is an exact match (`warn` fires for warn records only), `min_level` a floor
 * (`warn` fires for warn, error and fatal); with both, both must hold.
 */
export const logTriggerConfigSchema = z.strictObject({
  level: z.enum(['all', ...LOG_LEVEL_NAMES], { error: `level must be one of all, ${LOG_LEVEL_NAMES.join(', ')}` }).default('all'),
  min_level: z.enum(LOG_LEVEL_NAMES, { error: `min_level must be one of ${LOG_LEVEL_NAMES.join(', ')}` }).optional(),
  condition_function_id: z.string().min(1).optional(),
});

export type LogTriggerConfig = z.output<typeof logTriggerConfigSchema>;

/**
 * Whether a record fires a trigger with this config. The record's level is levelOfRecord's (its
 * severity number, else its severity text); a record with no level fires only triggers that ask for
 * `all` levels and set no `min_level`.
 */
export function matches(config: Pick<LogTriggerConfig, 'level' | 'min_level'>, record: StoredLogRecord): boolean {
  const level = levelOfRecord(record);
  if (config.level !== 'all' && level !== config.level) return false;
  if (config.min_level !== undefined && (level === null || levelRank(level) < levelRank(config.min_level))) return false;
  return true;
}

/**
 * The attribute that marks a record as written while handling an invocation made for a `log` trigger:
 * whoever builds such a record sets it to `log`. The dispatcher does not fire `log` triggers for marked
 * records, so a handler that logs cannot set off its own trigger again and again.
 */
export const TRIGGER_TYPE_ATTRIBUTE = 'flint.trigger.type';

/** Whether the record was caused by a `log` trigger's own invocation (it carries the mark). */
export function causedByLogTrigger(record: Pick<StoredLogRecord, 'attributes'>): boolean {
  return record.attributes[TRIGGER_TYPE_ATTRIBUTE] === 'log';
}

/** `attributes` with the mark of causedByLogTrigger added (a new object). */
export function withLogTriggerMark(attributes: Record<string, unknown>): Record<string, unknown> {
  return { ...attributes, [TRIGGER_TYPE_ATTRIBUTE]: 'log' };
}

/** Whether the dispatcher fires a trigger with this config for the record: it matches and is not a trigger's own. */
export function shouldFire(config: Pick<LogTriggerConfig, 'level' | 'min_level'>, record: StoredLogRecord): boolean {
  return !causedByLogTrigger(record) && matches(config, record);
}

/** What a `log` trigger's function receives. */
export interface LogTriggerPayload {
  trace_id: string | null;
  span_id: string | null;
  message: string;
  /** The record's level name (lower case); for a record with no level, its severity text in lower case. */
  level: string;
  /** The function the record came from (its attribute `function_id`, else `function_name`), or null. */
  function_name: string | null;
  /** The record's instant, ISO-8601 in UTC. */
  date: string;
  attributes: Record<string, unknown>;
  service_name: string;
}

export function logTriggerPayload(record: StoredLogRecord): LogTriggerPayload {
  const { function_id, function_name } = record.attributes;
  const functionName = typeof function_id === 'string' ? function_id : typeof function_name === 'string' ? function_name : null;
  return {
    trace_id: record.trace_id,
    span_id: record.span_id,
    message: record.body,
    level: levelOfRecord(record) ?? record.severity_text.toLowerCase(),
    function_name: functionName,
    date: isoDate(recordTimeMillis(record)),
    attributes: record.attributes,
    service_name: record.service_name,
  };
}

function isoDate(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? new Date(0).toISOString() : date.toISOString();
}
