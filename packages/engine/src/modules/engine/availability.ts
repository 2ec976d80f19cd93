import { EngineTriggers } from '@flint/protocol';
import { z } from 'zod';
import type { ModuleContext, TriggerRecord } from '../../core/module-api.js';
import { fireTrigger } from '../../lib/triggers.js';

/**
 * The trigger types `engine::functions-available` (the set of function ids changed; bursts of
 * registrations are coalesced into one firing after `debounceMs`) and `engine::workers-available`
 * (a worker connected, disconnected or updated its metadata) and `engine::triggers-available` (triggers
 * were registered, registered again, applied, parked or removed; bursts coalesced like functions).
 */
export function registerAvailabilityTriggers(ctx: ModuleContext, debounceMs: number): { stop(): void } {
  const functionSubscribers = new Map<string, TriggerRecord>();
  const workerSubscribers = new Map<string, TriggerRecord>();
  const triggerSubscribers = new Map<string, TriggerRecord>();
  const subscribe = (map: Map<string, TriggerRecord>) => ({
    registerTrigger: (t: TriggerRecord) => void map.set(t.id, t),
    unregisterTrigger: (t: TriggerRecord) => void map.delete(t.id),
  });
  const fire = (subscribers: Map<string, TriggerRecord>, data: unknown) => {
    for (const t of subscribers.values()) void fireTrigger(ctx, t, data, { logger: ctx.logger });
  };

  // Neither type takes any config key.
  const configSchema = z.strictObject({});
  ctx.registerTriggerType(
    { id: EngineTriggers.FUNCTIONS_AVAILABLE, description: 'Fires when the set of available functions changes', configSchema },
    subscribe(functionSubscribers),
  );
  ctx.registerTriggerType(
    { id: EngineTriggers.WORKERS_AVAILABLE, description: 'Fires when a worker connects, disconnects or updates its metadata', configSchema },
    subscribe(workerSubscribers),
  );
  ctx.registerTriggerType(
    { id: EngineTriggers.TRIGGERS_AVAILABLE, description: 'Fires when triggers are registered or removed (bursts coalesced)', configSchema },
    subscribe(triggerSubscribers),
  );

  let lastIds = '';
  let timer: NodeJS.Timeout | undefined;
  let triggerTimer: NodeJS.Timeout | undefined;
  const fireTriggers = () => {
    triggerTimer = undefined;
    fire(triggerSubscribers, { event: 'triggers_changed' });
  };
  const fireFunctions = () => {
    timer = undefined;
    const functions = ctx.registry.functions();
    const ids = functions
      .map((f) => f.function_id)
      .sort()
      .join('\n');
    if (ids === lastIds) return;
    lastIds = ids;
    fire(functionSubscribers, { event: 'functions_changed', functions });
  };
  ctx.registry.subscribe((event) => {
    if (event.type === 'function_added' || event.type === 'function_removed') {
      timer ??= setTimeout(fireFunctions, debounceMs).unref();
    } else if (event.type === 'trigger_added' || event.type === 'trigger_updated' || event.type === 'trigger_removed') {
      // Subscriptions to this type are not trigger changes for it: a subscriber's own registration does not
      // wake it (nor the others). Its trigger_added comes before the subscriber is in the map, so the type decides.
      if (triggerSubscribers.size > 0 && event.trigger_type !== EngineTriggers.TRIGGERS_AVAILABLE)
        triggerTimer ??= setTimeout(fireTriggers, debounceMs).unref();
    } else if (event.type === 'worker_connected' || event.type === 'worker_disconnected' || event.type === 'worker_metadata_updated') {
      fire(workerSubscribers, { event: event.type, worker_id: event.worker_id });
    }
  });
  // The subscription is released with the module; a firing still waiting is dropped.
  return {
    stop: () => {
      clearTimeout(timer);
      clearTimeout(triggerTimer);
    },
  };
}
