import {
  type ErrorBody,
  FlintError,
  type InvocationResultMessage,
  SequenceTable,
  formatError,
  invokeFrame,
  isErrorBody,
  isRoutingCode,
  nestedCallFailure,
  toErrorBody,
} from '@flint/protocol';
import { errorMessage } from '../lib/errors.js';
import { BurstLog } from '../lib/log-burst.js';
import { type InvocationContext, type InvokeOptions, PreparedJson, type TraceContext } from './api/functions.js';
import type { InvocationEvent } from './api/observe.js';
import type { WorkerConnection } from './bridge/connection.js';
import type { FunctionProvider, FunctionRegistry } from './functions.js';
import type { Done, HookHub } from './hooks.js';
import type { Logger } from './logger.js';
import { UuidSequence } from './uuid-sequence.js';

export interface RouteOptions extends InvokeOptions {
  /** The worker making the call (its in-flight calls are counted and capped). */
  caller?: WorkerConnection;
  /**
   * Nobody waits for the answer (a void call). A void call is refused, like any other, when its caller
   * is at its cap, but it never holds a slot of that cap: its caller waits for nothing, so the call is
   * done with as far as the caller is concerned once it is handed to its provider, which the invoker
   * does before `route` returns. (Counted until its discarded answer, a caller's fire-and-forget calls
   * to a slow function would use up its cap for the time-out and get its real calls refused.) Refused
   * void calls are counted (`droppedVoidCalls`) and logged at warn, rate-limited.
   */
  void?: boolean;
  /** Only this engine's own providers may run the call (it came from another engine of the cluster). */
  localOnly?: boolean;
  /** The identity of a caller on another engine of the cluster (a call forwarded here), as `caller` would give it. */
  remoteCaller?: CallerIdentity;
}

/** A calling worker and the context its listener's auth function gave it (`ctx.caller` of the function called). */
export interface CallerIdentity {
  worker_id: string;
  context: unknown;
}

export interface InvokerOptions {
  defaultTimeoutMs: number;
  maxCallsInFlightPerWorker: number;
}

interface Pending {
  id: string;
  seq: number;
  functionId: string;
  provider: FunctionProvider & { kind: 'worker' };
  done: Done;
  timer: NodeJS.Timeout;
}

/**
 * Routes invocations to a provider (a worker connection or an in-process handler), keeps every
 * in-flight worker invocation in one Map, applies the time-out and guarantees one answer per call.
 */
export class Invoker {
  /** By the sequence number of their invocation id (see SequenceTable: no Map churn per call). */
  private readonly pending = new SequenceTable<Pending>();
  private readonly ids = new UuidSequence();
  private shuttingDown = false;
  private droppedVoid = 0;
  /** One warn line per burst of time-outs, then one summary per second. */
  private readonly timeoutLog: BurstLog;
  private readonly voidDropLog: BurstLog;

  constructor(
    private readonly registry: FunctionRegistry,
    private readonly options: InvokerOptions,
    private readonly logger: Logger,
    private readonly hooks: HookHub,
  ) {
    this.timeoutLog = new BurstLog(logger, {
      level: 'warn',
      windowMs: 1000,
      keysField: 'functions',
      summary: (n, detail) => `${n.toLocaleString('en-US')} more invocation${n === 1 ? '' : 's'} timed out in the last second (${detail})`,
    });
    this.voidDropLog = new BurstLog(logger, {
      level: 'warn',
      windowMs: 1000,
      keysField: 'calls',
      summary: (n, detail) => `${n.toLocaleString('en-US')} more void call${n === 1 ? '' : 's'} dropped in the last second (${detail})`,
    });
  }

  /** Invocations waiting for a worker's result. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Void calls refused before they reached a provider (over the caller's cap, no provider, …), since start. */
  get droppedVoidCalls(): number {
    return this.droppedVoid;
  }

