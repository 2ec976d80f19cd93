import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { type StateConfig, stateConfigSchema } from './config.js';
import { registerStateFunctions } from './functions.js';
import { StateTriggers, stateTriggerConfigSchema } from './triggers.js';

/** `flint-state`: scope → key → JSON value, with change triggers, on the memory, file or Redis adapter. */
class StateModule implements EngineModule {
  readonly name = 'flint-state';

  constructor(private readonly config: StateConfig) {}

  async start(ctx: ModuleContext): Promise<void> {
    // A store that cannot be opened stops start-up (never a silent fall-back to memory). The engine
    // closes it (flushing a file store) after the module has stopped.
    const store = await ctx.adapter('kv', this.config.adapter);
    const triggers = new StateTriggers(ctx);
    ctx.registerTriggerType(
      {
        id: 'state',
        description: 'Fires after a state change: config scope?, key?, condition_function_id?',
        trigger_request_format: {
          type: 'object',
          additionalProperties: false,
          properties: { scope: { type: 'string' }, key: { type: 'string' }, condition_function_id: { type: 'string' } },
        },
        configSchema: stateTriggerConfigSchema,
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
    ctx.logger.info(`state store: ${store.kind}${store.kind === 'in_memory' ? ' (lost on restart)' : ''}`);
  }
}

export const stateModule: ModuleDefinition<StateConfig> = {
  name: 'flint-state',
  aliases: ['modules::state::StateModule'],
  configSchema: stateConfigSchema,
  adapters: { adapter: 'kv' },
  create: (config) => new StateModule(config),
};
