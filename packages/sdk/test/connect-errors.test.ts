/**
 * Connection errors that say what is wrong: a call made while no engine can be reached fails with
 * `not_connected` after the connect wait (naming the URL and the cause), a server that is not a Flint
 * bridge is named as such, and retries that fail the same way log one line, not one per attempt.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FlintInvocationError, type Worker, type WorkerOptions } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { cleanup, deferred, freePort, rejection, sleep, startTestEngine, startWorker, track, waitFor, within } from './support.js';

afterEach(cleanup);

/** A worker whose SDK log lines (every level) are collected. */
function loggedWorker(url: string, options: WorkerOptions = {}): { worker: Worker; lines: string[] } {
  const lines: string[] = [];
  const push = (...args: unknown[]) => lines.push(args.map(String).join(' '));
  const worker = startWorker(url, { reconnect: { initialDelayMs: 20, maxDelayMs: 40 }, log: { warn: push, error: push, debug: push }, ...options });
  return { worker, lines };
}

/** A plain node:http server on `port` (0: any) answering 404 to everything, counting the requests. */
async function plainHttpServer(port = 0): Promise<{ server: Server; url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.statusCode = 404;
    res.end('not a bridge');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  track(() => new Promise((resolve) => server.close(resolve)));
  return { server, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

async function notConnected(call: Promise<unknown>): Promise<FlintInvocationError> {
  const err = await rejection(within(call, 5000, 'the call to fail'));
  expect(err).toBeInstanceOf(FlintInvocationError);
  expect((err as FlintInvocationError).code).toBe('not_connected');
  return err as FlintInvocationError;
}

describe('a worker pointed at a port where nothing listens', () => {
  it('trigger() fails with not_connected after connectTimeoutMs, naming the URL and the refused connection; one log line for all retries', async () => {
    const url = `ws://127.0.0.1:${await freePort()}`;
    const { worker, lines } = loggedWorker(url, { connectTimeoutMs: 400, invocationTimeoutMs: 20_000 });
    const err = await notConnected(worker.trigger({ function_id: 'any::fn', payload: {} }));
    expect(err.message).toMatch(new RegExp(`^Not connected to ${url}: no connection within \\d+ ms \\(connection refused\\)$`));
    expect(err.function_id).toBe('any::fn');
    expect(worker.connectionProblem).toMatchObject({ kind: 'unreachable', errno: 'ECONNREFUSED' });
    // Every 20-40 ms another attempt was refused, yet there is one line.
    await sleep(200);
    expect(lines).toEqual([`[flint] cannot reach the engine at ${url} (connection refused); retrying quietly`]);
  });

  it('a call made during a long backoff brings the next attempt forward, so it succeeds once the engine is back', async () => {
    const port = await freePort();
    const url = `ws://127.0.0.1:${port}`;
    // After the first refused attempt the next one is 20 s away, longer than the call's connect wait.
    const { worker } = loggedWorker(url, { reconnect: { initialDelayMs: 20_000, maxDelayMs: 20_000, jitterFactor: 0 }, connectTimeoutMs: 5000 });
    await waitFor(() => worker.connectionProblem, 3000, 'the first attempt to fail');
    const engine = await startTestEngine({ bridge: { port } });
    const provider = startWorker(engine.bridgeUrl);
    provider.registerFunction('back::fn', () => 'back');
    await provider.waitConnected();
    expect(await within(worker.trigger({ function_id: 'back::fn', payload: {} }), 3000, 'the call to be answered')).toBe('back');
  });

  it('a bridge at its connection cap is named as such (HTTP 503), not as "no Flint bridge"', async () => {
    const engine = await startTestEngine({ bridge: { port: 0, max_connections: 1 } });
    const first = startWorker(engine.bridgeUrl);
    await first.waitConnected();
    const { worker, lines } = loggedWorker(engine.bridgeUrl);
    await waitFor(() => worker.connectionProblem, 3000, 'the refused attempt');
    expect(worker.connectionProblem).toMatchObject({ kind: 'busy', status: 503 });
    expect(lines[0]).toBe(
      `[flint] the engine at ${engine.bridgeUrl} refused the connection for now (HTTP 503: the engine serves as many connections as it allows (bridge.max_connections)); retrying quietly`,
    );
    await first.shutdown();
    await within(worker.waitConnected(), 3000, 'the worker to connect once a slot is free');
  });

  it('with reconnecting off, a queued call fails at once when the connection fails, and later calls too', async () => {
    const url = `ws://127.0.0.1:${await freePort()}`;
    const { worker, lines } = loggedWorker(url, { reconnect: { maxRetries: 2, initialDelayMs: 20, maxDelayMs: 40 } });
    const queued = worker.trigger({ function_id: 'any::fn', payload: {} });
    const failed = new Promise<void>((resolve) => worker.once('failed', () => resolve()));
    const err = await notConnected(queued);
    await failed;
    expect(err.message).toBe(`Not connected to ${url}: gave up after 2 reconnect attempts (connection refused)`);
    expect((await notConnected(worker.trigger({ function_id: 'any::fn', payload: {} }))).message).toBe(err.message);
    expect(lines).toEqual([
      `[flint] cannot reach the engine at ${url} (connection refused); retrying quietly`,
      `[flint] giving up on ${url} after 2 reconnect attempts`,
    ]);
  });
});

describe('a worker pointed at a server that is not a Flint bridge', () => {
  it('logs "no Flint bridge at <URL> (HTTP 404)" once while it keeps retrying, and calls fail with not_connected saying so', async () => {
    const { url, requests } = await plainHttpServer();
    const { worker, lines } = loggedWorker(url, { connectTimeoutMs: 400 });
    const err = await notConnected(worker.trigger({ function_id: 'any::fn', payload: {} }));
    expect(err.message).toMatch(
      new RegExp(`^Not connected to ${url}: no connection within \\d+ ms \\(HTTP 404: not a Flint bridge — the bridge listens on 49134 by default\\)$`),
    );
    expect(worker.connectionProblem).toMatchObject({ kind: 'not_a_bridge', status: 404 });
    // It keeps retrying (quietly).
    const seen = requests();
    await waitFor(() => requests() >= seen + 3, 2000, 'more attempts');
    expect(lines).toEqual([`[flint] no Flint bridge at ${url} (HTTP 404) — the bridge listens on 49134 by default; retrying quietly`]);
  });

  it("the engine's HTTP port is not the bridge either", async () => {
    const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0 } }] });
    const base = engine.listeners().find((l) => l.name === 'http')?.url;
    if (!base) throw new Error('the engine has no http listener');
    const httpUrl = base.replace(/^http/, 'ws');
    const { worker, lines } = loggedWorker(httpUrl);
    await waitFor(() => worker.connectionProblem, 2000, 'the failed attempt');
    expect(worker.connectionProblem).toMatchObject({ kind: 'not_a_bridge', status: 404 });
    expect(lines).toEqual([`[flint] no Flint bridge at ${httpUrl} (HTTP 404) — the bridge listens on 49134 by default; retrying quietly`]);
  });

  it('logs again when the situation changes: refused, then a plain HTTP server on that port', async () => {
    const port = await freePort();
    const url = `ws://127.0.0.1:${port}`;
    const { worker, lines } = loggedWorker(url);
    await waitFor(() => worker.connectionProblem, 2000, 'a refused attempt');
    await sleep(100);
    const { requests } = await plainHttpServer(port);
    await waitFor(() => requests() >= 3, 2000, 'attempts against the HTTP server');
    expect(lines).toEqual([
      `[flint] cannot reach the engine at ${url} (connection refused); retrying quietly`,
      `[flint] no Flint bridge at ${url} (HTTP 404) — the bridge listens on 49134 by default; retrying quietly`,
    ]);
  });
});

