import { randomUUID } from 'node:crypto';
import { type InvocationResultMessage, type InvokeFunctionMessage, type InvokeParts, SequenceTable, formatError, invokeFrame } from '@flint/protocol';
import type { Connection } from './connection.js';
import { FlintInvocationError } from './errors.js';
import { invocationScope } from './invocations.js';
import type { TriggerRequest } from './types.js';

interface Pending {
  id: string;
  /** The counter in the id: the call's key in the table. */
  seq: number;
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

/** Calls still waiting 1,024 calls later move to the table's overflow map. */
const CALL_SLOTS = 1024;
/** The counter in an id's last group: 12 hex digits. */
const COUNTER_LIMIT = 2 ** 48;

/**
 * The calls this worker makes (`trigger()`): their frames, time-outs and results.
 *
 * Invocation ids are UUIDs whose first four groups are random per worker and whose last group counts
 * the calls, so the calls waiting live in a SequenceTable keyed by that count rather than in a `Map`
 * keyed by the id: a map with an insert and a delete per call keeps replacing its table and drags
 * every call into the old generation (see SequenceTable).
 */
export class Calls {
  private readonly pending = new SequenceTable<Pending>(CALL_SLOTS);
  /** `xxxxxxxx-xxxx-4xxx-yxxx-`: the start of every id this worker issues. */
  private readonly idPrefix = randomUUID().slice(0, 24);
  private nextCall = 0;

  constructor(
    private readonly connection: Connection,
    private readonly options: CallsOptions,
  ) {}

  /** A queued call is about to be sent: true while it still waits for its result (its connect wait ends). */
  sending(invocationId: string): boolean {
    const p = this.find(invocationId);
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
    const seq = this.nextCall;
    this.nextCall = (this.nextCall + 1) % COUNTER_LIMIT;
    const id = this.idPrefix + seq.toString(16).padStart(12, '0');
    const timeoutMs = request.timeoutMs ?? this.options.invocationTimeoutMs;
    return new Promise<O>((resolve, reject) => {
      const p: Pending = {
        id,
        seq,
        resolve: resolve as (v: unknown) => void,
        reject,
        functionId,
        queued: undefined,
        connectTimer: undefined,
        startedAt: Date.now(),
        // A call that never left the queue did not time out: it never reached the engine.
        timer: setTimeout(() => (p.queued ? this.giveUp(p) : this.fail(p, this.timedOut(functionId, timeoutMs))), timeoutMs),
      };
      this.pending.set(seq, p);
      const sent = this.connection.sendText(invokeFrame(id, functionId, parts), queue(id));
      if (!sent) return this.fail(p, this.queueFull(functionId));
      if (sent === 'queued') {
        p.queued = queued;
        p.connectTimer = setTimeout(() => this.giveUp(p), this.options.connectTimeoutMs);
      }
    });
  }

  onResult(msg: InvocationResultMessage): void {
    const p = this.find(msg.invocation_id);
    if (!p || !this.take(p)) return;
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
    for (const p of this.pending.snapshot()) {
      const reason = p.queued ? this.gaveUp() : `the call was sent but the connection was lost before its answer came; ${this.gaveUp()}`;
      this.fail(p, this.notConnected(p.functionId, reason));
    }
  }

  /** Rejects every pending call with worker_shutting_down. */
  rejectAll(): void {
    for (const p of this.pending.snapshot()) this.fail(p, new FlintInvocationError('worker_shutting_down', 'the worker is shutting down', p.functionId));
  }

  /** The call waiting with this id: its counter is the table's key, and the whole id must match. */
  private find(id: string): Pending | undefined {
    if (id.length !== 36 || !id.startsWith(this.idPrefix)) return undefined;
    const p = this.pending.get(Number.parseInt(id.slice(24), 16));
    return p?.id === id ? p : undefined;
  }

  /** Removes a call from the table: false when it was no longer there (settled already). */
  private take(p: Pending): boolean {
    return this.pending.delete(p.seq);
  }

  private fail(p: Pending, err: FlintInvocationError): void {
    if (!this.take(p)) return;
    clearTimeout(p.timer);
    clearTimeout(p.connectTimer);
    if (p.queued) this.connection.unqueue(p.queued);
    p.reject(err);
  }

  /** A queued call waited for a connection long enough. */
  private giveUp(p: Pending): void {
    const problem = this.connection.problem;
    const reason = `no connection within ${Date.now() - p.startedAt} ms${problem ? ` (${problem.detail})` : ''}`;
    this.fail(p, this.notConnected(p.functionId, reason));
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
