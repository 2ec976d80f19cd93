import { randomUUID } from 'node:crypto';
import { type ClientHost, type HandlerWithTrigger, handlerWithTrigger } from './module-client.js';

export type StateEventType = 'state:created' | 'state:updated' | 'state:deleted';

/** What a `state` trigger delivers. */
export interface StateEvent<T = unknown> {
  type: 'state';
  event_type: StateEventType;
  scope: string;
  key: string;
  old_value: T | null;
  new_value: T | null;
}

export type StateUpdateOp =
  | { type: 'set'; path?: string; value: unknown }
  | { type: 'merge'; path?: string | string[]; value: Record<string, unknown> }
  | { type: 'increment' | 'decrement'; path?: string; by: number }
  | { type: 'append'; path?: string; value: unknown }
  | { type: 'remove'; path?: string };

export interface StateChange<T = unknown> {
  old_value: T | null;
  new_value: T | null;
}

export interface StateUpdateResult<T = unknown> extends StateChange<T> {
  errors?: { op_index: number; code: string; message: string }[];
}

export interface OnChangeOptions {
  /** Only this key of the scope. */
  key?: string;
  condition_function_id?: string;
  /** Id of the function that receives the events (default: a generated `on-state-change::<uuid>`; `state::` ids belong to the engine). */
  function_id?: string;
}

/** A typed client for the state module's functions (`state::*`) and `state` triggers. */
export class StateClient {
  constructor(private readonly worker: ClientHost) {}

  /** The value, or null when the key does not exist. */
  get<T = unknown>(scope: string, key: string): Promise<T | null> {
    return this.call('state::get', { scope, key });
  }

  set<T = unknown>(scope: string, key: string, value: T): Promise<StateChange<T>> {
    return this.call('state::set', { scope, key, value });
  }

  delete<T = unknown>(scope: string, key: string): Promise<{ old_value: T | null }> {
    return this.call('state::delete', { scope, key });
  }

  update<T = unknown>(scope: string, key: string, ops: StateUpdateOp[]): Promise<StateUpdateResult<T>> {
    return this.call('state::update', { scope, key, ops });
  }

  list<T = unknown>(scope: string): Promise<T[]> {
    return this.call('state::list', { scope });
  }

  async listGroups(): Promise<string[]> {
    return (await this.call<{ groups: string[] }>('state::list_groups', {})).groups;
  }

  /** Runs `handler` after every change in `scope` (registers a function and a `state` trigger). */
  onChange<T = unknown>(scope: string, handler: (event: StateEvent<T>) => unknown, options: OnChangeOptions = {}): HandlerWithTrigger {
    const config: Record<string, string> = { scope };
    if (options.key !== undefined) config.key = options.key;
    if (options.condition_function_id !== undefined) config.condition_function_id = options.condition_function_id;
    const functionId = options.function_id ?? `on-state-change::${randomUUID()}`;
    return handlerWithTrigger(this.worker, functionId, handler as (input: never) => unknown, `Handles changes of state scope ${scope}`, 'state', config);
  }

  private call<T>(functionId: string, payload: unknown): Promise<T> {
    return this.worker.trigger<unknown, T>({ function_id: functionId, payload });
  }
}
