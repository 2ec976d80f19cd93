/**
 * Shared helpers for the engine integration tests: start engines on ephemeral ports, list what they
 * hold, and one small adapter over the two worker SDKs (`@flint/sdk` and `iii-sdk@0.11.6`) so a test can
 * run against both. (The raw protocol client is raw-client.ts; waiting helpers are util.ts.)
 *
 * Everything a helper starts is remembered and torn down by `cleanup()` (cleanup.ts; call it in afterEach).
 */
import { type Engine, type EngineOptions, startEngine } from '@flint/engine';
import { EngineFunctions, type FunctionInfo, type TriggerInfo, type WorkerInfo } from '@flint/protocol';
import { type HandlerContext, registerWorker as registerFlintWorker } from '@flint/sdk';
import { registerWorker as registerIiiWorker } from 'iii-sdk';
import { track } from './cleanup.js';
import { uid, waitFor } from './util.js';

// iii-sdk opens an OTel socket unless told otherwise; only the /otel test turns it on explicitly.
process.env.OTEL_ENABLED = 'false';

// ---------------------------------------------------------------------------------------------
// Engines
// ---------------------------------------------------------------------------------------------

/** Starts an engine on an ephemeral port with silent logs; `config` is merged over that base. */
export async function startTestEngine(config: Record<string, unknown> = {}, options: Omit<EngineOptions, 'config'> = {}): Promise<Engine> {
  const { bridge, log, ...rest } = config as { bridge?: Record<string, unknown>; log?: Record<string, unknown> };
  const engine = await startEngine({
    ...options,
    config: { bridge: { port: 0, ...bridge }, log: { level: 'silent', ...log }, ...rest },
  });
  track(() => engine.stop());
  return engine;
}

export async function listFunctions(engine: Engine, includeInternal = false): Promise<FunctionInfo[]> {
  const out = (await engine.invoke(EngineFunctions.LIST_FUNCTIONS, { include_internal: includeInternal })) as { functions: FunctionInfo[] };
  return out.functions;
}

export async function listTriggers(engine: Engine, includeInternal = false): Promise<TriggerInfo[]> {
  const out = (await engine.invoke(EngineFunctions.LIST_TRIGGERS, { include_internal: includeInternal })) as { triggers: TriggerInfo[] };
  return out.triggers;
}

export async function listWorkers(engine: Engine, workerId?: string): Promise<WorkerInfo[]> {
  const out = (await engine.invoke(EngineFunctions.LIST_WORKERS, workerId === undefined ? {} : { worker_id: workerId })) as { workers: WorkerInfo[] };
  return out.workers;
}

export const isListed = (engine: Engine, functionId: string): boolean => engine.listFunctions(true).some((f) => f.function_id === functionId);

/** Waits until `functionId` is listed (or, with `listed: false`, until it is gone). */
export async function waitForFunction(engine: Engine, functionId: string, listed = true, timeoutMs = 2000): Promise<void> {
  await waitFor(() => isListed(engine, functionId) === listed, timeoutMs, `${functionId} to be ${listed ? 'listed' : 'unlisted'}`);
}

export async function findTrigger(engine: Engine, predicate: (t: TriggerInfo) => boolean): Promise<TriggerInfo | undefined> {
  return (await listTriggers(engine, true)).find(predicate);
}

// ---------------------------------------------------------------------------------------------
// Worker SDKs
// ---------------------------------------------------------------------------------------------

export type SdkKind = 'flint' | 'iii';

export type InvokeAction = { type: 'void' } | { type: 'enqueue'; queue: string };

export interface TriggerConfigSeen {
  id: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
}

export interface TestTriggerTypeHandler {
  registerTrigger(trigger: TriggerConfigSeen): void | Promise<void>;
  unregisterTrigger(trigger: TriggerConfigSeen): void | Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: channel ends differ between the two SDKs; tests use the common surface
export type AnyChannelEnd = any;

/** The part of the two SDKs' surfaces the tests use, the same for both. */
export interface TestWorker {
  readonly kind: SdkKind;
  readonly name: string;
  /** The SDK's own worker object (`Worker` of @flint/sdk or `ISdk` of iii-sdk). */
  readonly native: unknown;
  registerFunction(
    id: string,
    // biome-ignore lint/suspicious/noExplicitAny: handlers take arbitrary JSON
    handler: (data: any, ctx?: HandlerContext) => unknown,
    options?: { description?: string; request_format?: Record<string, unknown>; response_format?: Record<string, unknown>; metadata?: Record<string, unknown> },
  ): { id: string; unregister(): void };
  registerTrigger(input: { type: string; function_id: string; config: unknown; metadata?: Record<string, unknown> }): { unregister(): void };
  registerTriggerType(type: { id: string; description: string }, handler: TestTriggerTypeHandler): { unregister(): void };
  // biome-ignore lint/suspicious/noExplicitAny: results are arbitrary JSON
  trigger(request: { function_id: string; payload?: unknown; action?: InvokeAction; timeoutMs?: number }): Promise<any>;
  createChannel(bufferSize?: number): Promise<{ writer: AnyChannelEnd; reader: AnyChannelEnd; writerRef: unknown; readerRef: unknown }>;
  shutdown(): Promise<void>;
}

export interface TestWorkerOptions {
  name?: string;
  invocationTimeoutMs?: number;
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number; maxRetries?: number };
  /** iii-sdk only: turn OpenTelemetry (and its /otel socket) on. */
  otel?: boolean;
  /** @flint/sdk only: the bridge token (`token` option). iii-sdk takes it in the URL (`?token=`). */
  token?: string;
  /** @flint/sdk only: record and send a span per traced call (`spans` option). */
  spans?: boolean;
  /** Extra headers on the WebSocket upgrade (both SDKs' `headers` option). */
  headers?: Record<string, string>;
}

