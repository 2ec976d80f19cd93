import { FlintError, SequenceTable, formatError } from '@flint/protocol';
import type { InternalHandler, InvocationContext } from '../core/api/functions.js';
import type { Invoker } from '../core/invoker.js';
import { type ClusterTransport, TransportError } from './transport.js';
import { type RemoteAnswer, type RemoteCall, type Subjects, decode, encode } from './wire.js';

/** A call forwarded to engine `node`, waiting for its answer. */
interface Forwarded {
  node: string;
  functionId: string;
  /** Ends the wait with `error` (the engine left, the link went down). */
  fail: (error: FlintError) => void;
}

/**
 * Calls between the engines of a cluster: the handler of another engine's functions forwards each call
 * there (request/reply), and the calls other engines forward here run on this engine's own providers.
 * A call on its way fails at once when its engine leaves (`invocation_stopped`) or the link goes down
 * (`cluster_unavailable`): its answer could not come back.
 */
export class RemoteCalls {
  /**
   * The calls forwarded and not answered yet, by a number of their own: a SequenceTable rather than a
   * `Map` per engine, whose churn would keep every call reachable until it was promoted (sequence-table.ts).
   */
  private readonly waiting = new SequenceTable<Forwarded>();
  private nextCall = 0;

  constructor(
    private readonly transport: ClusterTransport,
    private readonly subjects: Subjects,
    private readonly nodeId: string,
    private readonly invoker: Invoker,
    /** Whether engine `node` is a member now. */
    private readonly isMember: (node: string) => boolean,
  ) {}

  start(): void {
    this.transport.subscribe(this.subjects.invoke(this.nodeId), (data, reply) => this.serve(decode<RemoteCall>(data), reply));
  }

  /** The handler of every function engine `node` provides. */
  handlerFor(node: string): InternalHandler {
    return (data, ctx) => this.forward(node, data, ctx);
  }

  /** Engine `node` left: its calls on their way are stopped. */
  stopped(node: string, why: string): void {
    const error = new FlintError('invocation_stopped', `Invocation stopped: engine ${node} left the cluster (${why})`);
    for (const call of this.waiting.snapshot()) if (call.node === node) call.fail(error);
  }

  /** The link went down: no answer can come back for the calls on their way. */
  linkLost(): void {
    const reason = `the link to ${this.transport.kind} at ${this.transport.shownUrl} went down during the call`;
    for (const call of this.waiting.snapshot()) call.fail(this.unavailable(call.functionId, call.node, reason));
  }

  private unavailable(functionId: string, node: string, reason: string): FlintError {
    return new FlintError('cluster_unavailable', formatError('cluster_unavailable', { function_id: functionId, engine: node, reason }));
  }

  /** `message_too_large` for `what` (`The call of f forwarded to engine b`, `The result of f on engine b`) of `size` bytes. */
  private tooLarge(what: string, size: number): FlintError {
    const params = { what, size, limit: this.transport.maxMessageBytes, setting: this.transport.maxMessageSetting };
    return new FlintError('message_too_large', formatError('message_too_large', params));
  }

  private forward(node: string, data: unknown, ctx: InvocationContext): Promise<unknown> {
    if (!this.isMember(node)) return Promise.reject(this.unavailable(ctx.functionId, node, `engine ${node} left the cluster`));
    if (!this.transport.up) {
      return Promise.reject(this.unavailable(ctx.functionId, node, `the link to ${this.transport.kind} at ${this.transport.shownUrl} is down`));
    }
    const timeoutMs = ctx.timeoutMs ?? 30_000;
    const call: RemoteCall = { function_id: ctx.functionId, data, timeout_ms: timeoutMs };
    if (ctx.traceparent) call.traceparent = ctx.traceparent;
    if (ctx.baggage) call.baggage = ctx.baggage;
    if (ctx.callerWorkerId !== undefined && ctx.callerContext !== undefined && ctx.callerContext !== null) {
      call.caller = { worker_id: ctx.callerWorkerId, context: ctx.callerContext };
    }
    const seq = this.nextCall++;
    const waiting = this.waiting;
    return new Promise((resolve, reject) => {
      const fail = (error: FlintError) => {
        if (waiting.delete(seq)) reject(error);
      };
      waiting.set(seq, { node, functionId: ctx.functionId, fail });
      // The caller's own timer answers invocation_timeout; the request waits a little longer.
      this.transport.request(this.subjects.invoke(node), encode(call), timeoutMs + 1000).then(
        (bytes) => {
          if (!waiting.delete(seq)) return;
          const answer = decode<RemoteAnswer>(bytes);
          if (!answer) reject(new FlintError('internal_error', `engine ${node} answered a call of ${ctx.functionId} with something that is not JSON`));
          else if ('error' in answer) reject(FlintError.fromBody(answer.error));
          else resolve(answer.result);
        },
        (err: unknown) => {
          if (waiting.delete(seq)) reject(this.transportFailure(err, node, ctx.functionId));
        },
      );
    });
  }

  private transportFailure(err: unknown, node: string, functionId: string): FlintError {
    if (err instanceof TransportError && err.kind === 'no_responders') {
      return new FlintError('invocation_stopped', `Invocation stopped: engine ${node} is gone (nobody answers for it on ${this.transport.kind})`);
    }
    if (err instanceof TransportError && err.kind === 'too_large') {
      return this.tooLarge(`The call of ${functionId} forwarded to engine ${node}`, err.size ?? 0);
    }
    if (err instanceof TransportError && err.kind === 'timeout') {
      return new FlintError('invocation_timeout', `Invocation of ${functionId} on engine ${node} got no answer: ${err.message}`);
    }
    return this.unavailable(functionId, node, err instanceof Error ? err.message : String(err));
  }

  /** Runs a call another engine forwarded, on this engine's own providers only. */
  private serve(call: RemoteCall | undefined, reply: ((data: Uint8Array) => void) | undefined): void {
    if (!reply) return;
    if (!call || typeof call.function_id !== 'string') {
      reply(encode({ error: { code: 'invalid_frame', message: 'a forwarded call needs a function_id' } } satisfies RemoteAnswer));
      return;
    }
    const opts = {
      localOnly: true,
      traceparent: typeof call.traceparent === 'string' ? call.traceparent : undefined,
      baggage: typeof call.baggage === 'string' ? call.baggage : undefined,
      timeoutMs: typeof call.timeout_ms === 'number' && call.timeout_ms > 0 ? call.timeout_ms : undefined,
      // The engines of a cluster trust each other: the identity the caller's listener gave stays with the call.
      remoteCaller: call.caller && typeof call.caller.worker_id === 'string' ? { worker_id: call.caller.worker_id, context: call.caller.context } : undefined,
    };
    this.invoker.callWith(
      call.function_id,
      call.data,
      opts,
      (error, result) => {
        let text: Uint8Array;
        try {
          text = encode(error ? { error: error.toBody() } : { result: result === undefined ? null : result });
        } catch (err) {
          text = encode({ error: { code: 'internal_error', message: `the result cannot be sent to the calling engine: ${(err as Error).message}` } });
        }
        // Too large to travel: the caller gets an error at once rather than waiting out its time-out.
        if (text.byteLength > this.transport.maxMessageBytes) {
          const what = `${error ? 'The error' : 'The result'} of ${call.function_id} on engine ${this.nodeId}`;
          text = encode({ error: this.tooLarge(what, text.byteLength).toBody() } satisfies RemoteAnswer);
        }
        reply(text);
      },
      'cluster',
    );
  }
}
