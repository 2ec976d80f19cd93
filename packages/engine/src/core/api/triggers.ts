/** A registered trigger as modules and trigger-type providers see it. */
export interface TriggerRecord {
  id: string;
  type: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
  /** Worker id of the registering connection, or the name of the module that registered it. */
  owner: string;
}

/**
 * The owner of a trigger type. `registerTrigger` validates and applies a trigger; throwing (a
 * FlintError with a message naming the problem) rejects the registration.
 */
export interface TriggerTypeProvider {
  registerTrigger(trigger: TriggerRecord): void | Promise<void>;
  unregisterTrigger(trigger: TriggerRecord): void | Promise<void>;
}

export interface TriggerTypeDefinition {
  id: string;
  description: string;
  trigger_request_format?: unknown;
  call_request_format?: unknown;
}

/** A trigger a module registers for one of its own functions (e.g. an `http` route for a console page). */
export interface ModuleTriggerInput {
  /** Default: a generated id. */
  id?: string;
  type: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
}

export interface ModuleTrigger {
  readonly id: string;
  /**
   * Resolves once the trigger is applied, or parked until a provider of its type appears (the
   * module providing `http` may start after the module registering a route); rejects with the
   * provider's FlintError when the trigger is refused.
   */
  readonly ready: Promise<{ parked: boolean }>;
  /** Removes the trigger (also done at the module's stop). */
  unregister(): Promise<void>;
}
