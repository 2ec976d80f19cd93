import { AsyncLocalStorage } from 'node:async_hooks';
import { type InvokeFunctionMessage, type RegisterFunctionMessage, type ResultParts, formatError, isChannelRef, resultFrame } from '@flint/protocol';
import { ChannelReader } from './channel-reader.js';
import type { ChannelSocketSource } from './channel-sockets.js';
import { ChannelWriter } from './channel-writer.js';
import type { Connection } from './connection.js';
import { handlerFailure } from './errors.js';
import type { SpanRecorder } from './spans.js';
import type { Handler, HandlerContext } from './types.js';

/** The invocation being handled, so that calls its handler makes carry its trace context. */
export const invocationScope = new AsyncLocalStorage<HandlerContext>();

export interface FunctionEntry {
  message: RegisterFunctionMessage;
  /** Absent for an HTTP function (`invocation`): the engine calls its URL, never this worker. */
  handler?: Handler;
}

/** Incoming invocations: runs the handler of each `invokefunction` frame and sends its result back. */
export class Invocations {
  /** The functions registered on this worker, by id (replayed on each connect). */
  readonly functions = new Map<string, FunctionEntry>();

  constructor(
    private readonly connection: Connection,
    private readonly log: Pick<Console, 'warn'>,
    /** Where the channel ends in payloads get their sockets. */
    private readonly channelSockets: ChannelSocketSource,
    private readonly spans?: SpanRecorder,
  ) {}

  onInvoke(msg: InvokeFunctionMessage): void {
    const functionId = msg.function_id;
    const invocationId = msg.invocation_id ? msg.invocation_id : undefined;
    const entry = this.functions.get(functionId);
    // The worker's own span for the call, when the caller's trace is sampled: the handler's calls run under it.
    const span = this.spans?.open(msg.traceparent, functionId);
    const traceparent = span ? span.traceparent : msg.traceparent;
    const reply = (result: unknown, error?: { code?: string; message?: string }) => {
      if (invocationId === undefined) {
        // A void call: nobody waits for the result.
        if (span) this.spans?.close(span, error);
        return;
      }
      let parts: ResultParts = { result, error, traceparent, baggage: msg.baggage };
      let text: string;
      try {
        text = resultFrame(invocationId, functionId, parts);
      } catch (err) {
        // A BigInt, a cycle, a toJSON that throws: the caller gets this answer instead of waiting for its time-out.
        const reason = err instanceof Error ? err.message : String(err);
        const message = formatError('result_not_serializable', { function_id: functionId, reason });
        parts = { error: { code: 'result_not_serializable', message }, traceparent, baggage: msg.baggage };
        text = resultFrame(invocationId, functionId, parts);
      }
      if (span) this.spans?.close(span, parts.error);
      this.connection.sendText(text, () => ({ type: 'invocationresult', invocation_id: invocationId, function_id: functionId, ...parts }));
    };
    if (!entry) return reply(undefined, { code: 'function_not_found', message: `Function ${functionId} not found on this worker` });
    const handler = entry.handler;
    if (!handler) {
      return reply(undefined, {
        code: 'function_not_invokable',
        message: `Function ${functionId} is an HTTP function: the engine calls its URL, not this worker`,
      });
    }
    const ctx: HandlerContext = { function_id: functionId, invocation_id: invocationId };
    if (typeof traceparent === 'string') ctx.traceparent = traceparent;
    if (typeof msg.baggage === 'string') ctx.baggage = msg.baggage;
    const caller = msg.caller;
    if (caller && typeof caller === 'object' && typeof caller.worker_id === 'string') ctx.caller = { worker_id: caller.worker_id, context: caller.context };
    const input = reviveChannels(msg.data, this.channelSockets);
    const fail = (err: unknown) => {
      if (invocationId === undefined) this.log.warn(`[flint] ${functionId} failed: ${err instanceof Error ? err.message : String(err)}`);
      reply(undefined, handlerFailure(err, functionId));
    };
    try {
      // The scope carries trace context to calls the handler makes; without trace context there is
      // nothing to carry, and skipping it spares every promise the async-context bookkeeping.
      const out = ctx.traceparent || ctx.baggage ? invocationScope.run(ctx, () => handler(input, ctx)) : handler(input, ctx);
      if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then((result) => reply(result), fail);
      else reply(out);
    } catch (err) {
      fail(err);
    }
  }
}

/** Replaces every channel reference in a payload with a reader or writer object. */
function reviveChannels(value: unknown, sockets: ChannelSocketSource): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (isChannelRef(value)) return value.direction === 'read' ? new ChannelReader(sockets, value) : new ChannelWriter(sockets, value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = reviveChannels(value[i], sockets);
    return value;
  }
  const obj = value as Record<string, unknown>;
  for (const key in obj) {
    // Only objects can hold a ref; writing back unchanged values would make every store megamorphic.
    const v = obj[key];
    if (typeof v !== 'object' || v === null) continue;
    const revived = reviveChannels(v, sockets);
    if (revived !== v) obj[key] = revived;
  }
  return obj;
}
