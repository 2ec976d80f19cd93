import { type ErrorBody, FlintError, type InvocationResultMessage, isErrorBody, toErrorBody } from '@flint/protocol';
import type { WorkerConnection } from './connection.js';
import type { Logger } from './logger.js';
import { type InvocationContext, type InvokeOptions, PreparedJson } from './module-api.js';
import type { FunctionProvider, Registry } from './registry.js';
import { UuidSequence } from './uuid-sequence.js';

export interface TraceContext {
  traceparent?: string;
  baggage?: string;
}

/** Called exactly once per dispatched invocation. */
export type Done = (error: ErrorBody | undefined, result: unknown, trace?: TraceContext) => void;

export interface DispatchOptions extends InvokeOptions {
  caller?: WorkerConnection;
}

export interface InvokerOptions {
  defaultTimeoutMs: number;
  maxCallsInFlightPerWorker: number;
}

interface Pending {
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
  private readonly pending = new Map<string, Pending>();
  private readonly ids = new UuidSequence();
  private shuttingDown = false;
  enqueueHandler: ((queue: string, functionId: string, data: unknown) => Promise<string>) | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly options: InvokerOptions,
    private readonly logger: Logger,
  ) {}

  /** Invocations waiting for a worker's result. */
  get pendingCount(): number {
    return this.pending.size;
  }

  dispatch(functionId: string, data: unknown, opts: DispatchOptions, done: Done): void {
    if (this.shuttingDown) return done({ code: 'engine_shutting_down', message: 'The engine is shutting down' }, undefined);
    const caller = opts.caller;
    if (caller) {
      if (caller.callsInFlight >= this.options.maxCallsInFlightPerWorker) {
        return done(
          {
            code: 'too_many_invocations',
            message: `Worker has ${caller.callsInFlight} calls in flight (limit ${this.options.maxCallsInFlightPerWorker})`,
          },
          undefined,
        );
      }
      caller.callsInFlight++;
      const inner = done;
      done = (error, result, trace) => {
        caller.callsInFlight--;
        inner(error, result, trace);
      };
    }
    const entry = this.registry.functions.get(functionId);
    const provider = entry && this.registry.pickProvider(entry);
    if (!provider) return done({ code: 'function_not_found', message: `Function ${functionId} not found` }, undefined);
    const timeoutMs = opts.timeoutMs ?? this.options.defaultTimeoutMs;
    if (provider.kind === 'internal') {
      return this.runInternal(provider, functionId, data instanceof PreparedJson ? data.value() : data, opts, timeoutMs, done);
    }

    const conn = provider.conn;
    if (conn.overloaded) {
      return done({ code: 'worker_overloaded', message: `Worker ${conn.id} is not reading its frames; retry later` }, undefined);
    }
    const id = this.ids.next();
    let frame: string;
    try {
      frame = invokeFrame(id, functionId, data, opts);
    } catch (err) {
      return done({ code: 'invalid_payload', message: `payload cannot be serialised: ${err instanceof Error ? err.message : String(err)}` }, undefined);
    }
    const timer = setTimeout(() => this.expire(id, timeoutMs), timeoutMs);
    this.pending.set(id, { functionId, provider, done, timer });
    provider.inFlight++;
    conn.executing++;
    conn.sendRaw(frame);
  }

  /** Promise form for the engine and modules; rejects with a FlintError. */
  call(functionId: string, data: unknown, opts: DispatchOptions = {}): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.callWith(functionId, data, opts, (error, result) => (error ? reject(error) : resolve(result)));
    });
  }

  /** Callback form of `call` (no promise per call): `done` gets a FlintError or the result. */
  callWith(functionId: string, data: unknown, opts: DispatchOptions, done: (error: FlintError | undefined, result: unknown) => void): void {
    this.dispatch(functionId, data, opts, (error, result) => done(error && toFlintError(error), result));
  }

  /** Fire-and-forget; failures are logged at debug level. */
  callVoid(functionId: string, data: unknown, opts: DispatchOptions = {}): void {
    this.dispatch(functionId, data, opts, (error) => {
      if (error) this.logger.debug({ function_id: functionId, code: error.code }, `void call failed: ${error.message}`);
    });
  }

  /** Routes an `invocationresult` from the executing worker back to whoever asked. */
  handleResult(conn: WorkerConnection, msg: InvocationResultMessage): void {
    const entry = this.pending.get(msg.invocation_id);
    if (!entry || entry.provider.conn !== conn) {
      this.logger.debug({ invocation_id: msg.invocation_id, worker_id: conn.id }, 'result for an unknown or expired invocation dropped');
      return;
    }
    this.finish(msg.invocation_id, entry);
    const error = msg.error == null ? undefined : isErrorBody(msg.error) ? msg.error : toErrorBody(msg.error);
    const trace = msg.traceparent === undefined && msg.baggage === undefined ? undefined : { traceparent: msg.traceparent, baggage: msg.baggage };
    entry.done(error, msg.result, trace);
  }

  /** Fails every call a disconnecting worker was executing with `invocation_stopped`. */
  stopExecuting(conn: WorkerConnection): void {
    if (conn.executing === 0) return;
    for (const [id, entry] of [...this.pending]) {
      if (entry.provider.conn !== conn) continue;
      this.finish(id, entry);
      entry.done({ code: 'invocation_stopped', message: 'Invocation stopped: the worker disconnected' }, undefined);
    }
  }

  /** Refuses new calls and fails every pending one. */
  shutdown(): void {
    this.shuttingDown = true;
    for (const [id, entry] of [...this.pending]) {
      this.finish(id, entry);
      entry.done({ code: 'engine_shutting_down', message: 'The engine is shutting down' }, undefined);
    }
  }

  private finish(id: string, entry: Pending): void {
    this.pending.delete(id);
    clearTimeout(entry.timer);
    entry.provider.inFlight--;
    entry.provider.conn.executing--;
  }

  private expire(id: string, timeoutMs: number): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.finish(id, entry);
    this.logger.warn({ function_id: entry.functionId, invocation_id: id, worker_id: entry.provider.conn.id }, `invocation timed out after ${timeoutMs} ms`);
    entry.done({ code: 'invocation_timeout', message: `Invocation of ${entry.functionId} timed out after ${timeoutMs} ms` }, undefined);
  }

  private runInternal(
    provider: FunctionProvider & { kind: 'internal' },
    functionId: string,
    data: unknown,
    opts: DispatchOptions,
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
      done(error, result, { traceparent: opts.traceparent, baggage: opts.baggage });
    };
    const timer = setTimeout(
      () => settle({ code: 'invocation_timeout', message: `Invocation of ${functionId} timed out after ${timeoutMs} ms` }, undefined),
      timeoutMs,
    );
    const ctx: InvocationContext = { functionId, callerWorkerId: opts.caller?.id, traceparent: opts.traceparent, baggage: opts.baggage };
    try {
      const value = provider.handler(data ?? null, ctx);
      if (value instanceof Promise)
        value.then(
          (r) => settle(undefined, r),
          (e: unknown) => settle(toErrorBody(e), undefined),
        );
      else settle(undefined, value);
    } catch (e) {
      settle(toErrorBody(e), undefined);
    }
  }
}

function toFlintError(error: ErrorBody): FlintError {
  return new FlintError(error.code, error.message, error.stacktrace ? { stacktrace: error.stacktrace } : undefined);
}

/**
 * The `invokefunction` frame, written out by hand so that a PreparedJson input is spliced in as is
 * (keys whose value is undefined are left out, as JSON.stringify would). Throws what JSON.stringify
 * throws for an input it cannot serialise.
 */
function invokeFrame(id: string, functionId: string, data: unknown, opts: InvokeOptions): string {
  const json = data instanceof PreparedJson ? data.json : (JSON.stringify(data) as string | undefined);
  let frame = `{"type":"invokefunction","invocation_id":"${id}","function_id":${JSON.stringify(functionId)}`;
  if (json !== undefined) frame += `,"data":${json}`;
  if (opts.traceparent !== undefined) frame += `,"traceparent":${JSON.stringify(opts.traceparent)}`;
  if (opts.baggage !== undefined) frame += `,"baggage":${JSON.stringify(opts.baggage)}`;
  return `${frame}}`;
}
