import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { type ObservabilityConfig, observabilityConfigSchema } from './config.js';
import { registerLogFunctions } from './log-functions.js';
import { engineRecord } from './log-intake.js';
import { type StoredLogRecord, levelRank } from './log-record.js';
import { LogStore } from './log-store.js';
import { logTriggerConfigSchema } from './log-trigger-match.js';
import { LogTriggers } from './log-triggers.js';

const SWEEP_MS = 60_000;

/**
 * `flint-observability`: a bounded store of log records (the engine's own lines and workers'
 * `engine::log::*` calls) with `engine::logs::list|clear`, and the `log` trigger type.
 */
class ObservabilityModule implements EngineModule {
  readonly name = 'flint-observability';
  private sweep: NodeJS.Timeout | undefined;

  constructor(private readonly config: ObservabilityConfig) {}

  start(ctx: ModuleContext): void {
    const c = this.config;
    const resource = { 'service.name': c.service_name };
    const store = c.logs_enabled
      ? new LogStore({ max_count: c.logs_max_count, max_bytes: c.logs_max_bytes, retention_seconds: c.logs_retention_seconds || undefined })
      : undefined;
    const triggers = new LogTriggers(ctx);
    const keep = (record: StoredLogRecord) => {
      if (store?.add(record)) triggers.dispatch(record);
    };
    registerLogFunctions(ctx, store, resource, keep);
    ctx.registerTriggerType(
      {
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
      },
      triggers,
    );
    if (store) {
      const least = levelRank(c.level);
      // Workers' lines come through engine::log::* above (with their data and trace context), not the tap.
      ctx.tapLogs((record) => {
        if (record.source === 'engine' && levelRank(record.level) >= least) keep(engineRecord(record, c.service_name, resource));
      });
      if (store.retention_seconds !== undefined) {
        this.sweep = setInterval(() => store.sweep(Date.now()), SWEEP_MS);
        this.sweep.unref?.();
      }
    }
  }

  stop(): void {
    if (this.sweep) clearInterval(this.sweep);
  }
}

export const observabilityModule: ModuleDefinition<ObservabilityConfig> = {
  name: 'flint-observability',
  aliases: ['modules::observability::OtelModule', 'iii-observability'],
  configSchema: observabilityConfigSchema,
  create: (config) => new ObservabilityModule(config),
};
