import { type ErrorBody, type FlintError, toErrorBody } from '@flint/protocol';
import type { Logger } from '../core/logger.js';
import type { AttributeValue, FiringOptions, InvokeOptions, ModuleContext, TriggerOrigin } from '../core/module-api.js';
import { errorMessage } from './errors.js';
import { burstLogOf, floodLimit } from './log-burst.js';
import { traceFields } from './trace-context.js';

/** A trigger about to fire: its identity, its function and (optionally) its condition function. */
export interface FiringTrigger {
  id: string;
  type: string;
  function_id: string;
  condition_function_id?: string;
  /** `{id, type}` made once, for a trigger that fires often (else made per firing). */
  origin?: TriggerOrigin;
}

/**
 * The rate limit of a module's failure lines (one per module logger): a worker that goes away while
 * 10,000 cron jobs or queue deliveries fire at it would otherwise write 10,000 lines a second. The first
 * ten of each second are written in full (with their trace ids); the rest become one line per second
 * counting the failures per function; what is still counted when the module stops is written then.
 */
const FAILURE_LOG = floodLimit(
  'warn',
  'functions',
  (n, detail) => `${n.toLocaleString('en-US')} more trigger firing${n === 1 ? '' : 's'} failed in the last second (${detail})`,
);
const failureLog = (logger: Logger) => burstLogOf(logger, FAILURE_LOG);

export type ConditionOutcome = { pass: true } | { pass: false; error?: FlintError };

/** Fields for a log line, or what builds them (only when a line is written). */
export type LogFields = Record<string, unknown> | (() => Record<string, unknown>);

const fieldsOf = (fields: LogFields | undefined): Record<string, unknown> | undefined => (typeof fields === 'function' ? fields() : fields);

export interface ConditionOptions extends Pick<InvokeOptions, 'timeoutMs' | 'traceparent' | 'baggage'> {
  logger: Logger;
  /** Fields added to the log line of a failure (e.g. the HTTP answer's `error_id`). */
  logFields?: LogFields;
  /** Level of that line; default `warn`. */
  logLevel?: 'warn' | 'error';
  /**
   * Rate-limits that line (see `failureLog`), for background firings. Off for an HTTP guard, whose
   * answer names the line by its `error_id`.
   */
  rateLimited?: boolean;
}

/**
 * Runs a trigger's condition function with the input its handler would get. Only a literal `false`
 * skips the trigger; any other result passes. A failure (throw, time-out, no such function) does
 * not pass: it is logged with the trigger id and handed to `done` for the caller to answer.
 */
export function runCondition(
  ctx: Pick<ModuleContext, 'invokeWith'>,
  trigger: FiringTrigger & { condition_function_id: string },
  input: unknown,
  options: ConditionOptions,
  done: (outcome: ConditionOutcome) => void,
): void {
  const conditionId = trigger.condition_function_id;
  const origin = { id: trigger.id, type: trigger.type };
  const opts: InvokeOptions = { timeoutMs: options.timeoutMs, traceparent: options.traceparent, baggage: options.baggage, trigger: origin };
  ctx.invokeWith(conditionId, input, opts, (error, result) => {
    if (!error) return done(result === false ? { pass: false } : { pass: true });
    const fields = {
      trigger_id: trigger.id,
      trigger_type: trigger.type,
      function_id: trigger.function_id,
      condition_function_id: conditionId,
      ...traceFields(options.traceparent),
    };
    const write = () =>
      options.logger[options.logLevel ?? 'warn'](
        { ...fields, ...fieldsOf(options.logFields), code: error.code },
        `condition ${conditionId} failed: ${error.message}`,
      );
    if (options.rateLimited) failureLog(options.logger).add(conditionId, write);
    else write();
    done({ pass: false, error });
  });
}

export type FireOutcome =
  | { status: 'invoked'; result: unknown }
  | { status: 'skipped' }
  | { status: 'failed'; stage: 'condition' | 'function'; error: ErrorBody };

export interface FireOptions extends Pick<InvokeOptions, 'timeoutMs' | 'traceparent' | 'baggage'> {
  logger: Logger;
  /** The firing's span name and attributes, for the tracer (see FiringOptions). */
  spanName?: string;
  attributes?: Record<string, AttributeValue>;
  /**
   * Instead of the three fields above: the firing's options as an object of the caller's, read only when
   * the firing is observed (its attributes may be a getter, made only for a tracer).
   */
  firing?: FiringOptions;
  /** Fields added to the log line of a failure (`{scope, key}` of a state change, …). */
  logFields?: LogFields;
}

/**
 * Fires a trigger the way every background trigger type does: its condition (if any), then its
 * function with `data`, reporting the firing to invocation hooks. Failures are logged with the
 * trigger id (ten a second in full per module, the rest counted: see `failureLog`) and never thrown:
 * the outcome says what happened.
 */
export function fireTrigger(
  ctx: Pick<ModuleContext, 'invokeWith' | 'beginTrigger'>,
  trigger: FiringTrigger,
  data: unknown,
  options: FireOptions,
): Promise<FireOutcome> {
  return new Promise((resolve) => fireTriggerWith(ctx, trigger, data, options, resolve));
}

/** fireTrigger with a callback: no promise per firing, for the busiest paths (a queue's deliveries). */
export function fireTriggerWith(
  ctx: Pick<ModuleContext, 'invokeWith' | 'beginTrigger'>,
  trigger: FiringTrigger,
  data: unknown,
  options: FireOptions,
  resolve: (outcome: FireOutcome) => void,
): void {
  const origin = trigger.origin ?? { id: trigger.id, type: trigger.type };
  const firing = ctx.beginTrigger(
    origin,
    trigger.function_id,
    options.firing ?? { traceparent: options.traceparent, baggage: options.baggage, name: options.spanName, attributes: options.attributes },
  );
  // The condition and the function run under the firing's span.
  const trace = { timeoutMs: options.timeoutMs, traceparent: firing.trace.traceparent, baggage: firing.trace.baggage, trigger: origin };
  const invoke = () => {
    ctx.invokeWith(trigger.function_id, data, trace, (error, result) => {
      if (!error) {
        firing.end();
        return resolve({ status: 'invoked', result });
      }
      const body = toErrorBody(error);
      failureLog(options.logger).add(trigger.function_id, () =>
        options.logger.warn(
          {
            trigger_id: trigger.id,
            trigger_type: trigger.type,
            function_id: trigger.function_id,
            ...fieldsOf(options.logFields),
            code: body.code,
            ...traceFields(firing.trace.traceparent),
          },
          `${trigger.type} trigger failed: ${errorMessage(error)}`,
        ),
      );
      firing.end({ error: body });
      resolve({ status: 'failed', stage: 'function', error: body });
    });
  };
  const conditionId = trigger.condition_function_id;
  if (!conditionId) return invoke();
  // Named field by field: `options` may be an object whose fields are getters (a spread copies only own fields).
  const conditionOptions: ConditionOptions = {
    logger: options.logger,
    logFields: () => fieldsOf(options.logFields) ?? {},
    timeoutMs: trace.timeoutMs,
    traceparent: trace.traceparent,
    baggage: trace.baggage,
    rateLimited: true,
  };
  runCondition(ctx, { ...trigger, condition_function_id: conditionId }, data, conditionOptions, (outcome) => {
    if (outcome.pass) return invoke();
    if (outcome.error) {
      const body = toErrorBody(outcome.error);
      firing.end({ error: body });
      return resolve({ status: 'failed', stage: 'condition', error: body });
    }
    firing.end({ skipped: true });
    resolve({ status: 'skipped' });
  });
}
