/**
 * Module API: `ctx.listen` (a module's own server: bound, listed, closed at stop; a taken port fails
 * start-up cleanly) and `ctx.webSocketServer` (payload cap with its close reason, keep-alive, 1001 at stop).
 */
import { type Server, createServer } from 'node:http';
import net from 'node:net';
import { type BoundListener, type EngineWebSocketServer, createEngine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cleanup, track } from '../support/cleanup.js';
import { sleep, waitFor, within } from '../support/util.js';
import { fakeModule, startWithModules } from './fake-module.js';

afterEach(cleanup);

/** `connected`, or the error code of a refused connection. */
function connectOutcome(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** Binds a plain server to `port` (proving it is free) and closes it again. */
async function bindAndRelease(port: number): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const got = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return got;
}

describe('ctx.listen', () => {
  it('binds the module server on a free port, lists it in engine.listeners(), and closes it at stop', async () => {
    let bound: BoundListener | undefined;
    const def = fakeModule('test-fake', {
      start: async (ctx) => {
        const server = createServer((req, res) => res.end(`hi from ${req.url}`));
        bound = await ctx.listen({ name: 'fake-http', host: '127.0.0.1', port: 0, server });
      },
    });
    const engine = await startWithModules([def], [{ name: 'test-fake' }]);
    const port = bound?.port ?? 0;
    expect(port).toBeGreaterThan(0);
    expect(bound).toEqual({ name: 'fake-http', host: '127.0.0.1', port, url: `http://127.0.0.1:${port}` });
    expect(engine.listeners()).toEqual([
      { name: 'bridge', url: engine.bridgeUrl },
      { name: 'fake-http', url: `http://127.0.0.1:${port}` },
    ]);
    // A keep-alive connection stays open after this request; it must not hold the stop up.
    const res = await fetch(`http://127.0.0.1:${port}/ping`);
    expect(await res.text()).toBe('hi from /ping');

    await within(engine.stop(), 3000, 'engine.stop()');
    expect(await connectOutcome(port)).toBe('ECONNREFUSED');
  });

  it('a listener on a taken port makes engine.start() reject with EADDRINUSE; the engine stops and frees the ports it held', async () => {
    const order: string[] = [];
    let first: BoundListener | undefined;
    let firstServer: Server | undefined;
    const a = fakeModule('test-a', {
      start: async (ctx) => {
        firstServer = createServer((_req, res) => res.end('a'));
        first = await ctx.listen({ name: 'a', host: '127.0.0.1', port: 0, server: firstServer });
      },
      stop: () => void order.push('test-a stop'),
    });
    const b = fakeModule('test-b', {
      start: async (ctx) => {
        order.push('test-b start');
        await ctx.listen({ name: 'b', host: '127.0.0.1', port: first?.port ?? 0, server: createServer() });
        order.push('test-b listening');
      },
      stop: () => void order.push('test-b stop'),
    });
    const engine = createEngine({
      modules: [a, b],
      config: { bridge: { port: 0 }, log: { level: 'silent' }, modules: [{ name: 'test-a' }, { name: 'test-b' }] },
    });
    track(() => engine.stop());
    const error = await engine.start().then(
      () => undefined,
      (err: unknown) => err as NodeJS.ErrnoException,
    );
    expect(error?.code).toBe('EADDRINUSE');
    expect(order).toEqual(['test-b start', 'test-b stop', 'test-a stop']);
    const port = first?.port ?? 0;
    expect(port).toBeGreaterThan(0);
    expect(firstServer?.listening).toBe(false);
    expect(await connectOutcome(port)).toBe('ECONNREFUSED');
    expect(await bindAndRelease(port)).toBe(port);
    expect(await connectOutcome(Number(new URL(engine.bridgeUrl).port))).toBe('ECONNREFUSED');
    expect(await engine.stop()).toEqual({ holdups: [] });
  });
});

