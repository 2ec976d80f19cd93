import type { ModuleContext, TriggerRecord, TriggerTypeDefinition, TriggerTypeProvider } from '../../core/module-api.js';
import { type FiringTrigger, fireTrigger } from '../../lib/triggers.js';
import type { StoredLogRecord } from './log-record.js';
import { type LogTriggerConfig, TRIGGER_TYPE_ATTRIBUTE, logTriggerConfigSchema, logTriggerPayload, shouldFire } from './log-trigger-match.js';

interface LogTrigger extends FiringTrigger {
  config: LogTriggerConfig;
}

/**
 * The `log` trigger type: every stored record fires the triggers whose level matches, in the background.
 * Their invocations carry the baggage entry `flint.trigger.type=log`, and the records they cause are
 * marked with it, so a handler that logs never sets its own trigger off again.
 */
export class LogTriggers implements TriggerTypeProvider<LogTriggerConfig> {
  private readonly triggers = new Map<string, LogTrigger>();

  constructor(private readonly ctx: ModuleContext) {}

  registerTrigger(t: TriggerRecord<LogTriggerConfig>): void {
    this.triggers.set(t.id, { id: t.id, type: 'log', function_id: t.function_id, condition_function_id: t.config.condition_function_id, config: t.config });
  }

  unregisterTrigger(t: TriggerRecord<LogTriggerConfig>): void {
    this.triggers.delete(t.id);
  }

  dispatch(record: StoredLogRecord): void {
    if (this.triggers.size === 0) return;
    let payload: ReturnType<typeof logTriggerPayload> | undefined;
    for (const trigger of this.triggers.values()) {
      if (!shouldFire(trigger.config, record)) continue;
      payload ??= logTriggerPayload(record);
      // The firing continues the trace of the record (when it has one), so the handler's spans sit in that trace.
      const traceparent = record.trace_id && record.span_id ? `00-${record.trace_id}-${record.span_id}-01` : undefined;
      void fireTrigger(this.ctx, trigger, payload, { logger: this.ctx.logger, traceparent, baggage: `${TRIGGER_TYPE_ATTRIBUTE}=log` });
    }
  }
}

/** The `log` trigger type as flint-observability registers it. */
export const LOG_TRIGGER_TYPE: TriggerTypeDefinition<LogTriggerConfig> = {
  id: 'log',
  description: 'Fires for each stored log record: config level? (exact, default all), min_level?, condition_function_id?',
  trigger_request_format: {
    type: 'object',
    additionalProperties: false,
    properties: {
      level: { enum: ['all', 'trace', 'debug', 'info', 'warn', 'error', 'fatal'] },
      min_level: { enum: ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] },
      condition_function_id: { type: 'string' },
    },
  },
  configSchema: logTriggerConfigSchema,
  call_request_format: {
    type: 'object',
    properties: {
      trace_id: { type: ['string', 'null'] },
      span_id: { type: ['string', 'null'] },
      message: { type: 'string' },
      level: { type: 'string' },
      function_name: { type: ['string', 'null'] },
      date: { type: 'string', format: 'date-time' },
      attributes: { type: 'object' },
      service_name: { type: 'string' },
    },
  },
};
