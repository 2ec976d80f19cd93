import type { ErrorBody, RegisterFunctionMessage, RegisterTriggerMessage, RegisterTriggerTypeMessage, WorkerToEngine } from '@flint/protocol';

/** A registration frame an access policy looks at. */
export type Registration = RegisterFunctionMessage | RegisterTriggerMessage | RegisterTriggerTypeMessage;

/**
 * The access checks of one worker connection (a listener with an `access` policy), as the connection, the
 * session and the invoker see them; session-access.ts implements it. (An interface of its own so that the
 * connection does not depend on what the checks depend on.)
 */
export interface ConnectionAccess {
  /** What the auth function gave this worker as its identity (`context`), or null. */
  readonly context: unknown;
  /** The id a function of this worker has in the engine → the id the worker knows it by (the registration prefix). */
  unprefixed(id: string): string;
  /** The id this worker's function `id` has in the engine. */
  functionId(id: string): string;
  call(
    functionId: string,
    payload: unknown,
    action: 'sync' | 'void' | 'enqueue',
    proceed: (payload: unknown) => void,
    answer: (result: unknown, error?: ErrorBody) => void,
  ): void;
  register(msg: Registration, apply: (msg: WorkerToEngine) => void, refuse: (msg: Registration, error: ErrorBody) => void): void;
  filterListing(functionId: string, result: unknown): unknown;
  /** Runs `apply` (an unregister frame) after this worker's registrations still being checked. */
  inOrder(apply: () => void): void;
  /** Drops from what a trigger of `triggerType` delivers to this worker what it may not see (`engine::functions-available`). */
  filterDelivery(triggerType: string, data: unknown): unknown;
}
