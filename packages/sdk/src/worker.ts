import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { arch, hostname, platform, release } from 'node:os';
import {
  type ChannelRef,
  DEFAULT_BRIDGE_URL,
  EngineFunctions,
  type ErrorBody,
  type InvocationResultMessage,
  type InvokeFunctionMessage,
  type RegisterFunctionMessage,
  type RegisterTriggerMessage,
  type RegisterTriggerTypeMessage,
  type TriggerRegistrationResultMessage,
  type UnregisterTriggerMessage,
  decodeEngineFrame,
  isChannelRef,
  toErrorBody,
} from '@flint/protocol';
import type WebSocket from 'ws';
import { DEFAULT_RECONNECT } from './backoff.js';
import { ChannelReader, ChannelWriter } from './channels.js';
import { Connection } from './connection.js';
import { FlintInvocationError, TriggerRegistrationError } from './errors.js';
import { StateClient } from './state.js';
import type {
  Channel,
  FunctionOptions,
  FunctionRef,
  Handler,
  HandlerContext,
  TriggerConfig,
  TriggerInput,
  TriggerRef,
  TriggerRequest,
  TriggerTypeHandler,
  WorkerOptions,
} from './types.js';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  functionId: string;
}

interface TriggerEntry {
  message: RegisterTriggerMessage;
  settle: ((error: TriggerRegistrationError | undefined, parked: boolean) => void) | undefined;
}

const invocationScope = new AsyncLocalStorage<HandlerContext>();

