import type { ZodType } from 'zod';

/** A registered trigger as modules and trigger-type providers see it. */
export interface TriggerRecord<C = unknown> {
  id: string;
  type: string;
  function_id: string;
  /** For a type with a config schema: the config as that schema parsed it. */
  config: C;
  metadata?: Record<string, unknown>;
  /** Worker id of the registering connection, or the name of the module that registered it. */
  owner: string;
}

/**
 * The owner of a trigger type. `registerTrigger` applies a trigger whose config already passed the
 * type's schema; throwing (a FlintError with a message naming the problem) rejects the registration.
 */
export interface TriggerTypeProvider<C = unknown> {
  registerTrigger(trigger: TriggerRecord<C>): void | Promise<void>;
  unregisterTrigger(trigger: TriggerRecord<C>): void | Promise<void>;
}

/** What `engine::trigger-types::list` shows of a trigger type. */
export interface TriggerTypeDescription {
  id: string;
  description: string;
  trigger_request_format?: unknown;
  call_request_format?: unknown;
}

/** A trigger type a module provides. */
export interface TriggerTypeDefinition<C = unknown> extends TriggerTypeDescription {
  /**
   * The schema of a trigger's config, strict about keys (`z.strictObject`). The engine checks every
   * trigger against it before the provider sees it and refuses one that does not pass with
   * `trigger_registration_failed`, naming the key (`unknown key "scop" in state trigger config …`).
   */
  configSchema: ZodType<C>;
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