  /**
   * Routes one call to a provider; `done` gets exactly one answer. `origin` names a module making the
   * call (for invocation hooks; a worker caller is named by `opts.caller`).
   */
  route(functionId: string, data: unknown, opts: RouteOptions, done: Done, origin?: string): void {
    let event: InvocationEvent | undefined;
    // The trace context the call carries on: the caller's, or a tracer's span (the parent of whatever the
    // provider does). Kept apart from `opts` so that no copy of the options is made per traced call.
    let trace: TraceContext = opts;
    if (this.hooks.active) {
      const wrapped = this.hooks.wrap(functionId, opts.trigger, opts.caller?.id ?? origin, opts, done);
      done = wrapped.done;
      event = wrapped.event;
      trace = wrapped.trace;
    }
    if (this.shuttingDown) return done(SHUTTING_DOWN, undefined);
    const caller = opts.caller;
    if (caller) {
      if (caller.callsInFlight >= this.options.maxCallsInFlightPerWorker) {
        const params = { in_flight: caller.callsInFlight, limit: this.options.maxCallsInFlightPerWorker };
        return this.refuse(functionId, opts, { code: 'too_many_invocations', message: formatError('too_many_invocations', params) }, done);
      }
      if (opts.void !== true) {
        caller.callsInFlight++;
        const inner = done;
        done = (error, result, trace) => {
          caller.callsInFlight--;
          inner(error, result, trace);
        };
      }
    }
    const entry = this.registry.functions.get(functionId);
    const provider = entry && this.registry.pickProvider(entry, opts.localOnly);
    if (!provider) {
      return this.refuse(functionId, opts, { code: 'function_not_found', message: formatError('function_not_found', { function_id: functionId }) }, done);
    }
    const timeoutMs = opts.timeoutMs ?? this.options.defaultTimeoutMs;
    if (provider.kind !== 'worker') {
      return this.runInternal(provider, functionId, data instanceof PreparedJson ? data.value() : data, opts, trace, timeoutMs, done);
    }

    if (entry.check !== undefined) {
      const problem = entry.check(data instanceof PreparedJson ? data.value() : data);
      if (problem !== undefined) {
        const message = `payload of ${functionId} does not match its request_format ${problem}`;
        return this.refuse(functionId, opts, { code: 'invalid_payload', message }, done);
      }
    }
    const conn = provider.conn;
    if (event) {
      event.workerId = conn.id;
      event.workerName = conn.metadata?.name;
    }
    if (conn.overloaded) {
      return this.refuse(functionId, opts, { code: 'worker_overloaded', message: formatError('worker_overloaded', { worker_id: conn.id }) }, done);
    }
    const seq = this.ids.issued;
    const id = this.ids.next();
    let frame: string;
    try {
      // A worker registered with a prefix (its listener's access policy) knows its functions without it, and
      // sees in what a trigger delivers only the functions its listener exposes.
      const access = conn.access;
      if (access && opts.trigger) data = access.filterDelivery(opts.trigger.type, data);
      frame = invokeFrameOf(id, access ? access.unprefixed(functionId) : functionId, data, opts, trace);
    } catch (err) {
      return this.refuse(functionId, opts, { code: 'invalid_payload', message: `payload cannot be serialised: ${errorMessage(err)}` }, done);
    }
    const timer = setTimeout(() => this.expire(seq, timeoutMs), timeoutMs);
    this.pending.set(seq, { id, seq, functionId, provider, done, timer });
    provider.inFlight++;
    conn.executing++;
    conn.sendRaw(frame);
  }

  /** Promise form for the engine and modules; rejects with a FlintError. */
  call(functionId: string, data: unknown, opts: RouteOptions = {}, origin?: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.callWith(functionId, data, opts, (error, result) => (error ? reject(error) : resolve(result)), origin);
    });
  }

  /** Callback form of `call` (no promise per call): `done` gets a FlintError or the result. */
  callWith(functionId: string, data: unknown, opts: RouteOptions, done: (error: FlintError | undefined, result: unknown) => void, origin?: string): void {
    this.route(functionId, data, opts, (error, result) => done(error && toFlintError(error), result), origin);
  }

  /** Fire-and-forget; a refused call is counted and logged (see RouteOptions.void), other failures at debug level. */
  callVoid(functionId: string, data: unknown, opts: RouteOptions = {}, origin?: string): void {
    this.route(
      functionId,
      data,
      { ...opts, void: true },
      (error) => {
        if (error) this.logger.debug({ function_id: functionId, code: error.code }, `void call failed: ${error.message}`);
      },
      origin,
    );
  }

  /** Routes an `invocationresult` from the executing worker back to whoever asked. */
  handleResult(conn: WorkerConnection, msg: InvocationResultMessage): void {
    const seq = this.ids.seqOf(msg.invocation_id);
    const entry = seq === undefined ? undefined : this.pending.get(seq);
    if (!entry || entry.provider.conn !== conn) {
      this.logger.debug({ invocation_id: msg.invocation_id, worker_id: conn.id }, 'result for an unknown or expired invocation dropped');
      return;
    }
    this.finish(entry);
    const error = msg.error == null ? undefined : workerFailure(entry.functionId, msg.error);
    const trace = msg.traceparent === undefined && msg.baggage === undefined ? undefined : { traceparent: msg.traceparent, baggage: msg.baggage };
    entry.done(error, msg.result, trace);
  }

  /** Fails every call a disconnecting worker was executing with `invocation_stopped`. */
  stopExecuting(conn: WorkerConnection): void {
    if (conn.executing === 0) return;
    for (const entry of this.pending.snapshot()) {
      if (entry.provider.conn !== conn) continue;
      this.finish(entry);
      entry.done({ code: 'invocation_stopped', message: formatError('invocation_stopped') }, undefined);
    }
  }

  /** Refuses new calls and fails every pending one. */
  shutdown(): void {
    this.shuttingDown = true;
    for (const entry of this.pending.snapshot()) {
      this.finish(entry);
      entry.done(SHUTTING_DOWN, undefined);
    }
    this.timeoutLog.flush();
    this.voidDropLog.flush();
  }

  /** Answers a call the invoker will not route; a void call's caller never hears it, so it is counted and logged. */
  private refuse(functionId: string, opts: RouteOptions, error: ErrorBody, done: Done): void {
    if (opts.void === true) {
      this.droppedVoid++;
      this.voidDropLog.add(`${functionId} [${error.code}]`, () =>
        this.logger.warn({ function_id: functionId, code: error.code, caller: opts.caller?.id }, `void call to ${functionId} dropped: ${error.message}`),
      );
    }
    done(error, undefined);
  }

  private finish(entry: Pending): void {
    this.pending.delete(entry.seq);
    clearTimeout(entry.timer);
    entry.provider.inFlight--;
    entry.provider.conn.executing--;
  }

  private expire(seq: number, timeoutMs: number): void {
    const entry = this.pending.get(seq);
    if (!entry) return;
    this.finish(entry);
    this.timeoutLog.add(entry.functionId, () =>
      this.logger.warn(
        { function_id: entry.functionId, invocation_id: entry.id, worker_id: entry.provider.conn.id },
        `invocation of ${entry.functionId} timed out after ${timeoutMs} ms`,
      ),
    );
    entry.done(timedOut(entry.functionId, timeoutMs), undefined);
  }

  private runInternal(
    provider: FunctionProvider & { kind: 'internal' | 'delegated' | 'remote' },
    functionId: string,
    data: unknown,
    opts: RouteOptions,
    trace: TraceContext,
    timeoutMs: number,
    done: Done,
  ): void {
    let settled = false;
    provider.inFlight++;
    const settle = (error: ErrorBody | undefined, result: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      provider.inFlight--;
      done(error, result, { traceparent: trace.traceparent, baggage: trace.baggage });
    };
    const timer = setTimeout(() => settle(timedOut(functionId, timeoutMs), undefined), timeoutMs);
    // A delegated function's handler makes no calls of its own (it is an HTTP request), and a remote one
    // answers with the other engine's answer for this very call: a routing code either fails with (its
    // own `invocation_timeout`) is about this call, not a nested one.
    const failure = (e: unknown) => (provider.kind === 'internal' ? internalFailure(functionId, e) : toErrorBody(e));
    const ctx: InvocationContext = {
      functionId,
      callerWorkerId: opts.caller?.id ?? opts.remoteCaller?.worker_id,
      callerContext: opts.caller?.access?.context ?? opts.remoteCaller?.context ?? undefined,
      traceparent: trace.traceparent,
      baggage: trace.baggage,
      timeoutMs,
    };
    try {
      const value = provider.handler(data ?? null, ctx);
      if (value instanceof Promise)
        value.then(
          (r) => settle(undefined, r),
          (e: unknown) => settle(failure(e), undefined),
        );
      else settle(undefined, value);
    } catch (e) {
      settle(failure(e), undefined);
    }
  }
}