/** A connection to a Flint engine (or any engine speaking the iii bridge protocol). */
export class Worker extends EventEmitter<{
  connected: [];
  disconnected: [];
  /** Reconnecting stopped after `reconnect.maxRetries` attempts. */
  failed: [];
  workerRegistered: [workerId: string];
  triggerError: [TriggerRegistrationError];
}> {
  readonly url: string;
  workerId: string | undefined;
  private readonly connection: Connection;
  private readonly options: Required<Pick<WorkerOptions, 'workerName' | 'invocationTimeoutMs' | 'announce'>>;
  private readonly log: Pick<Console, 'warn' | 'error' | 'debug'>;
  private readonly functions = new Map<string, { message: RegisterFunctionMessage; handler: Handler }>();
  private readonly triggers = new Map<string, TriggerEntry>();
  private readonly triggerTypes = new Map<string, { message: RegisterTriggerTypeMessage; handler: TriggerTypeHandler }>();
  private readonly services = new Map<string, object>();
  private readonly pending = new Map<string, Pending>();
  private stateClient: StateClient | undefined;

  constructor(url?: string, options: WorkerOptions = {}) {
    super();
    this.url = url ?? process.env.FLINT_URL ?? DEFAULT_BRIDGE_URL;
    this.log = options.log ?? console;
    this.options = {
      workerName: options.workerName ?? `${hostname()}:${process.pid}`,
      invocationTimeoutMs: options.invocationTimeoutMs ?? 30_000,
      announce: options.announce ?? true,
    };
    const connectionOptions = {
      reconnect: { ...DEFAULT_RECONNECT, ...options.reconnect },
      headers: options.headers,
      maxQueuedFrames: options.maxQueuedFrames ?? 10_000,
      log: this.log,
    };
    this.connection = new Connection(this.url, connectionOptions, {
      replay: () => this.replay(),
      awaits: (invocationId) => this.pending.has(invocationId),
      opened: () => this.onOpened(),
      message: (data) => this.onMessage(data),
      disconnected: () => this.emit('disconnected'),
      failed: () => this.emit('failed'),
    });
    this.connection.connect();
  }

  /** A typed client for the state module (`state::*` functions and `state` triggers). */
  get state(): StateClient {
    this.stateClient ??= new StateClient(this);
    return this.stateClient;
  }

  get connected(): boolean {
    return this.connection.state === 'connected';
  }

  /** Resolves when the connection is open (at once if it already is). */
  waitConnected(): Promise<void> {
    if (this.connection.state === 'connected') return Promise.resolve();
    return new Promise((resolve) => this.once('connected', resolve));
  }

  // biome-ignore lint/suspicious/noExplicitAny: see Handler
  registerFunction<I = any, O = any>(id: string, handler: Handler<I, O>, options: FunctionOptions = {}): FunctionRef {
    if (typeof id !== 'string' || id.trim() === '') throw new Error('function id must be a non-empty string');
    if (this.functions.has(id)) throw new Error(`function ${id} is already registered on this worker`);
    const message: RegisterFunctionMessage = { type: 'registerfunction', id, ...options };
    this.functions.set(id, { message, handler: handler as Handler });
    this.connection.sendNow(message);
    return {
      id,
      unregister: () => {
        if (this.functions.delete(id)) this.connection.sendNow({ type: 'unregisterfunction', id });
      },
    };
  }

  registerTrigger<C = unknown>(input: TriggerInput<C>): TriggerRef {
    const id = randomUUID();
    const message: RegisterTriggerMessage = { type: 'registertrigger', id, trigger_type: input.type, function_id: input.function_id, config: input.config };
    if (input.metadata) message.metadata = input.metadata;
    const entry: TriggerEntry = { message, settle: undefined };
    const ready = new Promise<{ parked: boolean }>((resolve, reject) => {
      entry.settle = (error, parked) => (error ? reject(error) : resolve({ parked }));
    });
    ready.catch(() => {}); // an unobserved rejection must not crash the worker; it is also logged
    this.triggers.set(id, entry);
    this.connection.sendNow(message);
    return {
      id,
      ready,
      unregister: () => {
        if (this.triggers.delete(id)) this.connection.send({ type: 'unregistertrigger', id, trigger_type: input.type });
      },
    };
  }

  registerTriggerType<C = unknown>(type: { id: string; description: string }, handler: TriggerTypeHandler<C>): { id: string; unregister(): void } {
    const message: RegisterTriggerTypeMessage = { type: 'registertriggertype', id: type.id, description: type.description };
    this.triggerTypes.set(type.id, { message, handler: handler as TriggerTypeHandler });
    this.connection.sendNow(message);
    return {
      id: type.id,
      unregister: () => {
        if (this.triggerTypes.delete(type.id)) this.connection.sendNow({ type: 'unregistertriggertype', id: type.id });
      },
    };
  }

  /** Describes a service (a group of functions) for consoles; purely descriptive. */
  registerService(service: { id: string; name?: string; description?: string; parent_service_id?: string }): void {
    const message = { type: 'registerservice', ...service, name: service.name ?? service.id };
    this.services.set(service.id, message);
    this.connection.sendNow(message);
  }

  /** Calls a function. Sync calls resolve with its result; `TriggerAction.Void()` resolves at once. */
  trigger<I = unknown, O = unknown>(request: TriggerRequest<I>): Promise<O> {
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
    const timeoutMs = request.timeoutMs ?? this.options.invocationTimeoutMs;
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

  /** Creates a channel; pass `readerRef`/`writerRef` in a payload to hand an end to another function. */
  async createChannel(bufferSize?: number): Promise<Channel> {
    const refs = (await this.trigger({
      function_id: EngineFunctions.CREATE_CHANNEL,
      payload: bufferSize === undefined ? {} : { buffer_size: bufferSize },
    })) as { writer: ChannelRef; reader: ChannelRef };
    return {
      writer: new ChannelWriter(this.url, refs.writer),
      reader: new ChannelReader(this.url, refs.reader),
      writerRef: refs.writer,
      readerRef: refs.reader,
    };
  }

  /** Rejects pending calls, stops reconnecting and closes the connection. */
  async shutdown(): Promise<void> {
    if (this.connection.state === 'shutdown') return;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new FlintInvocationError('worker_shutting_down', 'the worker is shutting down', p.functionId));
      this.pending.delete(id);
    }
    await this.connection.shutdown();
  }

  /** Full replay on each connect: the engine gave the connection a new worker id and knows nothing of it yet. */
  private replay(): void {
    for (const { message } of this.triggerTypes.values()) this.connection.sendNow(message);
    for (const message of this.services.values()) this.connection.sendNow(message);
    for (const { message } of this.functions.values()) this.connection.sendNow(message);
    for (const { message } of this.triggers.values()) this.connection.sendNow(message);
  }

  private onOpened(): void {
    if (this.options.announce) {
      this.connection.sendNow({
        type: 'invokefunction',
        function_id: EngineFunctions.REGISTER_WORKER,
        data: {
          runtime: 'node',
          version: SDK_VERSION,
          name: this.options.workerName,
          os: `${platform()} ${release()} (${arch()})`,
          pid: process.pid,
          isolation: null,
        },
        action: { type: 'void' },
      });
    }
    this.emit('connected');
  }

  private onMessage(data: WebSocket.RawData): void {
    const decoded = decodeEngineFrame(data.toString());
    if (!decoded.ok) {
      // Frames of types this SDK does not know (a newer engine's) are ignored.
      if (decoded.unknownType !== undefined) this.log.debug(`[flint] ignored a frame of unknown type ${decoded.unknownType}`);
      else this.log.warn(`[flint] dropped an undecodable frame from the engine: ${decoded.reason}`);
      return;
    }
    const msg = decoded.message;
    switch (msg.type) {
      case 'invocationresult':
        return this.onResult(msg);
      case 'invokefunction':
        return this.onInvoke(msg);
      case 'workerregistered':
        this.workerId = msg.worker_id;
        this.emit('workerRegistered', this.workerId);
        return;
      case 'triggerregistrationresult':
        return this.onTriggerResult(msg);
      case 'registertrigger':
      case 'unregistertrigger':
        return this.onForwardedTrigger(msg);
      case 'error':
        this.log.warn(`[flint] engine reported ${msg.error.code}: ${msg.error.message}`);
        return;
      case 'pong':
        return;
    }
  }

  private onResult(msg: InvocationResultMessage): void {
    const id = msg.invocation_id;
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (msg.error) p.reject(FlintInvocationError.from(msg.error, p.functionId));
    else p.resolve(msg.result);
  }

  private onInvoke(msg: InvokeFunctionMessage): void {
    const functionId = msg.function_id;
    const invocationId = msg.invocation_id ? msg.invocation_id : undefined;
    const entry = this.functions.get(functionId);
    const reply = (result: unknown, error?: unknown) => {
      if (invocationId === undefined) return;
      this.connection.send({
        type: 'invocationresult',
        invocation_id: invocationId,
        function_id: functionId,
        result,
        error,
        traceparent: msg.traceparent,
        baggage: msg.baggage,
      });
    };
    if (!entry) return reply(undefined, { code: 'function_not_found', message: `Function ${functionId} not found on this worker` });
    const ctx: HandlerContext = { function_id: functionId, invocation_id: invocationId };
    if (typeof msg.traceparent === 'string') ctx.traceparent = msg.traceparent;
    if (typeof msg.baggage === 'string') ctx.baggage = msg.baggage;
    const input = reviveChannels(msg.data, this.url);
    const fail = (err: unknown) => {
      if (invocationId === undefined) this.log.warn(`[flint] ${functionId} failed: ${err instanceof Error ? err.message : String(err)}`);
      reply(undefined, toErrorBody(err));
    };
    try {
      // The scope carries trace context to calls the handler makes; without trace context there is
      // nothing to carry, and skipping it spares every promise the async-context bookkeeping.
      const out = ctx.traceparent || ctx.baggage ? invocationScope.run(ctx, () => entry.handler(input, ctx)) : entry.handler(input, ctx);
      if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then((result) => reply(result), fail);
      else reply(out);
    } catch (err) {
      fail(err);
    }
  }

  private onTriggerResult(msg: TriggerRegistrationResultMessage): void {
    const entry = this.triggers.get(msg.id);
    if (!entry) return;
    // The decoder checked only that an error is an object: its fields may be missing.
    const e: Partial<ErrorBody> | undefined = msg.error;
    const error = e
      ? new TriggerRegistrationError(e.code ?? 'trigger_registration_failed', e.message ?? 'trigger rejected', entry.message.id, entry.message.trigger_type)
      : undefined;
    if (error) {
      // The engine does not keep a rejected trigger; neither does the replay.
      this.triggers.delete(entry.message.id);
      this.log.warn(`[flint] trigger ${entry.message.trigger_type} → ${entry.message.function_id} rejected: ${error.message}`);
      this.emit('triggerError', error);
    }
    const settle = entry.settle;
    entry.settle = undefined;
    settle?.(error, msg.parked === true);
  }

  private onForwardedTrigger(msg: RegisterTriggerMessage | UnregisterTriggerMessage): void {
    const op = msg.type === 'registertrigger' ? 'register' : 'unregister';
    const typeId = msg.trigger_type;
    const type = typeId === undefined ? undefined : this.triggerTypes.get(typeId);
    const trigger: TriggerConfig =
      msg.type === 'registertrigger'
        ? { id: msg.id, function_id: msg.function_id, config: msg.config }
        : // An unregister frame names only the trigger and its type: the handler gets the id (function_id and config are undefined).
          ({ id: msg.id, function_id: undefined, config: undefined } as unknown as TriggerConfig);
    if (msg.type === 'registertrigger' && msg.metadata) trigger.metadata = msg.metadata;
    const answer = (error?: { code: string; message: string }) => {
      if (op === 'register')
        this.connection.send({ type: 'triggerregistrationresult', id: trigger.id, trigger_type: typeId, function_id: trigger.function_id, error });
    };
    if (!type) return answer({ code: 'trigger_type_not_found', message: `Trigger type ${typeId} is not provided by this worker` });
    Promise.resolve()
      .then(() => (op === 'register' ? type.handler.registerTrigger(trigger) : type.handler.unregisterTrigger(trigger)))
      .then(
        () => answer(),
        (err: unknown) => answer({ code: 'trigger_registration_failed', message: err instanceof Error ? err.message : String(err) }),
      );
  }

  private queueFull(functionId: string): FlintInvocationError {
    return new FlintInvocationError('not_connected', `disconnected from ${this.url} and ${this.connection.queued} frames are already queued`, functionId);
  }
}

/** Replaces every channel reference in a payload with a reader or writer object. */
function reviveChannels(value: unknown, base: string): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (isChannelRef(value)) return value.direction === 'read' ? new ChannelReader(base, value) : new ChannelWriter(base, value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = reviveChannels(value[i], base);
    return value;
  }
  const obj = value as Record<string, unknown>;
  for (const key in obj) {
    // Only objects can hold a ref; writing back unchanged values would make every store megamorphic.
    const v = obj[key];
    if (typeof v !== 'object' || v === null) continue;
    const revived = reviveChannels(v, base);
    if (revived !== v) obj[key] = revived;
  }
  return obj;
}

export const SDK_VERSION = '0.1.0';

/** Connects a worker to the engine at `url` (default `FLINT_URL`, then ws://127.0.0.1:49134). */
export function registerWorker(url?: string, options?: WorkerOptions): Worker {
  return new Worker(url, options);
}

/** The trace context of the invocation being handled, if any. */
export function currentInvocation(): HandlerContext | undefined {
  return invocationScope.getStore();
}
