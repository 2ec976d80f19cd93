import { FlintError } from '@flint/protocol';
import type { ModuleContext, TriggerRecord, TriggerTypeProvider } from '../../core/module-api.js';
import { type FiringTrigger, fireTrigger } from '../../lib/triggers.js';

export type StateEventType = 'state:created' | 'state:updated' | 'state:deleted';

export interface StateEvent {
  type: 'state';
  event_type: StateEventType;
  scope: string;
  key: string;
  old_value: unknown;
  new_value: unknown;
}

interface StateTrigger extends FiringTrigger {
  scope: string | undefined;
  key: string | undefined;
}

/** `state` triggers: run after a change is stored; failures are logged, never fail the write. */
export class StateTriggers implements TriggerTypeProvider {
  private readonly triggers = new Map<string, StateTrigger>();

  constructor(private readonly ctx: ModuleContext) {}

  registerTrigger(t: TriggerRecord): void {
    const config = (t.config ?? {}) as Record<string, unknown>;
    if (typeof config !== 'object' || Array.isArray(config)) throw new FlintError('trigger_registration_failed', 'state trigger config must be an object');
    for (const field of ['scope', 'key', 'condition_function_id'] as const) {
      if (config[field] !== undefined && typeof config[field] !== 'string') throw new FlintError('trigger_registration_failed', `${field} must be a string`);
    }
    this.triggers.set(t.id, {
      id: t.id,
      type: 'state',
      function_id: t.function_id,
      condition_function_id: config.condition_function_id as string | undefined,
      scope: config.scope as string | undefined,
      key: config.key as string | undefined,
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
      void fireTrigger(this.ctx, trigger, event, { logger: this.ctx.logger, logFields: { scope: event.scope, key: event.key, event_type: event.event_type } });
    }
  }
}
