import type {
  ErrorBody,
  RegisterTriggerMessage,
  RegisterTriggerTypeMessage,
  TriggerRegistrationResultMessage,
  UnregisterTriggerMessage,
} from '@flint/protocol';
import type { Connection } from './connection.js';
import { TriggerRegistrationError } from './errors.js';
import type { TriggerConfig, TriggerTypeHandler } from './types.js';

/** A trigger registered by this worker; `settle` decides its `ready` promise on the first result. */
export interface TriggerEntry {
  message: RegisterTriggerMessage;
  settle: ((error: TriggerRegistrationError | undefined, parked: boolean) => void) | undefined;
}

export interface TriggerTypeEntry {
  message: RegisterTriggerTypeMessage;
  handler: TriggerTypeHandler;
}

/**
 * Triggers: the registration results of this worker's triggers, and the triggers the engine forwards
 * to the trigger types this worker provides.
 */
export class Triggers {
  /** This worker's triggers, by id (replayed on each connect). */
  readonly registered = new Map<string, TriggerEntry>();
  /** The trigger types this worker provides, by id (replayed on each connect). */
  readonly types = new Map<string, TriggerTypeEntry>();

  constructor(
    private readonly connection: Connection,
    private readonly log: Pick<Console, 'warn'>,
    private readonly rejected: (error: TriggerRegistrationError) => void,
  ) {}

  onResult(msg: TriggerRegistrationResultMessage): void {
    const entry = this.registered.get(msg.id);
    if (!entry) return;
    // The decoder checked only that an error is an object: its fields may be missing.
    const e: Partial<ErrorBody> | undefined = msg.error;
    const error = e
      ? new TriggerRegistrationError(e.code ?? 'trigger_registration_failed', e.message ?? 'trigger rejected', entry.message.id, entry.message.trigger_type)
      : undefined;
    if (error) {
      // The engine does not keep a rejected trigger; neither does the replay.
      this.registered.delete(entry.message.id);
      this.log.warn(`[flint] trigger ${entry.message.trigger_type} → ${entry.message.function_id} rejected: ${error.message}`);
      this.rejected(error);
    }
    const settle = entry.settle;
    entry.settle = undefined;
    settle?.(error, msg.parked === true);
  }

  /** A trigger of a type this worker provides is applied or removed; registrations are answered. */
  onForwarded(msg: RegisterTriggerMessage | UnregisterTriggerMessage): void {
    const op = msg.type === 'registertrigger' ? 'register' : 'unregister';
    const typeId = msg.trigger_type;
    const type = typeId === undefined ? undefined : this.types.get(typeId);
    const trigger: TriggerConfig =
      msg.type === 'registertrigger'
        ? { id: msg.id, function_id: msg.function_id, config: msg.config }
        : // An unregister frame names only the trigger and its type: the handler gets the id (function_id and config are undefined).
          ({ id: msg.id, function_id: undefined, config: undefined } as unknown as TriggerConfig);
    if (msg.type === 'registertrigger' && msg.metadata) trigger.metadata = msg.metadata;
    const answer = (error?: { code: string; message: string }) => {
      if (op === 'register')
        this.connection.send({ type: 'triggerregistrationresult', id: trigger.id, trigger_type: typeId, function_id: trigger.function_id, error });
    };
    if (!type) return answer({ code: 'trigger_type_not_found', message: `Trigger type ${typeId} is not provided by this worker` });
    Promise.resolve()
      .then(() => (op === 'register' ? type.handler.registerTrigger(trigger) : type.handler.unregisterTrigger(trigger)))
      .then(
        () => answer(),
        (err: unknown) => answer({ code: 'trigger_registration_failed', message: err instanceof Error ? err.message : String(err) }),
      );
  }
}
