import { FlintError } from '@flint/protocol';
import type { Logger } from '../../core/logger.js';
import type { ModuleContext, TriggerRecord, TriggerTypeProvider } from '../../core/module-api.js';

export type StateEventType = 'state:created' | 'state:updated' | 'state:deleted';

export interface StateEvent {
  type: 'state';
  event_type: StateEventType;
  scope: string;
  key: string;
  old_value: unknown;
  new_value: unknown;
}

interface StateTrigger {
  functionId: string;
  scope: string | undefined;
  key: string | undefined;
  conditionFunctionId: string | undefined;
}

/** `state` triggers: run after a change is stored; failures are logged, never fail the write. */
export class StateTriggers implements TriggerTypeProvider {
  private readonly triggers = new Map<string, StateTrigger>();

  constructor(
    private readonly ctx: ModuleContext,
    private readonly logger: Logger,
  ) {}

  registerTrigger(t: TriggerRecord): void {
    const config = (t.config ?? {}) as Record<string, unknown>;
    if (typeof config !== 'object' || Array.isArray(config)) throw new FlintError('trigger_registration_failed', 'state trigger config must be an object');
    for (const field of ['scope', 'key', 'condition_function_id'] as const) {
      if (config[field] !== undefined && typeof config[field] !== 'string') throw new FlintError('trigger_registration_failed', `${field} must be a string`);
    }
    this.triggers.set(t.id, {
      functionId: t.function_id,
      scope: config.scope as string | undefined,
      key: config.key as string | undefined,
      conditionFunctionId: config.condition_function_id as string | undefined,
    });
  }

  unregisterTrigger(t: TriggerRecord): void {
    this.triggers.delete(t.id);
  }

  /** Runs every matching trigger once with the event (in the background). */
  fire(event: StateEvent): void {
    for (const trigger of this.triggers.values()) {
      if (trigger.scope !== undefined && trigger.scope !== event.scope) continue;
      if (trigger.key !== undefined && trigger.key !== event.key) continue;
      void this.run(trigger, event);
    }
  }

  private async run(trigger: StateTrigger, event: StateEvent): Promise<void> {
    try {
      if (trigger.conditionFunctionId && (await this.ctx.invoke(trigger.conditionFunctionId, event)) === false) return;
      await this.ctx.invoke(trigger.functionId, event);
    } catch (err) {
      this.logger.warn(
        { function_id: trigger.functionId, scope: event.scope, key: event.key, event_type: event.event_type },
        `state trigger failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}