describe('a worker whose engine went away', () => {
  it('logs one line per outage, calls made meanwhile wait connectTimeoutMs for it, and a full queue fails at once', async () => {
    const first = await startTestEngine();
    const url = first.bridgeUrl;
    const { worker, lines } = loggedWorker(url, { connectTimeoutMs: 300, maxQueuedFrames: 2 });
    await worker.waitConnected();
    await first.stop();
    await waitFor(() => !worker.connected, 2000, 'the worker to notice');

    // Two calls queue; the queue is full for a third. After the wait they fail and leave the queue.
    const a = worker.trigger({ function_id: 'any::fn', payload: 1 });
    const b = worker.trigger({ function_id: 'any::fn', payload: 2 });
    const full = await notConnected(worker.trigger({ function_id: 'any::fn', payload: 3 }));
    expect(full.message).toBe(`Not connected to ${url}: the connection is down and 2 frames are already queued (maxQueuedFrames)`);
    for (const call of [a, b]) expect((await notConnected(call)).message).toMatch(/no connection within \d+ ms \(connection refused\)$/);
    // The calls that gave up left the queue: a new call is queued again instead of failing at once.
    expect((await notConnected(worker.trigger({ function_id: 'any::fn', payload: 4 }))).message).toMatch(/no connection within/);

    // The engine is back: calls work, and the next outage is logged again.
    const port = Number(new URL(url).port);
    const second = await startTestEngine({ bridge: { port } });
    const provider = startWorker(second.bridgeUrl);
    provider.registerFunction('any::fn', (n: number) => n * 10);
    await provider.waitConnected();
    await within(worker.waitConnected(), 3000, 'the worker to reconnect');
    await waitFor(() => second.listFunctions().some((f) => f.function_id === 'any::fn'), 2000, 'any::fn');
    expect(await worker.trigger({ function_id: 'any::fn', payload: 5 })).toBe(50);
    await second.stop();
    await waitFor(() => lines.length === 2, 2000, 'the second outage to be logged');
    const refused = `[flint] cannot reach the engine at ${url} (connection refused); retrying quietly`;
    expect(lines).toEqual([refused, refused]);
  });
});

describe('a call in flight when the connection is lost for good', () => {
  it('with reconnecting off, a call already sent fails at once with not_connected instead of at its time-out', async () => {
    // A bridge that takes the call and then drops the connection without answering (an engine killed).
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    track(() => new Promise((resolve) => server.close(resolve)));
    const received = deferred();
    server.on('connection', (socket) => {
      socket.on('message', (raw) => {
        if (JSON.parse(raw.toString()).type !== 'invokefunction') return;
        received.resolve();
        socket.terminate();
      });
    });
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const caller = startWorker(url, { reconnect: { maxRetries: 0 }, invocationTimeoutMs: 30_000, announce: false });
    await caller.waitConnected();
    const began = Date.now();
    const call = caller.trigger({ function_id: 'slow::never', payload: {} });
    await received.promise;
    const err = await notConnected(call);
    expect(Date.now() - began).toBeLessThan(5000);
    expect(err.message).toContain('the call was sent but the connection was lost before its answer came');
  });
});
