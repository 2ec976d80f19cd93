import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { arch, hostname, platform, release } from 'node:os';
import {
  type ChannelRef,
  DEFAULT_BRIDGE_URL,
  EngineFunctions,
  FlintError,
  type RegisterFunctionMessage,
  type RegisterTriggerMessage,
  type RegisterTriggerTypeMessage,
  decodeEngineFrame,
} from '@flint/protocol';
import type WebSocket from 'ws';
import { DEFAULT_RECONNECT } from './backoff.js';
import { Calls } from './calls.js';
import { ChannelReader } from './channel-reader.js';
import { ChannelSockets } from './channel-sockets.js';
import { ChannelWriter } from './channel-writer.js';
import { Connection } from './connection.js';
import type { ConnectionProblem } from './connection-problem.js';
import { FORBIDDEN, FlintForbiddenError, type TriggerRegistrationError } from './errors.js';
import { Invocations, invocationScope } from './invocations.js';
import { QueueClient } from './queue.js';
import { SpanRecorder } from './spans.js';
import { StateClient } from './state.js';
import { StreamClient } from './stream.js';
import { type TriggerEntry, Triggers } from './triggers.js';
import type {
  Channel,
  FunctionOptions,
  FunctionRef,
  Handler,
  HandlerContext,
  HttpInvocation,
  TriggerInput,
  TriggerRef,
  TriggerRequest,
  TriggerTypeHandler,
  WorkerOptions,
} from './types.js';

export const SDK_VERSION = '0.1.0';

/** How long a call made while not connected waits for a connection by default (ms). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * A connection to a Flint engine (or any engine speaking the iii bridge protocol). The facade over
 * the connection (connection.ts), the calls it makes (calls.ts), the invocations it runs
 * (invocations.ts) and its triggers (triggers.ts).
 */