describe('ctx.webSocketServer', () => {
  const LIMIT = 1024;

  /** A module with its own http server whose upgrades go to an engine WebSocket server (`/live` sockets get keepAlive). */
  async function startWsEngine() {
    const state: { listener?: BoundListener; wss?: EngineWebSocketServer; errors: string[] } = { errors: [] };
    const def = fakeModule('test-fake', {
      start: async (ctx) => {
        const wss = ctx.webSocketServer({ maxPayloadBytes: LIMIT, limitSetting: 'fake.max_frame_bytes', pingIntervalMs: 100 });
        const server = createServer((_req, res) => res.writeHead(426).end());
        server.on('upgrade', (req, socket, head) =>
          wss.handleUpgrade(req, socket, head, (ws) => {
            if (req.url === '/live') wss.keepAlive(ws);
            // Without a listener, ws's 'error' (e.g. an oversized frame) would be thrown in the engine's process.
            ws.on('error', (err) => state.errors.push(err.message));
            ws.on('message', (data) => ws.send(`echo:${data.toString().length}`));
          }),
        );
        state.wss = wss;
        state.listener = await ctx.listen({ name: 'fake-ws', host: '127.0.0.1', port: 0, server, scheme: 'ws' });
      },
    });
    const engine = await startWithModules([def], [{ name: 'test-fake' }]);
    return { engine, url: state.listener?.url ?? '', wss: state.wss as EngineWebSocketServer, errors: state.errors };
  }

  interface Client {
    ws: WebSocket;
    pings: number;
    messages: string[];
    closed: Promise<{ code: number; reason: string }>;
  }

  async function open(url: string, autoPong = true): Promise<Client> {
    const ws = new WebSocket(url, { autoPong, perMessageDeflate: false });
    const client: Client = {
      ws,
      pings: 0,
      messages: [],
      closed: new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }))),
    };
    ws.on('ping', () => client.pings++);
    ws.on('message', (data) => client.messages.push(data.toString()));
    ws.on('error', () => {});
    track(() => ws.terminate());
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return client;
  }

  it('listens with the ws scheme and closes a socket sending a frame over the cap with 1009 naming the limit setting', async () => {
    const { engine, url, errors } = await startWsEngine();
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(engine.listeners().map((l) => l.name)).toEqual(['bridge', 'fake-ws']);
    const client = await open(`${url}/`);
    client.ws.send('x'.repeat(LIMIT));
    await waitFor(() => client.messages.length === 1, 2000, 'the echo of a frame at the cap');
    expect(client.messages).toEqual([`echo:${LIMIT}`]);
    client.ws.send('x'.repeat(LIMIT + 1));
    expect(await within(client.closed, 2000, 'the close')).toEqual({ code: 1009, reason: `frame exceeds fake.max_frame_bytes (${LIMIT} bytes)` });
    expect(errors).toEqual(['Max payload size exceeded']);
  });

  it('keepAlive pings a socket and drops it when it does not answer; sockets that answer (or are not kept alive) stay', async () => {
    const { url, wss } = await startWsEngine();
    const silent = await open(`${url}/live`, false);
    const answering = await open(`${url}/live`);
    const untracked = await open(`${url}/`, false);
    const closed = await within(silent.closed, 2000, 'the silent socket to be dropped');
    expect(closed.code).toBe(1006); // terminated, no close frame
    expect(silent.pings).toBeGreaterThanOrEqual(1);
    await sleep(350); // a few more ping rounds
    expect(answering.pings).toBeGreaterThanOrEqual(3);
    expect(answering.ws.readyState).toBe(WebSocket.OPEN);
    expect(untracked.ws.readyState).toBe(WebSocket.OPEN);
    expect(untracked.pings).toBe(0);
    expect(wss.clients.size).toBe(2);
  });

  it('closes open sockets with 1001 at engine stop', async () => {
    const { engine, url, wss } = await startWsEngine();
    const plain = await open(`${url}/`);
    const live = await open(`${url}/live`);
    expect(wss.clients.size).toBe(2);
    await within(engine.stop(), 3000, 'engine.stop()');
    const expected = { code: 1001, reason: 'engine shutting down' };
    expect(await within(plain.closed, 1000, 'plain close')).toEqual(expected);
    expect(await within(live.closed, 1000, 'live close')).toEqual(expected);
    expect(wss.clients.size).toBe(0);
  });
});
