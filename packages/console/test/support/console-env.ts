/**
 * A real Flint engine with a console pointed at it, for the console's tests (the API suite and the
 * browser tests). Everything runs in this process on ephemeral ports.
 *
 * ```ts
 * const env = await startConsoleEnv();                     // engine + console, bridge connected
 * const w = await env.worker((w) => w.registerFunction('demo::hi', () => 'hi'));
 * const res = await env.api('POST', '/_console/invoke', { function_id: 'demo::hi' });
 * // res.status === 200, res.body.result === 'hi'
 * await env.close();                                       // console, workers, engine
 * ```
 *
 * - The engine loads flint-http, flint-state, flint-stream, flint-queue (builtin in memory), flint-cron
 *   and flint-pubsub, every listener on port 0, logs silent.
 * - The console listens on 127.0.0.1 port 0 and is resolved with `resolveOptions` (so its checks apply);
 *   `startConsoleEnv` resolves once its bridge is connected and its change triggers are registered (so
 *   live events flow from then on).
 * - `env.api` sends `x-flint-console: 1` on every non-GET call and, when the console has a token, the
 *   token as `Authorization: Bearer` (both can be turned off per call).
 * - With `cluster` (see `clusterConfig` in ./services.ts) the engine joins a cluster on NATS; start the
 *   other engines with `startTestEngine(modules, {cluster})` and connect workers to them with
 *   `env.worker(setup, options, otherEngine)`.
 *
 * Lower-level pieces for other set-ups: `consoleFlagsFor(engine)` (the console flags that point at an
 * engine's real ports), `startTestConsole(flags)` (a console with quiet logs), `closedPort()`,
 * `waitFor`, `uid`, `sleep`.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { type ConsoleFlags, type ConsoleServer, MUTATION_HEADER, resolveOptions, startConsole } from '@flint/console';
import { type Engine, startEngine } from '@flint/engine';
import { EngineFunctions, type TriggerInfo, type Worker, type WorkerInfo, type WorkerOptions, registerWorker } from '@flint/sdk';

/** Logs that say nothing (the engine's are silenced by config). */
export const quietLog = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `prefix-` and 8 random hex digits: a name no other test uses. */
export const uid = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/** Polls `check` every 10 ms until it returns a truthy value (returned), or throws after `timeoutMs` naming `what` and the last error. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 3000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const suffix = lastError === undefined ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${suffix}`);
    }
    await sleep(10);
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface EngineModuleConfig {
  name: string;
  config?: Record<string, unknown>;
}

/** The modules the console env's engine loads (every listener on port 0); `queue` is merged into flint-queue's config. */
export function consoleTestModules(queue: Record<string, unknown> = {}): EngineModuleConfig[] {
  return [
    { name: 'flint-http', config: { port: 0 } },
    { name: 'flint-state' },
    { name: 'flint-stream', config: { port: 0 } },
    { name: 'flint-queue', config: { adapter: { name: 'builtin', config: { store_method: 'in_memory' } }, ...queue } },
    { name: 'flint-cron' },
    { name: 'flint-pubsub' },
  ];
}

/**
 * Starts an engine with `modules` (default `consoleTestModules()`), its bridge on port 0 and silent logs;
 * `config` adds top-level settings (e.g. `{cluster: clusterConfig(name, 'b')}`).
 */
export function startTestEngine(modules: EngineModuleConfig[] = consoleTestModules(), config: Record<string, unknown> = {}): Promise<Engine> {
  return startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, modules, ...config } });
}

const portOf = (engine: Engine, name: string): number => {
  const listener = engine.listeners().find((l) => l.name === name);
  if (!listener) throw new Error(`the engine has no ${name} listener`);
  return Number(new URL(listener.url).port);
};

/** Console flags pointing at the engine's actual bridge, HTTP and stream ports, on port 0, without OTel spans. */
export function consoleFlagsFor(engine: Engine): ConsoleFlags {
  return {
    port: 0,
    host: '127.0.0.1',
    engineHost: '127.0.0.1',
    bridgePort: portOf(engine, 'bridge'),
    enginePort: portOf(engine, 'http'),
    wsPort: portOf(engine, 'stream'),
    noOtel: true,
  };
}

/** Starts a console from `flags` (through `resolveOptions`, environment ignored) with quiet logs. */
export function startTestConsole(flags: ConsoleFlags): Promise<ConsoleServer> {
  return startConsole(resolveOptions(flags, {}), quietLog);
}

/** Waits until the console's bridge is connected and the engine holds its change triggers (functions, workers, triggers, state). */
export async function whenConsoleReady(engine: Engine, server: ConsoleServer, timeoutMs = 5000): Promise<void> {
  await waitFor(() => server.link.bridgeState === 'connected', timeoutMs, 'the console bridge to connect');
  await waitFor(
    async () => {
      const { triggers } = (await engine.invoke(EngineFunctions.LIST_TRIGGERS, { include_internal: true })) as { triggers: TriggerInfo[] };
      const mine = triggers.filter((t) => t.function_id.startsWith('flint-console.') && t.status === 'active');
      return mine.length >= 4;
    },
    timeoutMs,
    "the console's change triggers",
  );
}

