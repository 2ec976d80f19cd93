import type { ChannelRef, FlintError, FunctionInfo } from '@flint/protocol';
import type { KvAdapterConfig, KvStore } from '../adapters/kv/types.js';
import type { Logger } from './logger.js';

/** What a function handler inside the engine (built-in or module) receives besides its input. */
export interface InvocationContext {
  functionId: string;
  /** Worker id of the caller when a worker made the call. */
  callerWorkerId?: string;
  traceparent?: string;
  baggage?: string;
}

export type InternalHandler = (data: unknown, ctx: InvocationContext) => unknown;

export interface FunctionDefinition {
  id: string;
  description?: string;
  request_format?: unknown;
  response_format?: unknown;
  metadata?: Record<string, unknown>;
}

/** A registered trigger as modules and trigger-type providers see it. */
export interface TriggerRecord {
  id: string;
  type: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
  /** Worker id of the registering connection, or `engine` for engine-owned triggers. */
  owner: string;
}

/**
 * The owner of a trigger type. `registerTrigger` validates and applies a trigger; throwing (a
 * FlintError with a message naming the problem) rejects the registration.
 */
export interface TriggerTypeProvider {
  registerTrigger(trigger: TriggerRecord): void | Promise<void>;
  unregisterTrigger(trigger: TriggerRecord): void | Promise<void>;
}

export interface TriggerTypeDefinition {
  id: string;
  description: string;
  trigger_request_format?: unknown;
  call_request_format?: unknown;
}

export interface InvokeOptions {
  timeoutMs?: number;
  traceparent?: string;
  baggage?: string;
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

/** One end of a channel held inside the engine (e.g. by the HTTP module). */
export type ChannelItem = { kind: 'text'; text: string } | { kind: 'binary'; data: Buffer };

export interface EngineChannel {
  readonly id: string;
  readonly readerRef: ChannelRef;
  readonly writerRef: ChannelRef;
  /** `readerRef` or `writerRef` as JSON text, for a PreparedJson (cheaper than JSON.stringify of the ref). */
  refJson(direction: 'read' | 'write'): string;
  /** Engine writes an item; false means the buffer is full and the writer should wait for `drained()`. */
  write(item: ChannelItem): boolean;
  drained(): Promise<void>;
  end(): void;
  /** Engine reads the next item; null at the end of the channel. */
  read(): Promise<ChannelItem | null>;
  /**
   * Callback form of `read()` for hot paths: `callback` gets the next item (null at the end) at once
   * when one is buffered, else when it arrives. One reader at a time.
   */
  next(callback: (item: ChannelItem | null) => void): void;
  /** True when the channel ended abnormally (its writer dropped, or it was destroyed with an error code). */
  readonly aborted: boolean;
  /** Removes the channel and closes any sockets attached to it (close `code`, default 1000). */
  destroy(reason?: string, code?: number): void;
}

export interface ChannelService {
  create(bufferSize?: number): EngineChannel;
  /** A reader ref that any number of readers may take and that is always already ended (an empty body). */
  readonly emptyReaderRef: ChannelRef;
}

export interface TelemetryFrame {
  kind: 'OTLP' | 'MTRC' | 'LOGS';
  payload: Buffer;
  receivedAt: number;
}

export interface TelemetrySource {
  /** Frames received so far (bounded buffer, oldest dropped first). */
  frames(): readonly TelemetryFrame[];
  /** Called for each new frame; returns an unsubscribe function. */
  subscribe(listener: (frame: TelemetryFrame) => void): () => void;
}

/** Everything a module gets from the engine. Modules never reach past this interface. */
export interface ModuleContext {
  readonly config: unknown;
  readonly logger: Logger;
  /** Folder of the config file, for resolving relative paths. */
  readonly configDir: string;
  registerFunction(def: FunctionDefinition, handler: InternalHandler): () => void;
  registerTriggerType(def: TriggerTypeDefinition, provider: TriggerTypeProvider): () => void;
  /** Synchronous call: resolves with the function's result or rejects with a FlintError. */
  invoke(functionId: string, data: unknown, options?: InvokeOptions): Promise<unknown>;
  /**
   * Callback form of `invoke` for hot paths (no promise per call): `done` is called exactly once,
   * with a FlintError or with the result. `data` may be a PreparedJson.
   */
  dispatch(functionId: string, data: unknown, options: InvokeOptions, done: (error: FlintError | undefined, result: unknown) => void): void;
  /** Fire-and-forget call. */
  invokeVoid(functionId: string, data: unknown, options?: InvokeOptions): void;
  /** Whether a function currently has at least one live provider. */
  hasFunction(functionId: string): boolean;
  listFunctions(includeInternal?: boolean): FunctionInfo[];
  readonly channels: ChannelService;
  readonly telemetry: TelemetrySource;
  /** Opens the key-value store an adapter config names (relative file paths resolve against configDir). */
  openKvStore(config: KvAdapterConfig): Promise<KvStore>;
  /** Lets the queue module take over `enqueue` invocations. */
  setEnqueueHandler(handler: (queue: string, functionId: string, data: unknown) => Promise<string>): void;
}

export interface EngineModule {
  readonly name: string;
  start(ctx: ModuleContext): void | Promise<void>;
  /** Called first on shutdown: stop accepting new work (close listeners). */
  drain?(): void | Promise<void>;
  /** Called after workers and triggers are drained; flush and close stores here. */
  stop?(): void | Promise<void>;
  /** Listeners the module opened, for the start-up banner. */
  listeners?(): { name: string; url: string }[];
}

/** A module as the config loader knows it: a name, aliases, a config parser and a factory. */
export interface ModuleDefinition<C = unknown> {
  name: string;
  aliases?: string[];
  /** Parses the module's `config` (throws a zod error on invalid input). */
  configSchema: import('zod').ZodType<C>;
  create(config: C): EngineModule;
}
