/**
 * What the module clients (`worker.state`, `worker.queue`, `worker.stream`) use of a Worker, kept structural to avoid an
 * import cycle, and the one thing they both build: a function of this worker with a trigger for it.
 */
export interface ClientHost {
  trigger<I, O>(request: { function_id: string; payload?: I }): Promise<O>;
  registerFunction(id: string, handler: (input: never) => unknown, options?: { description?: string }): { id: string; unregister(): void };
  registerTrigger(input: { type: string; function_id: string; config: unknown }): { id: string; ready: Promise<{ parked: boolean }>; unregister(): void };
}

export interface HandlerWithTrigger {
  fn: { id: string; unregister(): void };
  trigger: { id: string; ready: Promise<{ parked: boolean }>; unregister(): void };
  /** Removes the trigger, then the function. */
  unregister(): void;
}

/** Registers `handler` as function `functionId` and a trigger of `type` with `config` for it. */
export function handlerWithTrigger(
  host: ClientHost,
  functionId: string,
  handler: (input: never) => unknown,
  description: string,
  type: string,
  config: unknown,
): HandlerWithTrigger {
  const fn = host.registerFunction(functionId, handler, { description });
  const trigger = host.registerTrigger({ type, function_id: fn.id, config });
  return {
    fn,
    trigger,
    unregister: () => {
      trigger.unregister();
      fn.unregister();
    },
  };
}
