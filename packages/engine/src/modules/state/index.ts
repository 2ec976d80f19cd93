import type { KvStore } from '../../adapters/kv/types.js';
import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { type StateConfig, stateConfigSchema } from './config.js';
import { registerStateFunctions } from './functions.js';
import { StateTriggers } from './triggers.js';

/** `flint-state`: scope → key → JSON value, with change triggers, on the memory, file or Redis adapter. */
class StateModule implements EngineModule {
  readonly name = 'flint-state';
  private store: KvStore | undefined;

  constructor(private readonly config: StateConfig) {}

  async start(ctx: ModuleContext): Promise<void> {
    // A store that cannot be opened stops start-up (never a silent fall-back to memory).
    const store = await ctx.openKvStore(this.config.adapter);
    this.store = store;
    const triggers = new StateTriggers(ctx, ctx.logger);
    ctx.registerTriggerType(
      {
        id: 'state',
        description: 'Fires after a state change: config scope?, key?, condition_function_id?',
        trigger_request_format: {
          type: 'object',
          properties: { scope: { type: 'string' }, key: { type: 'string' }, condition_function_id: { type: 'string' } },
        },
        call_request_format: {
          type: 'object',
          properties: {
            type: { const: 'state' },
            event_type: { enum: ['state:created', 'state:updated', 'state:deleted'] },
            scope: { type: 'string' },
            key: { type: 'string' },
            old_value: {},
            new_value: {},
          },
        },
      },
      triggers,
    );
    registerStateFunctions(ctx, store, triggers, this.config.max_value_bytes);
    const where = this.config.adapter.name === 'redis' ? 'redis' : this.config.adapter.config.store_method;
    ctx.logger.info(`state store: ${where}${store.kind === 'in_memory' ? ' (lost on restart)' : ''}`);
  }

  async stop(): Promise<void> {
    await this.store?.close();
  }
}

export const stateModule: ModuleDefinition<StateConfig> = {
  name: 'flint-state',
  aliases: ['modules::state::StateModule'],
  configSchema: stateConfigSchema,
  create: (config) => new StateModule(config),
};
