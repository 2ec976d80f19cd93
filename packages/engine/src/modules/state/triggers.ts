import { z } from 'zod';
import type { ModuleContext, TraceContext, TriggerRecord, TriggerTypeProvider } from '../../core/module-api.js';
import { type FiringTrigger, fireTrigger } from '../../lib/triggers.js';

/** The config of a `state` trigger: every key optional, unknown keys refused (a misspelt `scope` would match every scope). */
export const stateTriggerConfigSchema = z.strictObject({
  scope: z.string().optional(),
  key: z.string().optional(),
  condition_function_id: z.string().min(1).optional(),
});

export type StateTriggerConfig = z.output<typeof stateTriggerConfigSchema>;

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
export class StateTriggers implements TriggerTypeProvider<StateTriggerConfig> {
  private readonly triggers = new Map<string, StateTrigger>();

  constructor(private readonly ctx: ModuleContext) {}

  registerTrigger(t: TriggerRecord<StateTriggerConfig>): void {
    this.triggers.set(t.id, {
      id: t.id,
      type: 'state',
      function_id: t.function_id,
      condition_function_id: t.config.condition_function_id,
      scope: t.config.scope,
      key: t.config.key,
    });
  }

  unregisterTrigger(t: TriggerRecord<StateTriggerConfig>): void {
    this.triggers.delete(t.id);
  }

  /** Runs every matching trigger once with the event (in the background), in the trace of the write. */
  fire(event: StateEvent, trace: TraceContext): void {
    for (const trigger of this.triggers.values()) {
      if (trigger.scope !== undefined && trigger.scope !== event.scope) continue;
      if (trigger.key !== undefined && trigger.key !== event.key) continue;
      void fireTrigger(this.ctx, trigger, event, {
        logger: this.ctx.logger,
        logFields: { scope: event.scope, key: event.key, event_type: event.event_type },
        traceparent: trace.traceparent,
        baggage: trace.baggage,
        spanName: `${event.event_type} ${event.scope}`,
        attributes: { 'flint.state.scope': event.scope, 'flint.state.key': event.key, 'flint.state.event': event.event_type },
      });
    }
  }
}
