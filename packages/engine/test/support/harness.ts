/**
 * Shared helpers for the engine integration tests: start/stop engines on ephemeral ports, a raw
 * WebSocket client that speaks the bridge protocol frame by frame, and one small adapter over the
 * two worker SDKs (`@flint/sdk` and `iii-sdk@0.11.6`) so a test can run against both.
 *
 * Everything a helper starts is remembered and torn down by `cleanup()` (call it in afterEach).
 */
import { randomUUID } from 'node:crypto';
import { type Engine, type EngineOptions, startEngine } from '@flint/engine';
import { EngineFunctions, type FunctionInfo, type TriggerInfo, type WorkerInfo } from '@flint/protocol';
import { type HandlerContext, registerWorker as registerFlintWorker } from '@flint/sdk';
import { registerWorker as registerIiiWorker } from 'iii-sdk';
import WebSocket from 'ws';

// iii-sdk opens an OTel socket unless told otherwise; only the /otel test turns it on explicitly.
process.env.OTEL_ENABLED = 'false';

// ---------------------------------------------------------------------------------------------
// Waiting
// ---------------------------------------------------------------------------------------------

/** Polls `predicate` until it returns a truthy value (which is returned) or the time is up. */
export async function waitFor<T>(predicate: () => T | Promise<T>, timeoutMs = 2000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const suffix = lastError ? ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${suffix}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A promise with its resolver exposed; used as a gate a handler waits on. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (err: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Rejects when `promise` takes longer than `ms` (for awaiting things that may hang on a bug). */
export function within<T>(promise: Promise<T>, ms: number, what = 'operation'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** The settled outcome of a promise, so a test can assert on a rejection's fields. */
export async function outcome<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: { code?: string; message: string } }> {
  try {
    return { ok: true, value: await promise };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { ok: false, error: { code: e?.code, message: String(e?.message ?? err) } };
  }
}

export const uid = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

// ---------------------------------------------------------------------------------------------
// Clean-up registry
// ---------------------------------------------------------------------------------------------

const disposers: (() => Promise<void> | void)[] = [];

/** Remembers something to undo in `cleanup()` (run in reverse order). */
export function track(dispose: () => Promise<void> | void): void {
  disposers.push(dispose);
}

/** Shuts down every worker, raw client and engine started through these helpers. */
export async function cleanup(): Promise<void> {
  const errors: unknown[] = [];
  while (disposers.length > 0) {
    const dispose = disposers.pop() as () => Promise<void> | void;
    try {
      await within(Promise.resolve(dispose()), 5000, 'clean-up step');
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw errors[0];
}

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
// Raw protocol client
// ---------------------------------------------------------------------------------------------

// biome-ignore lint/suspicious/noExplicitAny: frames are arbitrary JSON
export type Frame = Record<string, any>;

interface FrameWaiter {
  match: (frame: Frame) => boolean;
  from: number;
  resolve: (frame: Frame) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * A bare WebSocket client on the bridge: records every JSON frame it receives, can wait for a
 * particular one, and can serve functions by answering `invokefunction` frames itself.
 */
export class RawClient {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly waiters = new Set<FrameWaiter>();
  private readonly handlers = new Map<string, (data: unknown, frame: Frame) => unknown>();
  isClosed = false;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => {
      ws.once('close', (code, reason) => {
        this.isClosed = true;
        resolve({ code, reason: reason.toString() });
      });
    });
    ws.on('message', (data) => {
      let frame: Frame;
      try {
        frame = JSON.parse(data.toString()) as Frame;
      } catch {
        frame = { type: '<non-json>', raw: data.toString() };
      }
      this.frames.push(frame);
      this.onFrame(frame);
      const index = this.frames.length - 1;
      for (const w of [...this.waiters]) {
        if (index >= w.from && w.match(frame)) {
          this.waiters.delete(w);
          clearTimeout(w.timer);
          w.resolve(frame);
        }
      }
    });
    ws.on('error', () => {});
  }

  /** Opens a connection to `baseUrl` + `path` and waits until it is open. */
  static async connect(baseUrl: string, path = '/'): Promise<RawClient> {
    const ws = new WebSocket(baseUrl.replace(/\/+$/, '') + path, { perMessageDeflate: false });
    const client = new RawClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    track(() => client.close());
    return client;
  }

  get workerId(): string | undefined {
    return this.frames.find((f) => f.type === 'workerregistered')?.worker_id as string | undefined;
  }

  send(frame: Frame): void {
    this.ws.send(JSON.stringify(frame));
  }

  sendBinary(data: Buffer): void {
    this.ws.send(data, { binary: true });
  }

  /** The first frame (at index >= `from`) matching `match`, already received or still to come. */
  waitFrame(match: (frame: Frame) => boolean, timeoutMs = 2000, from = 0): Promise<Frame> {
    for (let i = from; i < this.frames.length; i++) {
      const f = this.frames[i] as Frame;
      if (match(f)) return Promise.resolve(f);
    }
    return new Promise((resolve, reject) => {
      const waiter: FrameWaiter = {
        match,
        from,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(new Error(`no matching frame within ${timeoutMs} ms; received: ${JSON.stringify(this.frames.map((f) => f.type))}`));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Sends a sync invocation and resolves with its `invocationresult` frame. */
  invoke(functionId: string, data?: unknown, extra: Frame = {}, timeoutMs = 3000): Promise<Frame> {
    const invocationId = randomUUID();
    const frame: Frame = { type: 'invokefunction', invocation_id: invocationId, function_id: functionId, ...extra };
    if (data !== undefined) frame.data = data;
    this.send(frame);
    return this.waitFrame((f) => f.type === 'invocationresult' && f.invocation_id === invocationId, timeoutMs);
  }

  /** Sends a JSON ping and waits for the next pong: once it arrives, the engine has handled every earlier frame. */
  async roundTrip(timeoutMs = 2000): Promise<void> {
    const from = this.frames.length;
    this.send({ type: 'ping' });
    await this.waitFrame((f) => f.type === 'pong', timeoutMs, from);
  }

  /** Registers a function served by this client: `handler`'s value (or throw) becomes the result. */
  async serve(functionId: string, handler: (data: unknown, frame: Frame) => unknown, options: Frame = {}): Promise<void> {
    this.handlers.set(functionId, handler);
    this.send({ type: 'registerfunction', id: functionId, ...options });
    await this.roundTrip();
  }

  /** Frames of `type` received so far. */
  ofType(type: string): Frame[] {
    return this.frames.filter((f) => f.type === type);
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000, 'test done');
    const timer = setTimeout(() => this.ws.terminate(), 1000);
    await this.closed;
    clearTimeout(timer);
  }

  private onFrame(frame: Frame): void {
    if (frame.type !== 'invokefunction') return;
    const handler = this.handlers.get(frame.function_id as string);
    if (!handler) return;
    const reply = (body: Frame) => {
      if (typeof frame.invocation_id === 'string' && frame.invocation_id !== '' && !this.isClosed) {
        this.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, ...body });
      }
    };
    Promise.resolve()
      .then(() => handler(frame.data, frame))
      .then(
        (result) => reply({ result }),
        (err: unknown) => reply({ error: { code: 'invocation_failed', message: err instanceof Error ? err.message : String(err) } }),
      );
  }
}

/** Opens a WebSocket that the server is expected to refuse; resolves with the HTTP status of the refusal. */
export function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      ws.terminate();
      reject(new Error(`the upgrade to ${url} was accepted`));
    });
    ws.on('error', () => {});
  });
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
}

const quiet = { warn: () => {}, error: () => {}, debug: () => {} };

function connectFlint(url: string, options: TestWorkerOptions): TestWorker {
  const name = options.name ?? uid('flint');
  const w = registerFlintWorker(url, {
    workerName: name,
    invocationTimeoutMs: options.invocationTimeoutMs,
    reconnect: { initialDelayMs: 50, maxDelayMs: 200, ...options.reconnect },
    log: quiet,
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
