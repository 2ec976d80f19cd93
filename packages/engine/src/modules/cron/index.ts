import { FlintError } from '@flint/protocol';
import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { type CronConfig, cronConfigSchema } from './config.js';
import { registerCronFunctions } from './functions.js';
import { CronJobs } from './jobs.js';
import { EnginePresence } from './presence.js';
import { cronTriggerConfigSchema } from './trigger-config.js';

/** `flint-cron`: `cron` triggers, fired once per slot across the engines that share a lock and a store. */
class CronModule implements EngineModule {
  readonly name = 'flint-cron';
  private jobs: CronJobs | undefined;
  private presence: EnginePresence | undefined;

  constructor(private readonly config: CronConfig) {}

  async start(ctx: ModuleContext): Promise<void> {
    // A lock or store that cannot be opened stops start-up; the engine closes both after the module's stop.
    const locks = await ctx.adapter('lock', this.config.adapter);
    const store = await ctx.adapter('kv', this.config.store);
    if (store.forwardUpdate) {
      throw new FlintError(
        'store_unavailable',
        "flint-cron's store cannot be a bridge: claiming a slot needs an atomic update of this engine's own (use kv or redis)",
      );
    }
    const jobs = new CronJobs(ctx, locks, store, this.config);
    this.jobs = jobs;
    ctx.registerTriggerType(
      {
        id: 'cron',
        description: 'Fires on a schedule: config expression, timezone?, condition_function_id?, overlap?, catch_up?, catch_up_max?, jitter_ms?',
        trigger_request_format: {
          type: 'object',
          additionalProperties: false,
          required: ['expression'],
          properties: {
            expression: { type: 'string', minLength: 1 },
            timezone: { type: 'string' },
            condition_function_id: { type: 'string' },
            overlap: { enum: ['skip', 'allow'] },
            catch_up: { enum: ['none', 'latest', 'all'] },
            catch_up_max: { type: 'integer', minimum: 1 },
            jitter_ms: { type: 'integer', minimum: 0 },
          },
        },
        configSchema: cronTriggerConfigSchema,
        call_request_format: {
          type: 'object',
          properties: {
            trigger: {
              type: 'object',
              properties: { id: { type: 'string' }, type: { const: 'cron' }, expression: { type: 'string' }, timezone: { type: 'string' } },
            },
            job_id: { type: 'string' },
            scheduled_time: { type: 'string', format: 'date-time' },
            actual_time: { type: 'string', format: 'date-time' },
            manual: { type: 'boolean' },
          },
        },
      },
      jobs,
    );
    registerCronFunctions(ctx, jobs);
    this.presence = await EnginePresence.start(ctx, store, jobs.engineId, locks);
    const notes = [];
    if (store.kind === 'in_memory') notes.push('catch-up does not survive a restart');
    if (!locks.shared && store.kind !== 'redis') notes.push('this engine only: engines that share neither lock nor store each fire every slot');
    ctx.logger.info(`cron: ${locks.kind} lock, ${store.kind} store${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`);
  }

  async drain(): Promise<void> {
    await this.jobs?.drain();
  }

  async stop(): Promise<void> {
    await this.presence?.stop();
  }
}

export const cronModule: ModuleDefinition<CronConfig> = {
  name: 'flint-cron',
  aliases: ['modules::cron::CronModule', 'iii-cron'],
  configSchema: cronConfigSchema,
  adapters: { adapter: 'lock', store: 'kv' },
  create: (config) => new CronModule(config),
};
