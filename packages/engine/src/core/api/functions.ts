/** What a function handler inside the engine (a module's or the engine's) receives besides its input. */
export interface InvocationContext {
  functionId: string;
  /** Worker id of the caller when a worker made the call. */
  callerWorkerId?: string;
  /** The `context` the caller's auth function gave it, when it connected through a listener with an access policy. */
  callerContext?: unknown;
  traceparent?: string;
  baggage?: string;
  /** How long the call may take (ms); the engine answers `invocation_timeout` past it. */
  timeoutMs?: number;
}

export type InternalHandler = (data: unknown, ctx: InvocationContext) => unknown;

/** A worker's function whose implementation is not on the worker: `registerfunction` with `invocation` (an HTTP endpoint). */
export interface DelegatedFunction extends FunctionDefinition {
  /** The worker that registered it (the function goes when that connection does). */
  worker_id: string;
  /** The frame's `invocation`, unchecked: `{url, method?, timeout_ms?, headers?, auth?}` for HTTP. */
  invocation: unknown;
}

/** Makes the handler of a delegated function; throws a FlintError to refuse the registration (its message goes to the worker). */
export type FunctionDelegate = (fn: DelegatedFunction) => InternalHandler;

export interface FunctionDefinition {
  id: string;
  description?: string;
  request_format?: unknown;
  response_format?: unknown;
  metadata?: Record<string, unknown>;
}

export interface RegisterFunctionOptions {
  /**
   * A default that another module may take over: when a later module registers the same id, this
   * registration is withdrawn instead of the start-up failing (the engine's `engine::log::*` are
   * such defaults, so that an observability module can own them).
   */
  replaceable?: boolean;
  /**
   * Left out of `engine::functions::list` unless `include_internal` is asked for: an alias kept so that
   * code written for upstream ids (`iii::durable::publish`) runs unchanged, without listing every id twice.
   */
  unlisted?: boolean;
}

/** The trigger a call is made for (carried to invocation hooks). */
export interface TriggerOrigin {
  id: string;
  type: string;
}

/** W3C trace context carried through every hop of a call. */
export interface TraceContext {
  traceparent?: string;
  baggage?: string;
}

export interface InvokeOptions extends TraceContext {
  timeoutMs?: number;
  /** Set when the call fires a trigger (or runs its condition), for invocation hooks. */
  trigger?: TriggerOrigin;
}

/**
 * A call's input already serialised to JSON, for a module on a hot path that can build the text
 * more cheaply than JSON.stringify of an object (flint-http splices precomputed pieces). The invoker
 * puts the text into the frame as is; an in-process handler gets it parsed.
 */
export class PreparedJson {
  constructor(readonly json: string) {}

  value(): unknown {
    return JSON.parse(this.json);
  }
}