const quiet = { warn: () => {}, error: () => {}, debug: () => {} };

function connectFlint(url: string, options: TestWorkerOptions): TestWorker {
  const name = options.name ?? uid('flint');
  const w = registerFlintWorker(url, {
    workerName: name,
    invocationTimeoutMs: options.invocationTimeoutMs,
    reconnect: { initialDelayMs: 50, maxDelayMs: 200, ...options.reconnect },
    log: quiet,
    token: options.token,
    spans: options.spans,
    headers: options.headers,
  });
  return {
    kind: 'flint',
    name,
    native: w,
    registerFunction: (id, handler, opts) => w.registerFunction(id, (input, ctx) => handler(input, ctx), opts),
    registerTrigger: (input) => w.registerTrigger(input),
    registerTriggerType: (type, handler) => w.registerTriggerType(type, handler),
    trigger: (request) => w.trigger(request),
    createChannel: (bufferSize) => w.createChannel(bufferSize),
    shutdown: () => w.shutdown(),
  };
}

function connectIii(url: string, options: TestWorkerOptions): TestWorker {
  const name = options.name ?? uid('iii');
  const w = registerIiiWorker(url, {
    workerName: name,
    invocationTimeoutMs: options.invocationTimeoutMs,
    reconnectionConfig: { initialDelayMs: 50, maxDelayMs: 200, ...options.reconnect },
    enableMetricsReporting: options.otel === true,
    otel: options.otel ? { enabled: true } : { enabled: false },
    headers: options.headers,
  });
  return {
    kind: 'iii',
    name,
    native: w,
    registerFunction: (id, handler, opts) => w.registerFunction(id, async (input: unknown) => handler(input), opts),
    registerTrigger: (input) => w.registerTrigger(input),
    registerTriggerType: (type, handler) =>
      w.registerTriggerType(type, {
        registerTrigger: async (t) => handler.registerTrigger(t as TriggerConfigSeen),
        unregisterTrigger: async (t) => handler.unregisterTrigger(t as TriggerConfigSeen),
      }),
    trigger: (request) =>
      w.trigger({
        function_id: request.function_id,
        payload: request.payload,
        action: request.action,
        timeoutMs: request.timeoutMs,
      }),
    createChannel: (bufferSize) => w.createChannel(bufferSize),
    shutdown: () => w.shutdown(),
  };
}

/** Connects a worker of the given SDK; it is shut down by `cleanup()`. */
export function connectWorker(kind: SdkKind, url: string, options: TestWorkerOptions = {}): TestWorker {
  const worker = kind === 'flint' ? connectFlint(url, options) : connectIii(url, options);
  let down = false;
  const shutdown = worker.shutdown;
  const wrapped: TestWorker = {
    ...worker,
    shutdown: async () => {
      if (down) return;
      down = true;
      await shutdown();
    },
  };
  track(() => wrapped.shutdown());
  return wrapped;
}

/**
 * Waits until the engine lists the worker (its `engine::workers::register` announcement arrived).
 * The SDKs announce after replaying their registrations, so everything registered before the
 * connection opened is in place too. Resolves with the worker's row.
 */
export async function whenAnnounced(engine: Engine, worker: TestWorker, timeoutMs = 3000): Promise<WorkerInfo> {
  return waitFor(async () => (await listWorkers(engine)).find((w) => w.name === worker.name), timeoutMs, `worker ${worker.name} to be announced`);
}

/** Connects a worker, lets `setup` register things before the connection opens, and waits until it is announced. */
export async function startWorker(kind: SdkKind, engine: Engine, setup?: (w: TestWorker) => void, options: TestWorkerOptions = {}): Promise<TestWorker> {
  const worker = connectWorker(kind, engine.bridgeUrl, options);
  setup?.(worker);
  await whenAnnounced(engine, worker);
  return worker;
}

export const SDK_KINDS: SdkKind[] = ['flint', 'iii'];
