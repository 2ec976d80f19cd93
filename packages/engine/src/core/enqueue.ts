import { FlintError } from '@flint/protocol';
import { errorMessage } from '../lib/errors.js';
import type { TraceContext } from './api/functions.js';
import type { EnqueueHandler } from './module-api.js';

/** The queue role: one module takes every enqueue (workers' `TriggerAction.Enqueue` and modules' `ctx.enqueue`). */
export class EnqueueRouter {
  private owner: { module: string; handler: EnqueueHandler } | undefined;

  claim(module: string, handler: EnqueueHandler): () => void {
    if (this.owner) throw new FlintError('internal_error', `module ${module} cannot take the queue role: module ${this.owner.module} already has it`);
    const owner = { module, handler };
    this.owner = owner;
    return () => {
      if (this.owner === owner) this.owner = undefined;
    };
  }

  /** Resolves with the receipt id; rejects with `enqueue_error` when no module has the role or the handler failed. */
  async enqueue(queue: string, functionId: string, data: unknown, trace: TraceContext = {}): Promise<string> {
    const owner = this.owner;
    if (!owner) throw FlintError.of('enqueue_error');
    try {
      return await owner.handler(queue, functionId, data, trace);
    } catch (err) {
      if (err instanceof FlintError && err.code === 'enqueue_error') throw err;
      throw new FlintError('enqueue_error', errorMessage(err));
    }
  }
}
