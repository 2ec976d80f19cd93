/**
 * Small helpers every test folder uses: waiting (`waitFor`, `sleep`, `within`, `deferred`, `outcome`),
 * unique names (`uid`), a free TCP port (`freePort`) and `rejectsWith` (a FlintError of a code). No side effects on import.
 */

import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { FlintError } from '@flint/protocol';
import { expect } from 'vitest';

export const sleep = (ms: number): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` every `intervalMs` until it returns a truthy value (which is returned) or `timeoutMs`
 * passes; then throws, naming `what` (a string or a function evaluated at that moment) and the last error
 * `check` threw, if any.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 2000,
  what: string | (() => string) = 'condition',
  intervalMs = 10,
): Promise<NonNullable<T>> {
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
      const label = typeof what === 'function' ? what() : what;
      const suffix = lastError === undefined ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}${suffix}`);
    }
    await sleep(intervalMs);
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

/** `prefix-` and 8 random hex digits: a name no other test uses. */
export const uid = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/** A port that was free a moment ago (bind port 0, read it, release it). */
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

/** Expects `promise` to reject with a FlintError of `code`; returns the error. */
export async function rejectsWith(promise: Promise<unknown>, code: string): Promise<FlintError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected a rejection with ${code}, but the call succeeded`);
    },
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(FlintError);
  expect((error as FlintError).code, (error as Error).message).toBe(code);
  return error as FlintError;
}

/** The FlintError `fn` throws (fails the test when it throws something else, or nothing). */
export function thrownBy(fn: () => unknown): FlintError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(FlintError);
    return err as FlintError;
  }
  throw new Error('expected a FlintError, nothing was thrown');
}

/** mulberry32: a small seeded generator, so that a randomised test can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
