/**
 * Connection caps and time-outs: the HTTP module (`max_connections`) and the bridge
 * (`bridge.max_connections`) each serve a bounded number of connections, refusing one more politely
 * (503 `too_many_connections`, `connection: close`; before the handshake on the bridge); the bridge
 * keeps the last tenth of its cap for workers; a connection that never finishes its headers, or sits
 * idle after a request, is closed after a short configured time.
 */
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import type { Engine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { serveRoute } from '../support/http/helpers.js';
import { captureLog } from '../support/log-capture.js';
import { RawClient, upgradeRefusal } from '../support/raw-client.js';
import { waitFor, within } from '../support/util.js';

afterEach(cleanup);

/** A TCP connection to `url`'s host and port, destroyed at clean-up. */
async function connect(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url.replace(/^ws/, 'http'));
  const socket = net.connect({ host: hostname, port: Number(port) });
  track(() => socket.destroy());
  await once(socket, 'connect');
  return socket;
}

/** Collects what `socket` receives; `closed` resolves with all of it once the server closed the connection. */
function received(socket: net.Socket): { text: () => string; closed: Promise<string> } {
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(text)));
  return { text: () => text, closed };
}

/** A keep-alive connection that got one answer to `GET path` (so the server has taken it) and stays open. */
async function held(url: string, path = '/nothing-here'): Promise<net.Socket> {
  const socket = await connect(url);
  const got = received(socket);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`);
  await waitFor(() => got.text().endsWith('}'), 2000, 'an answer on a held connection');
  expect(got.text()).toMatch(/^HTTP\/1\.1 404 /);
  return socket;
}

/** Sends `GET path` on a new connection and reads until the server closes it. */
async function requestToClose(url: string, path = '/nothing-here'): Promise<{ head: string; body: string }> {
  const socket = await connect(url);
  const got = received(socket);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`);
  const text = await within(got.closed, 5000, 'the server to close the connection');
  const end = text.indexOf('\r\n\r\n');
  return { head: text.slice(0, end), body: text.slice(end + 4) };
}

/** The refusal of a WebSocket upgrade to `url` (status, headers, body), within 5 s. */
const refusedUpgrade = (url: string) => within(upgradeRefusal(url), 5000, `a refusal from ${url}`);

const httpUrl = (engine: Engine) => engine.listeners().find((l) => l.name === 'http')?.url as string;
const tooMany = (limit: number) => ({ error: `Too many open connections (limit ${limit}); retry later`, code: 'too_many_connections' });

describe('HTTP module: max_connections', () => {
  it('refuses the connection past the cap with a 503 JSON answer and connection: close; workers still connect; closing one frees a slot', async () => {
    const capture = captureLog('info');
    const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0, max_connections: 3 } }] }, { logger: capture.logger });
    const url = httpUrl(engine);
    const sockets = [await held(url), await held(url), await held(url)];

    const refused = await requestToClose(url);
    expect(refused.head).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.head.toLowerCase()).toContain('connection: close');
    expect(refused.head.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(refused.body)).toEqual(tooMany(3));
    expect(capture.records.filter((r) => r.level === 40 && /refusing connections/.test(r.msg))).toEqual([
      expect.objectContaining({ msg: 'refusing connections: 3 of 3 open (modules[0].config.max_connections of flint-http)', refused: 1 }),
    ]);

    // The bridge has its own cap: a worker connects and serves while HTTP is full.
    const worker = await startWorker('flint', engine, (w) => serveRoute(w, 'limits::hello', { method: 'GET', path: '/hello' }, () => ({ body: 'hi' })));
    expect(await engine.invoke('limits::hello', {})).toEqual({ body: 'hi' });
    expect(worker.kind).toBe('flint');

    sockets[0]?.destroy();
    await waitFor(async () => (await requestToClose(url, '/hello')).head.startsWith('HTTP/1.1 200 '), 3000, 'a slot to be free again');
  });

  it('closes a connection that never finishes its headers after headers_timeout_ms, with a 408', async () => {
    const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0, headers_timeout_ms: 300 } }] });
    const socket = await connect(httpUrl(engine));
    const got = received(socket);
    socket.write('GET /slow HTTP/1.1\r\nHost: test\r\nX-Slow: ');
    expect(await within(got.closed, 5000, 'the stuck connection to be closed')).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes a connection that sends nothing after headers_timeout_ms', async () => {
    const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0, headers_timeout_ms: 300 } }] });
    const got = received(await connect(httpUrl(engine)));
    await within(got.closed, 5000, 'the silent connection to be closed');
  });

  it('closes an idle keep-alive connection after keep_alive_timeout_ms', async () => {
    const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0, keep_alive_timeout_ms: 200 } }] });
    const socket = await held(httpUrl(engine));
    await within(once(socket, 'close'), 5000, 'the idle connection to be closed');
  });

  it('refuses a request_timeout_ms shorter than headers_timeout_ms at config load', async () => {
    await expect(
      startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0, headers_timeout_ms: 5000, request_timeout_ms: 1000 } }] }),
    ).rejects.toThrow('modules[0].config.request_timeout_ms: 1000 must not be shorter than headers_timeout_ms (the headers are part of the request)');
  });
});

