/**
 * Helpers for the SDK tests: engines on ephemeral ports, workers with a silent log, waiting, free
 * ports. Everything started is torn down after each test (`track` + `cleanup`, call it in afterEach).
 *
 * Kept in this package on purpose: a relative import of packages/engine/test/support would cross a
 * package boundary (dependency-cruiser rule no-relative-import-across-packages).
 */
import net from 'node:net';
import { type Engine, startEngine } from '@flint/engine';
import { type FlintInvocationError, type Worker, type WorkerOptions, registerWorker } from '@flint/sdk';

const disposers: (() => unknown)[] = [];

/** Remembers `dispose` for cleanup() (last in, first out). */
export const track = (dispose: () => unknown): void => {
  disposers.push(dispose);
};

/** Disposes of everything tracked; rethrows the first failure. */
export async function cleanup(): Promise<void> {
  const errors: unknown[] = [];
  while (disposers.length > 0) {
    try {
      await (disposers.pop() as () => unknown)();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw errors[0];
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor<T>(predicate: () => T | Promise<T>, timeoutMs = 2000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** Rejects when `promise` takes longer than `ms` (for awaiting things that hang on a bug). */
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

/** A promise with its resolver exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/** The rejection of `promise` (fails when it resolves); typed as a failed call's error by default. */
export async function rejection<E = FlintInvocationError>(promise: Promise<unknown>): Promise<E> {
  const result = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in result)) throw new Error(`expected a rejection, got ${JSON.stringify(result.value)}`);
  return result.error as E;
}

/** A port that was free a moment ago (bind port 0, read it, release it): nothing listens there. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts an engine on ephemeral ports with silent logs; `config` is merged over that base. */
export async function startTestEngine(config: Record<string, unknown> = {}): Promise<Engine> {
  const engine = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, ...config } });
  track(() => engine.stop());
  return engine;
}

export const quiet = { warn: () => {}, error: () => {}, debug: () => {} };

/** A worker with a silent log and fast reconnects, shut down after the test. */
export function startWorker(url: string, options: WorkerOptions = {}): Worker {
  const w = registerWorker(url, {
    workerName: `sdk-${Math.random().toString(36).slice(2, 8)}`,
    reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    log: quiet,
    ...options,
  });
  track(() => w.shutdown());
  return w;
}
