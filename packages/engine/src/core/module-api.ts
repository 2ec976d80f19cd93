/**
 * The module API: everything a module gets from the engine. Modules import from core only this
 * file (and logger.ts); the types it re-exports live in `core/api/`.
 */
import type { FlintError } from '@flint/protocol';
import type { ZodType } from 'zod';
import type { AdapterFamilies, AdapterFamily, AdapterInstance, AdapterRef } from './api/adapters.js';
import type { ChannelService, TelemetrySource } from './api/channels.js';
import type {
  FunctionDefinition,
  FunctionDelegate,
  InternalHandler,
  InvokeOptions,
  RegisterFunctionOptions,
  TraceContext,
  TriggerOrigin,
} from './api/functions.js';
import type { BoundListener, EngineWebSocketServer, ListenOptions, WebSocketServerOptions } from './api/listen.js';
import type { FiringOptions, InvocationHooks, InvocationTracer, LogRecord, TriggerFiring } from './api/observe.js';
import type { RegistryView } from './api/registry.js';
import type { ModuleTrigger, ModuleTriggerInput, TriggerTypeDefinition, TriggerTypeProvider } from './api/triggers.js';
import type { Logger } from './logger.js';

export type * from './api/adapters.js';
export type * from './api/channels.js';
export type * from './api/functions.js';
export { PreparedJson } from './api/functions.js';
export type * from './api/listen.js';
export type * from './api/observe.js';
export type * from './api/registry.js';
export type * from './api/triggers.js';

/** Takes `enqueue` calls (workers' `TriggerAction.Enqueue`, modules' `ctx.enqueue`); resolves with a receipt id. */
export type EnqueueHandler = (queue: string, functionId: string, data: unknown, trace: TraceContext) => Promise<string>;

/**
 * Everything a module gets from the engine. Modules never reach past this interface. What a module
 * registers or opens through it (functions, trigger types, triggers, listeners, WebSocket servers,
 * subscriptions, hooks, adapters) belongs to the module and is released at its stop.
 */
export interface ModuleContext {
  /** The module's name (`flint-http`). */
  readonly name: string;
  readonly config: unknown;
  readonly logger: Logger;
  /** Folder of the config file, for resolving relative paths. */
  readonly configDir: string;

  // ---- functions and triggers ----
  /** Throws a FlintError when another module already provides `def.id` (unless that one is replaceable). */
  registerFunction(def: FunctionDefinition, handler: InternalHandler, options?: RegisterFunctionOptions): () => void;
  /** Provides trigger type `def.id`; triggers of it reach `provider` only once their config passed `def.configSchema`. */
  registerTriggerType<C>(def: TriggerTypeDefinition<C>, provider: TriggerTypeProvider<C>): () => void;
  /** Registers a trigger for one of the module's functions, as a worker would. */
  registerTrigger(trigger: ModuleTriggerInput): ModuleTrigger;

  // ---- calls ----
  /** Synchronous call: resolves with the function's result or rejects with a FlintError. */
  invoke(functionId: string, data: unknown, options?: InvokeOptions): Promise<unknown>;
  /**
   * Callback form of `invoke` for hot paths (no promise per call): `done` is called exactly once,
   * with a FlintError or with the result. `data` may be a PreparedJson.
   */
  invokeWith(functionId: string, data: unknown, options: InvokeOptions, done: (error: FlintError | undefined, result: unknown) => void): void;
  /** Fire-and-forget call (failures are logged at debug level). */
  invokeVoid(functionId: string, data: unknown, options?: InvokeOptions): void;
  /** Hands a call to the queue module (`enqueue_error` when none is loaded); resolves with its receipt id. */
  enqueue(queue: string, functionId: string, data: unknown, trace?: TraceContext): Promise<string>;
  /** Takes the queue role: every enqueue goes to `handler`. A second module claiming it is a start-up error. */
  provideEnqueue(handler: EnqueueHandler): void;
  /**
   * Runs workers' functions that have no implementation on the worker (`registerfunction` with
   * `invocation`, e.g. an HTTP endpoint): `make` checks each such registration and returns its handler.
   * A second module claiming the role is a start-up error.
   */
  delegateFunctions(make: FunctionDelegate): void;

  // ---- what is registered ----
  readonly registry: RegistryView;
  readonly channels: ChannelService;
  readonly telemetry: TelemetrySource;

  // ---- listeners ----
  /** Binds a server and reports it in the banner; the engine closes it at shutdown. */
  listen(options: ListenOptions): Promise<BoundListener>;
  /** A WebSocket server with the bridge's ping, payload-cap and close-reason behaviour (closed at stop). */
  webSocketServer(options: WebSocketServerOptions): EngineWebSocketServer;

  // ---- adapters ----
  /**
   * Opens the adapter a config reference names (`config.adapter`, validated at config load against
   * the family's table); the engine closes it after the module's stop.
   */
  adapter<F extends AdapterFamily>(family: F, ref: AdapterRef): Promise<AdapterFamilies[F] & AdapterInstance>;

  // ---- observing ----
  /** Installs invocation hooks until the returned function is called (or the module stops). */
  addInvocationHooks(hooks: InvocationHooks): () => void;
  /**
   * Opens a span for every invocation and trigger firing until the returned function is called. One module
   * traces at a time: a second claim throws.
   */
  traceInvocations(tracer: InvocationTracer): () => void;
  /**
   * Starts a trigger firing for hooks and the tracer; make the firing's calls with its `trace`. A light
   * object when nothing observes.
   */
  beginTrigger(trigger: TriggerOrigin, functionId: string, options?: FiringOptions): TriggerFiring;
  /** Receives every log record the engine writes (its own and workers') until the returned function is called. */
  tapLogs(listener: (record: LogRecord) => void): () => void;
}

export interface EngineModule {
  readonly name: string;
  start(ctx: ModuleContext): void | Promise<void>;
  /**
   * Called first on shutdown, for every module at once, under `shutdown_timeout_ms`: stop taking new
   * work and finish what is in hand. (Listeners made with `ctx.listen` stop accepting by themselves.)
   */
  drain?(): void | Promise<void>;
  /** Called in reverse start order once workers are drained; flush what the module holds here. */
  stop?(): void | Promise<void>;
}

/** A module as the config loader knows it: a name, aliases, a config parser and a factory. */
export interface ModuleDefinition<C = unknown> {
  name: string;
  aliases?: string[];
  /** Parses the module's `config` (throws a zod error on invalid input). */
  configSchema: ZodType<C>;
  /**
   * Keys of the module's config that name an adapter (`{adapter: 'kv'}`): the loader checks each
   * reference against that family's adapters and replaces it with the validated one.
   */
  adapters?: Record<string, AdapterFamily>;
  create(config: C): EngineModule;
}
