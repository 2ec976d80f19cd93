import { randomUUID } from 'node:crypto';
import { type InvocationResultMessage, type InvokeFunctionMessage, type InvokeParts, formatError, invokeFrame } from '@flint/protocol';
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
    const functionId = request.function_id;
    if (this.connection.state === 'shutdown') return Promise.reject(new FlintInvocationError('worker_shutting_down', 'the worker is shut down', functionId));
    if (this.connection.state === 'failed') return Promise.reject(this.notConnected(functionId, this.gaveUp()));
    const data = request.payload ?? null;
    const parts: InvokeParts = {};
    try {
      parts.dataJson = JSON.stringify(data) as string | undefined;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return Promise.reject(new FlintInvocationError('invalid_payload', `the payload of a call to ${functionId} has no JSON form: ${reason}`, functionId));
    }
    const scope = invocationScope.getStore();
    if (scope?.traceparent) parts.traceparent = scope.traceparent;
    if (scope?.baggage) parts.baggage = scope.baggage;
    if (request.action) parts.action = request.action;
    if (request.timeoutMs !== undefined) parts.timeoutMs = request.timeoutMs;
    // The frame as an object, for the connection's queue while it is not connected.
    let queued: InvokeFunctionMessage | undefined;
    const queue = (id: string | undefined) => () => {
      queued = { type: 'invokefunction', function_id: functionId, data };
      if (parts.traceparent) queued.traceparent = parts.traceparent;
      if (parts.baggage) queued.baggage = parts.baggage;
      if (parts.action) queued.action = parts.action;
      if (id !== undefined) queued.invocation_id = id;
      if (id !== undefined && parts.timeoutMs !== undefined) queued.timeout_ms = parts.timeoutMs;
      return queued as unknown as Record<string, unknown>;
    };
    if (request.action?.type === 'void') {
      parts.timeoutMs = undefined;
      const sent = this.connection.sendText(invokeFrame(undefined, functionId, parts), queue(undefined));
      return sent ? Promise.resolve(undefined as O) : Promise.reject(this.queueFull(functionId));
    }
    const id = randomUUID();
    const timeoutMs = request.timeoutMs ?? this.options.invocationTimeoutMs;
    return new Promise<O>((resolve, reject) => {
      const p: Pending = {
        resolve: resolve as (v: unknown) => void,
        reject,
        functionId,
        queued: undefined,
        connectTimer: undefined,
        startedAt: Date.now(),
        // A call that never left the queue did not time out: it never reached the engine.
        timer: setTimeout(() => (p.queued ? this.giveUp(id) : this.fail(id, this.timedOut(functionId, timeoutMs))), timeoutMs),
      };
      this.pending.set(id, p);
      const sent = this.connection.sendText(invokeFrame(id, functionId, parts), queue(id));
      if (!sent) return this.fail(id, this.queueFull(functionId));
      if (sent === 'queued') {
        p.queued = queued;
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