/** A JSON value of any shape (tests assert on it). */
// biome-ignore lint/suspicious/noExplicitAny: bodies are arbitrary JSON; tests assert on their shape
export type Json = any;

/** What `env.api` answers: the status, headers and body (parsed JSON, else text). */
export interface ApiResult<T = Json> {
  status: number;
  headers: Headers;
  body: T;
}

export interface ApiCallOptions {
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Send `x-flint-console: 1` (default: on every non-GET call). */
  mutationHeader?: boolean;
  /** Send the console token as a bearer token when the console has one (default true). */
  auth?: boolean;
  /** A body sent as it is, instead of `JSON.stringify(body)`. */
  raw?: string | Buffer;
}

export interface ConsoleEnv {
  readonly engine: Engine;
  readonly console: ConsoleServer;
  /** The console's base URL, `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The console's token, if it was started with one. */
  readonly token: string | undefined;
  /** Calls the console: `path` starts with `/`; `body` is sent as JSON when not undefined. */
  api<T = Json>(method: string, path: string, body?: unknown, options?: ApiCallOptions): Promise<ApiResult<T>>;
  /**
   * Connects a worker to the engine (a unique name unless given), lets `setup` register things before
   * it connects, and resolves once the engine lists it. It is shut down by `close()`. With `on`, it
   * connects to that engine instead (another engine of the cluster), and resolves once the console's
   * engine lists it.
   */
  worker(setup?: (w: Worker) => void, options?: WorkerOptions, on?: Engine): Promise<Worker>;
  /** Stops the engine (the console keeps running and reconnecting); `close()` does not stop it again. */
  stopEngine(): Promise<void>;
  /** Closes the console, shuts the workers down and stops the engine. */
  close(): Promise<void>;
}

export interface ConsoleEnvOptions {
  /** The console's token (`--token`, at least 16 characters). */
  token?: string;
  /** flint-queue config merged over the builtin in-memory adapter (e.g. `{defaults: {max_retries: 1}}`). */
  queue?: Record<string, unknown>;
  /** Modules loaded after the standard ones (e.g. flint-observability). */
  extraModules?: EngineModuleConfig[];
  /** Console flags over `consoleFlagsFor(engine)`. */
  consoleFlags?: ConsoleFlags;
  /** The engine's `cluster` config (see `clusterConfig` in ./services.js). */
  cluster?: Record<string, unknown>;
}

/** Starts an engine and a console connected to it; see the top of this file. */
export async function startConsoleEnv(options: ConsoleEnvOptions = {}): Promise<ConsoleEnv> {
  const engine = await startTestEngine(
    [...consoleTestModules(options.queue), ...(options.extraModules ?? [])],
    options.cluster ? { cluster: options.cluster } : {},
  );
  let server: ConsoleServer;
  try {
    server = await startTestConsole({ ...consoleFlagsFor(engine), token: options.token, ...options.consoleFlags });
  } catch (err) {
    await engine.stop();
    throw err;
  }
  const workers: Worker[] = [];
  let engineStopped = false;
  const env: ConsoleEnv = {
    engine,
    console: server,
    url: server.url,
    token: options.token,
    async api(method, path, body, call = {}) {
      const headers: Record<string, string> = { ...call.headers };
      if (call.mutationHeader ?? method !== 'GET') headers[MUTATION_HEADER] = '1';
      if (options.token !== undefined && call.auth !== false) headers.authorization = `Bearer ${options.token}`;
      let payload: string | Buffer | undefined = call.raw;
      if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
      if (payload !== undefined) headers['content-type'] ??= 'application/json';
      const res = await fetch(`${server.url}${path}`, { method, headers, body: payload, redirect: 'manual' });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
      return { status: res.status, headers: res.headers, body: parsed as never };
    },
    async worker(setup, workerOptions = {}, on = engine) {
      const name = workerOptions.workerName ?? uid('worker');
      const w = registerWorker(on.bridgeUrl, { reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, log: quietLog, ...workerOptions, workerName: name });
      workers.push(w);
      setup?.(w);
      await waitFor(
        async () => {
          const { workers: listed } = (await engine.invoke(EngineFunctions.LIST_WORKERS, {})) as { workers: WorkerInfo[] };
          return listed.some((l) => l.name === name);
        },
        5000,
        `worker ${name} to be announced`,
      );
      return w;
    },
    async stopEngine() {
      engineStopped = true;
      await engine.stop();
    },
    async close() {
      await server.close();
      await Promise.all(workers.map((w) => w.shutdown()));
      if (!engineStopped) await env.stopEngine();
    },
  };
  try {
    await whenConsoleReady(engine, server);
  } catch (err) {
    await env.close();
    throw err;
  }
  return env;
}