const SHUTTING_DOWN: ErrorBody = Object.freeze({ code: 'engine_shutting_down', message: formatError('engine_shutting_down') });

function timedOut(functionId: string, timeoutMs: number): ErrorBody {
  return { code: 'invocation_timeout', message: formatError('invocation_timeout', { function_id: functionId, timeout_ms: timeoutMs }) };
}

function toFlintError(error: ErrorBody): FlintError {
  return FlintError.fromBody(error);
}

/**
 * A worker's error answer. `function_not_found` / `function_not_invokable` from a worker mean the
 * function is not (or no longer) on that worker, which is about this call; the other routing codes
 * are only ever the engine's to give, so a worker passing one on is reporting a call it made itself
 * (an SDK that does not wrap nested failures): reported as this function's nested-call failure.
 */
function workerFailure(functionId: string, error: unknown): ErrorBody {
  const body = isErrorBody(error) ? error : toErrorBody(error);
  if (isRoutingCode(body.code) && body.code !== 'function_not_found' && body.code !== 'function_not_invokable') {
    return nestedCallFailure(functionId, body);
  }
  return body;
}

/** What an in-process handler threw: a routing code can only come from a call it made. */
function internalFailure(functionId: string, thrown: unknown): ErrorBody {
  const body = toErrorBody(thrown);
  return isRoutingCode(body.code) ? nestedCallFailure(functionId, body) : body;
}

/**
 * The `invokefunction` frame (see invokeFrame in @flint/protocol): a PreparedJson input is spliced in as
 * is (keys whose value is undefined are left out, as JSON.stringify would). Throws what JSON.stringify
 * throws for an input it cannot serialise.
 */
function invokeFrameOf(id: string, functionId: string, data: unknown, opts: RouteOptions, trace: TraceContext): string {
  const dataJson = data instanceof PreparedJson ? data.json : (JSON.stringify(data) as string | undefined);
  const caller = opts.caller;
  let callerJson: string | undefined;
  // The caller's identity, when its listener's auth function gave it one (see InvokeFunctionMessage.caller).
  if (caller?.access && caller.access.context !== null && caller.access.context !== undefined) {
    callerJson = JSON.stringify({ worker_id: caller.id, context: caller.access.context });
  } else if (opts.remoteCaller && opts.remoteCaller.context !== null && opts.remoteCaller.context !== undefined) {
    callerJson = JSON.stringify(opts.remoteCaller);
  }
  return invokeFrame(id, functionId, { dataJson, traceparent: trace.traceparent, baggage: trace.baggage, callerJson });
}