describe('bridge: max_connections', () => {
  it('keeps the last tenth of the cap for workers, refuses past it before the handshake, and frees slots as sockets close', async () => {
    const engine = await startTestEngine({ bridge: { max_connections: 10 } });
    // Nine non-worker sockets (/otel) fill the cap up to its reserve; the tenth is refused.
    const otel = await Promise.all(Array.from({ length: 9 }, () => RawClient.connect(engine.bridgeUrl, '/otel')));
    const refusedOtel = await refusedUpgrade(`${engine.bridgeUrl}/otel`);
    expect(refusedOtel.status).toBe(503);
    expect(refusedOtel.headers.connection).toBe('close');
    expect(JSON.parse(refusedOtel.body)).toEqual(tooMany(10));

    // A worker takes the reserved slot; then the bridge is full, for workers too.
    const worker = await RawClient.connect(engine.bridgeUrl);
    await worker.registered();
    const refusedWorker = await refusedUpgrade(engine.bridgeUrl);
    expect(refusedWorker.status).toBe(503);
    expect(JSON.parse(refusedWorker.body)).toEqual(tooMany(10));

    await otel[0]?.close();
    await waitFor(
      async () => {
        const again = await RawClient.connect(engine.bridgeUrl).catch(() => undefined);
        return again && (await again.registered());
      },
      3000,
      'a worker to connect once a slot is free',
    );
  });

  it('a client resetting the connection after its 503 does not take the engine down', async () => {
    const engine = await startTestEngine({ bridge: { max_connections: 1 } });
    await connect(engine.bridgeUrl); // fills the cap
    const socket = await connect(engine.bridgeUrl);
    socket.write(
      'GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    const [first] = (await once(socket, 'data')) as [Buffer];
    expect(first.toString('latin1')).toMatch(/^HTTP\/1\.1 503 /);
    socket.on('error', () => {});
    socket.resetAndDestroy();
    await new Promise((resolve) => setTimeout(resolve, 100)); // the reset reaches the engine
    expect(engine.stats().workers).toBe(0);
  });

  it('closes a connection that never finishes its upgrade request after bridge.handshake_timeout_ms', async () => {
    const engine = await startTestEngine({ bridge: { handshake_timeout_ms: 300 } });
    const socket = await connect(engine.bridgeUrl);
    const got = received(socket);
    socket.write('GET / HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\n');
    expect(await within(got.closed, 5000, 'the stuck upgrade to be closed')).toMatch(/^HTTP\/1\.1 408 /);
  });
});

describe('connection caps and the open-file limit', () => {
  const limitsFile = '/proc/self/limits';
  const openFiles = existsSync(limitsFile) ? Number(/^Max open files\s+(\d+)/m.exec(readFileSync(limitsFile, 'utf8'))?.[1]) : Number.NaN;

  it.skipIf(!Number.isFinite(openFiles))('warns at start when the caps add up to more than the process may open', async () => {
    const capture = captureLog('info');
    await startTestEngine(
      { bridge: { max_connections: openFiles }, modules: [{ name: 'flint-http', config: { port: 0, max_connections: 10 } }] },
      { logger: capture.logger },
    );
    const warning = capture.records.find((r) => r.level === 40 && /connection caps/.test(r.msg));
    expect(warning?.msg).toBe(
      `the connection caps add up to ${openFiles + 10} (bridge.max_connections ${openFiles}, modules[0].config.max_connections of flint-http 10) but this process may open only ${openFiles} files: past that, every new connection fails, workers reconnecting included. Raise the limit (ulimit -n) or lower the caps`,
    );
  });

  it('does not warn when they fit', async () => {
    const capture = captureLog('info');
    await startTestEngine(
      { bridge: { max_connections: 10 }, modules: [{ name: 'flint-http', config: { port: 0, max_connections: 10 } }] },
      { logger: capture.logger },
    );
    expect(capture.records.filter((r) => /connection caps/.test(r.msg))).toEqual([]);
  });
});