export class Worker extends EventEmitter<{
  connected: [];
  disconnected: [];
  /** Reconnecting stopped after `reconnect.maxRetries` attempts. */
  failed: [];
  workerRegistered: [workerId: string];
  triggerError: [TriggerRegistrationError];
  /**
   * The engine refused a frame that has no answer of its own, e.g. a `registerFunction` of an id the
   * engine reserves (`function_id_reserved`) or a trigger type another worker provides (`trigger_type_taken`).
   */
  engineError: [FlintError];
}> {
  readonly url: string;
  workerId: string | undefined;
  private readonly options: Required<Pick<WorkerOptions, 'workerName' | 'announce'>>;
  private readonly log: Pick<Console, 'warn' | 'error' | 'debug'>;
  private readonly connection: Connection;
  private readonly calls: Calls;
  private readonly invocations: Invocations;
  private readonly triggers: Triggers;
  private readonly services = new Map<string, object>();
  private stateClient: StateClient | undefined;
  private queueClient: QueueClient | undefined;
  private streamClient: StreamClient | undefined;
  private readonly spans: SpanRecorder | undefined;
  private readonly channelSockets: ChannelSockets;

  constructor(url?: string, options: WorkerOptions = {}) {
    super();
    this.url = url ?? process.env.FLINT_URL ?? DEFAULT_BRIDGE_URL;
    this.log = options.log ?? console;
    this.options = { workerName: options.workerName ?? `${hostname()}:${process.pid}`, announce: options.announce ?? true };
    // The token: the option, else FLINT_TOKEN, else a `?token=` already in the URL (sent as it is).
    const token = options.token ?? (process.env.FLINT_TOKEN || undefined);
    const connectionOptions = {
      reconnect: { ...DEFAULT_RECONNECT, ...options.reconnect },
      headers: token === undefined ? options.headers : { ...options.headers, authorization: `Bearer ${token}` },
      sendsToken: token !== undefined || /[?&]token=/.test(this.url),
      maxQueuedFrames: options.maxQueuedFrames ?? 10_000,
      log: this.log,
    };
    this.connection = new Connection(this.url, connectionOptions, {
      replay: () => this.replay(),
      sending: (invocationId) => this.calls.sending(invocationId),
      opened: () => this.onOpened(),
      message: (data) => this.onMessage(data),
      disconnected: () => {
        // Spares belong to the engine of the connection that just ended.
        this.channelSockets.setEnabled(false);
        this.emit('disconnected');
      },
      failed: () => {
        this.calls.connectionFailed();
        this.emit('failed');
      },
    });
    this.calls = new Calls(this.connection, {
      invocationTimeoutMs: options.invocationTimeoutMs ?? 30_000,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    });
    const serviceName = options.serviceName ?? (process.env.OTEL_SERVICE_NAME || options.workerName || 'flint-worker');
    this.spans = options.spans !== true ? undefined : new SpanRecorder(this.connection, serviceName, this.options.workerName, SDK_VERSION);
    this.channelSockets = new ChannelSockets(this.url, connectionOptions.headers);
    this.invocations = new Invocations(this.connection, this.log, this.channelSockets, this.spans);
    this.triggers = new Triggers(this.connection, this.log, (error) => this.emit('triggerError', error));
    this.connection.connect();
  }

  /** A typed client for the state module (`state::*` functions and `state` triggers). */
  get state(): StateClient {
    this.stateClient ??= new StateClient(this);
    return this.stateClient;
  }

  /** A typed client for the queue module (publish, `durable:subscriber` triggers, dead letters). */
  get queue(): QueueClient {
    this.queueClient ??= new QueueClient(this);
    return this.queueClient;
  }

  /** A typed client for the stream module (`stream::*` functions, `stream`, `stream:join` and `stream:leave` triggers). */
  get stream(): StreamClient {
    this.streamClient ??= new StreamClient(this);
    return this.streamClient;
  }

  /** `url` as messages show it: the value of a `?token=` is hidden. */
  get shownUrl(): string {
    return this.connection.shownUrl;
  }

  get connected(): boolean {
    return this.connection.state === 'connected';
  }

  /** Why the last attempt to connect failed (no engine there, or a server that is not a Flint bridge); undefined once connected. */
  get connectionProblem(): ConnectionProblem | undefined {
    return this.connection.problem;
  }

  /** Resolves when the connection is open (at once if it already is). */
  waitConnected(): Promise<void> {
    if (this.connection.state === 'connected') return Promise.resolve();
    return new Promise((resolve) => this.once('connected', resolve));
  }

  /**
   * Registers a function: with a handler, this worker runs it; with an `HttpInvocation`, the engine runs
   * it by calling that URL (its `flint-http-functions` module must be loaded; a refused invocation is
   * reported as `engineError`). Either way it is registered again on every reconnect and goes when
   * this worker disconnects or `unregister()`s it.
   */
  // biome-ignore lint/suspicious/noExplicitAny: see Handler
  registerFunction<I = any, O = any>(id: string, handlerOrInvocation: Handler<I, O> | HttpInvocation, options: FunctionOptions = {}): FunctionRef {
    const functions = this.invocations.functions;
    if (typeof id !== 'string' || id.trim() === '') throw new Error('function id must be a non-empty string');
    if (functions.has(id)) throw new Error(`function ${id} is already registered on this worker`);
    const message: RegisterFunctionMessage = { type: 'registerfunction', id, ...options };
    if (typeof handlerOrInvocation === 'function') {
      functions.set(id, { message, handler: handlerOrInvocation as Handler });
    } else {
      const inv = handlerOrInvocation as HttpInvocation | null | undefined;
      if (typeof inv !== 'object' || inv === null || typeof inv.url !== 'string' || inv.url === '') {
        throw new Error(`function ${id}: the second argument must be a handler or an HTTP invocation {url, method?, timeout_ms?, headers?, auth?}`);
      }
      // The fields iii-sdk sends (undefined ones are left out of the frame).
      message.invocation = { url: inv.url, method: inv.method ?? 'POST', timeout_ms: inv.timeout_ms, headers: inv.headers, auth: inv.auth };
      functions.set(id, { message });
    }
    this.connection.sendNow(message);
    return {
      id,
      unregister: () => {
        if (functions.delete(id)) this.connection.sendNow({ type: 'unregisterfunction', id });
      },
    };
  }

  registerTrigger<C = unknown, T extends string = string>(input: TriggerInput<C, T>): TriggerRef {
    const triggers = this.triggers.registered;
    const id = randomUUID();
    const message: RegisterTriggerMessage = { type: 'registertrigger', id, trigger_type: input.type, function_id: input.function_id, config: input.config };
    if (input.metadata) message.metadata = input.metadata;
    const entry: TriggerEntry = { message, settle: undefined };
    const ready = new Promise<{ parked: boolean }>((resolve, reject) => {
      entry.settle = (error, parked) => (error ? reject(error) : resolve({ parked }));
    });
    ready.catch(() => {}); // an unobserved rejection must not crash the worker; it is also logged
    triggers.set(id, entry);
    this.connection.sendNow(message);
    return {
      id,
      ready,
      unregister: () => {
        if (triggers.delete(id)) this.connection.send({ type: 'unregistertrigger', id, trigger_type: input.type });
      },
    };
  }

  registerTriggerType<C = unknown>(type: { id: string; description: string }, handler: TriggerTypeHandler<C>): { id: string; unregister(): void } {
    const types = this.triggers.types;
    const message: RegisterTriggerTypeMessage = { type: 'registertriggertype', id: type.id, description: type.description };
    types.set(type.id, { message, handler: handler as TriggerTypeHandler });
    this.connection.sendNow(message);
    return {
      id: type.id,
      unregister: () => {
        if (types.delete(type.id)) this.connection.sendNow({ type: 'unregistertriggertype', id: type.id });
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
    return this.calls.trigger<I, O>(request);
  }

  /** Creates a channel; pass `readerRef`/`writerRef` in a payload to hand an end to another function. */
  async createChannel(bufferSize?: number): Promise<Channel> {
    const refs = (await this.trigger({
      function_id: EngineFunctions.CREATE_CHANNEL,
      payload: bufferSize === undefined ? {} : { buffer_size: bufferSize },
    })) as { writer: ChannelRef; reader: ChannelRef };
    return {
      writer: new ChannelWriter(this.channelSockets, refs.writer),
      reader: new ChannelReader(this.channelSockets, refs.reader),
      writerRef: refs.writer,
      readerRef: refs.reader,
    };
  }

  /** Rejects pending calls, stops reconnecting and closes the connection. */
  async shutdown(): Promise<void> {
    if (this.connection.state === 'shutdown') return;
    this.spans?.flush();
    this.calls.rejectAll();
    this.channelSockets.close();
    await this.connection.shutdown();
  }

  /** Full replay on each connect: the engine gave the connection a new worker id and knows nothing of it yet. */
  private replay(): void {
    for (const { message } of this.triggers.types.values()) this.connection.sendNow(message);
    for (const message of this.services.values()) this.connection.sendNow(message);
    for (const { message } of this.invocations.functions.values()) this.connection.sendNow(message);
    for (const { message } of this.triggers.registered.values()) this.connection.sendNow(message);
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
        return this.calls.onResult(msg);
      case 'invokefunction':
        return this.invocations.onInvoke(msg);
      case 'workerregistered':
        this.workerId = msg.worker_id;
        if (typeof msg.reattach_token === 'string') this.connection.reattachToken = msg.reattach_token;
        this.channelSockets.setEnabled(msg.spare_channels === true, typeof msg.spare_channel_idle_ms === 'number' ? msg.spare_channel_idle_ms : undefined);
        this.emit('workerRegistered', this.workerId);
        return;
      case 'triggerregistrationresult':
        return this.triggers.onResult(msg);
      case 'registertrigger':
      case 'unregistertrigger':
        return this.triggers.onForwarded(msg);
      case 'error':
        this.log.warn(`[flint] engine reported ${msg.error.code}: ${msg.error.message}`);
        this.emit('engineError', msg.error.code === FORBIDDEN ? new FlintForbiddenError(msg.error.message) : new FlintError(msg.error.code, msg.error.message));
        return;
      case 'pong':
        return;
    }
  }
}

/** Connects a worker to the engine at `url` (default `FLINT_URL`, then ws://127.0.0.1:49134). */
export function registerWorker(url?: string, options?: WorkerOptions): Worker {
  return new Worker(url, options);
}

/** The trace context of the invocation being handled, if any. */
export function currentInvocation(): HandlerContext | undefined {
  return invocationScope.getStore();
}
