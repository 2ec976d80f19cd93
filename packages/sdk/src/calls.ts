import { randomUUID } from 'node:crypto';
import { type InvocationResultMessage, type InvokeFunctionMessage, formatError } from '@flint/protocol';
import type { Connection } from './connection.js';
import { FlintInvocationError } from './errors.js';
import { invocationScope } from './invocations.js';
import type { TriggerRequest } from './types.js';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  functionId: string;
  /** The frame, while it waits in the connection's queue (undefined once sent). */
  queued: InvokeFunctionMessage | undefined;
  /** Bounds the wait for a connection while queued. */
  connectTimer: NodeJS.Timeout | undefined;
  startedAt: number;
}

export interface CallsOptions {
  /** Default time-out of a call (ms). */
  invocationTimeoutMs: number;
  /** How long a call made while not connected waits for a connection before it fails with not_connected (ms). */
  connectTimeoutMs: number;
}

/** The calls this worker makes (`trigger()`): their frames, time-outs and results. */
export class Calls {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly connection: Connection,
    private readonly options: CallsOptions,
  ) {}

  /** A queued call is about to be sent: true while it still waits for its result (its connect wait ends). */
  sending(invocationId: string): boolean {
    const p = this.pending.get(invocationId);
    if (!p) return false;
    clearTimeout(p.connectTimer);
    p.queued = undefined;
    return true;
  }

  trigger<I, O>(request: TriggerRequest<I>): Promise<O> {
    const scope = invocationScope.getStore();
    const frame: InvokeFunctionMessage = { type: 'invokefunction', function_id: request.function_id, data: request.payload ?? null };
    if (scope?.traceparent) frame.traceparent = scope.traceparent;
    if (scope?.baggage) frame.baggage = scope.baggage;
    if (request.action) frame.action = request.action;
    if (this.connection.state === 'shutdown')
      return Promise.reject(new FlintInvocationError('worker_shutting_down', 'the worker is shut down', request.function_id));
    if (this.connection.state === 'failed') return Promise.reject(this.notConnected(request.function_id, this.gaveUp()));
    if (request.action?.type === 'void') {
      return this.connection.send(frame) ? Promise.resolve(undefined as O) : Promise.reject(this.queueFull(request.function_id));
    }
    const id = randomUUID();
    frame.invocation_id = id;
    if (request.timeoutMs !== undefined) frame.timeout_ms = request.timeoutMs;
    const timeoutMs = request.timeoutMs ?? this.options.invocationTimeoutMs;
    return new Promise<O>((resolve, reject) => {
      const p: Pending = {
        resolve: resolve as (v: unknown) => void,
        reject,
        functionId: request.function_id,
        queued: undefined,
        connectTimer: undefined,
        startedAt: Date.now(),
        // A call that never left the queue did not time out: it never reached the engine.
        timer: setTimeout(() => (p.queued ? this.giveUp(id) : this.fail(id, this.timedOut(request.function_id, timeoutMs))), timeoutMs),
      };
      this.pending.set(id, p);
      const sent = this.connection.send(frame);
      if (!sent) return this.fail(id, this.queueFull(request.function_id));
      if (sent === 'queued') {
        p.queued = frame;
        p.connectTimer = setTimeout(() => this.giveUp(id), this.options.connectTimeoutMs);
      }
    });
  }

  onResult(msg: InvocationResultMessage): void {
    const id = msg.invocation_id;
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    clearTimeout(p.connectTimer);
    if (msg.error) p.reject(FlintInvocationError.from(msg.error, p.functionId));
    else p.resolve(msg.result === undefined ? null : msg.result);
  }

  /**
   * Reconnecting stopped: the calls still queued can never be sent, and the calls already sent can never
   * be answered (an answer only comes back on a reattached connection), so both fail now rather than at
   * their time-out.
   */
  connectionFailed(): void {
    for (const [id, p] of this.pending) {
      const reason = p.queued ? this.gaveUp() : `the call was sent but the connection was lost before its answer came; ${this.gaveUp()}`;
      this.fail(id, this.notConnected(p.functionId, reason));
    }
  }

  /** Rejects every pending call with worker_shutting_down. */
  rejectAll(): void {
    for (const [id, p] of this.pending) this.fail(id, new FlintInvocationError('worker_shutting_down', 'the worker is shutting down', p.functionId));
  }

  private fail(id: string, err: FlintInvocationError): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    clearTimeout(p.connectTimer);
    if (p.queued) this.connection.unqueue(p.queued);
    p.reject(err);
  }

  /** A queued call waited for a connection long enough. */
  private giveUp(id: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    const problem = this.connection.problem;
    const reason = `no connection within ${Date.now() - p.startedAt} ms${problem ? ` (${problem.detail})` : ''}`;
    this.fail(id, this.notConnected(p.functionId, reason));
  }

  private gaveUp(): string {
    const problem = this.connection.problem;
    const cause = problem ? ` (${problem.detail})` : '';
    const attempts = this.connection.attempts;
    return attempts === 0
      ? `the connection failed${cause} and reconnecting is off (reconnect.maxRetries: 0)`
      : `gave up after ${attempts} reconnect attempts${cause}`;
  }

  private timedOut(functionId: string, timeoutMs: number): FlintInvocationError {
    return new FlintInvocationError('invocation_timeout', `invocation of ${functionId} timed out after ${timeoutMs} ms`, functionId);
  }

  private notConnected(functionId: string, reason: string): FlintInvocationError {
    return new FlintInvocationError('not_connected', formatError('not_connected', { url: this.connection.shownUrl, reason }), functionId);
  }

  private queueFull(functionId: string): FlintInvocationError {
    return this.notConnected(functionId, `the connection is down and ${this.connection.queued} frames are already queued (maxQueuedFrames)`);
  }
}
