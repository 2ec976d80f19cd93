import { randomUUID } from 'node:crypto';
import type { InvocationResultMessage, InvokeFunctionMessage } from '@flint/protocol';
import type { Connection } from './connection.js';
import { FlintInvocationError } from './errors.js';
import { invocationScope } from './invocations.js';
import type { TriggerRequest } from './types.js';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  functionId: string;
}

/** The calls this worker makes (`trigger()`): their frames, time-outs and results. */
export class Calls {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly connection: Connection,
    private readonly defaultTimeoutMs: number,
  ) {}

  /** True while the call `invocationId` waits for its result. */
  awaits(invocationId: string): boolean {
    return this.pending.has(invocationId);
  }

  trigger<I, O>(request: TriggerRequest<I>): Promise<O> {
    const scope = invocationScope.getStore();
    const frame: InvokeFunctionMessage = { type: 'invokefunction', function_id: request.function_id, data: request.payload ?? null };
    if (scope?.traceparent) frame.traceparent = scope.traceparent;
    if (scope?.baggage) frame.baggage = scope.baggage;
    if (request.action) frame.action = request.action;
    if (this.connection.state === 'shutdown')
      return Promise.reject(new FlintInvocationError('worker_shutting_down', 'the worker is shut down', request.function_id));
    if (request.action?.type === 'void') {
      return this.connection.send(frame) ? Promise.resolve(undefined as O) : Promise.reject(this.queueFull(request.function_id));
    }
    const id = randomUUID();
    frame.invocation_id = id;
    if (request.timeoutMs !== undefined) frame.timeout_ms = request.timeoutMs;
    const timeoutMs = request.timeoutMs ?? this.defaultTimeoutMs;
    return new Promise<O>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new FlintInvocationError('invocation_timeout', `invocation of ${request.function_id} timed out after ${timeoutMs} ms`, request.function_id));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer, functionId: request.function_id });
      if (!this.connection.send(frame)) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(this.queueFull(request.function_id));
      }
    });
  }

  onResult(msg: InvocationResultMessage): void {
    const id = msg.invocation_id;
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (msg.error) p.reject(FlintInvocationError.from(msg.error, p.functionId));
    else p.resolve(msg.result === undefined ? null : msg.result);
  }

  /** Rejects every pending call with worker_shutting_down. */
  rejectAll(): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new FlintInvocationError('worker_shutting_down', 'the worker is shutting down', p.functionId));
      this.pending.delete(id);
    }
  }

  private queueFull(functionId: string): FlintInvocationError {
    return new FlintInvocationError(
      'not_connected',
      `disconnected from ${this.connection.url} and ${this.connection.queued} frames are already queued`,
      functionId,
    );
  }
}
