import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { flowRoutes } from './api/flow.js';
import { httpProbeRoutes } from './api/http-probe.js';
import { invokeRoutes } from './api/invoke.js';
import { logsRoutes } from './api/logs.js';
import { metricsRoutes } from './api/metrics.js';
import { queueRoutes } from './api/queues.js';
import { registryRoutes } from './api/registry.js';
import { stateRoutes } from './api/states.js';
import { consoleConfig, statusRoutes } from './api/status.js';
import { streamsRoutes } from './api/streams.js';
import { tracesRoutes } from './api/traces.js';
import { EngineLink } from './engine-link.js';
import { ApiFailure, engineFailure } from './http/failure.js';
import { sendFailure, sendJson } from './http/json.js';
import { Router, bodyReader } from './http/router.js';
import { Security, checkOrigin, requireMutationHeader } from './http/security.js';
import { DEFAULT_WEB_ROOT, StaticFiles } from './http/static.js';
import { writeUpgradeRefusal } from './http/upgrade-refusal.js';
import { LiveHub } from './live.js';
import { metricsHistoryOf } from './metrics-history.js';
import type { ConsoleOptions } from './options.js';
import { StreamProxy } from './stream-proxy.js';

/** Where a console log line goes; default `console`. */
export type ConsoleLog = Pick<Console, 'info' | 'warn' | 'error' | 'debug'>;

/** A running console. */
export interface ConsoleServer {
  /** `http://host:port` (valid after start). */
  readonly url: string;
  readonly port: number;
  readonly link: EngineLink;
  close(): Promise<void>;
}

const API_PREFIX = '/_console/';

/** Whether the browser reached the console over HTTPS (a TLS proxy in front says so): the session cookie is then Secure. */
const behindTls = (req: IncomingMessage) => req.headers['x-forwarded-proto'] === 'https';

/**
 * Starts the console: the engine link (a worker on the bridge), the JSON API and the WebSockets on
 * `options.host:options.port`, and the web app. Resolves once listening (the bridge connects in the
 * background and reconnects by itself; pages show its state).
 */
export async function startConsole(options: ConsoleOptions, log: ConsoleLog = console): Promise<ConsoleServer> {
  const security = new Security(options.token);
  const link = new EngineLink(options, log);
  const live = new LiveHub(link);
  // The Dashboard's history: engine::metrics::list every 2 s while the bridge is connected.
  const metrics = metricsHistoryOf(link);
  metrics.start();
  const wsHost = options.engineHost.includes(':') ? `[${options.engineHost}]` : options.engineHost;
  const streams = new StreamProxy(`ws://${wsHost}:${options.wsPort}`);
  const files = new StaticFiles(options.webRoot ?? DEFAULT_WEB_ROOT);
  const router = new Router([
    ...statusRoutes,
    ...registryRoutes,
    ...invokeRoutes,
    ...httpProbeRoutes,
    ...stateRoutes,
    ...queueRoutes,
    ...tracesRoutes,
    ...logsRoutes,
    ...streamsRoutes,
    ...metricsRoutes,
    ...flowRoutes,
  ]);
  let port = options.port;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://console');
    const method = req.method ?? 'GET';
    if (!url.pathname.startsWith(API_PREFIX)) {
      if (method !== 'GET' && method !== 'HEAD') throw new ApiFailure(405, 'method_not_allowed', 'pages are read with GET');
      const token = url.searchParams.get('token');
      if (token !== null && security.tokenRequired) {
        // A link with ?token=… logs the browser in and drops the token from the address bar (and history).
        if (!security.matches(token)) throw new ApiFailure(401, 'token_invalid', 'that is not the console token');
        url.searchParams.delete('token');
        res.writeHead(303, { location: `${url.pathname}${url.search}`, 'set-cookie': security.loginCookie(behindTls(req)), 'cache-control': 'no-store' });
        res.end();
        return;
      }
      return files.serve(req, res, url.pathname);
    }
    if (url.pathname === '/_console/config' && method === 'GET') {
      // Not secret, and the page needs it before it has a token (to know it needs one).
      return sendJson(res, 200, consoleConfig(options, port, security.tokenRequired), req);
    }
    if (url.pathname === '/_console/login' && method === 'POST') {
      requireMutationHeader(req);
      const body = await bodyReader(req)();
      if (!security.tokenRequired) return void res.writeHead(204).end();
      if (typeof body.token !== 'string' || !security.matches(body.token)) throw new ApiFailure(401, 'token_invalid', 'that is not the console token');
      res.writeHead(204, { 'set-cookie': security.loginCookie(behindTls(req)) });
      res.end();
      return;
    }
    security.authenticate(req);
    const found = router.match(method, url.pathname);
    if ('allowed' in found) {
      if (found.allowed.length > 0) {
        res.setHeader('allow', found.allowed.join(', '));
        throw new ApiFailure(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname} (allowed: ${found.allowed.join(', ')})`);
      }
      throw new ApiFailure(404, 'not_found', `there is no console API at ${url.pathname}`);
    }
    if (method !== 'GET') requireMutationHeader(req);
    const answer = await found.route.handler({ req, res, params: found.params, query: url.searchParams, body: bodyReader(req), link, options });
    if (!res.headersSent) await sendJson(res, 200, answer ?? null, req);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const failure = engineFailure(err);
      if (failure.status >= 500 && failure.code === 'console_error') log.error(`console: ${req.method} ${req.url} failed: ${failure.message}`);
      if (res.headersSent) res.destroy();
      else sendFailure(res, failure);
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const pathname = new URL(req.url ?? '/', 'http://console').pathname;
    try {
      checkOrigin(req);
      security.authenticate(req);
      if (pathname === '/_console/live') return live.upgrade(req, socket, head);
      if (pathname === '/_console/streams' || pathname.startsWith('/_console/streams/')) {
        const search = new URL(req.url ?? '/', 'http://console').search;
        return streams.upgrade(req, socket, head, `${pathname.slice('/_console/streams'.length) || '/'}${search}`);
      }
      throw new ApiFailure(404, 'not_found', `there is no WebSocket at ${pathname}`);
    } catch (err) {
      const f = engineFailure(err);
      writeUpgradeRefusal(socket, f.status, f.code, f.message);
    }
  });
  // Slow or idle clients must not hold sockets for ever.
  server.headersTimeout = 20_000;
  server.requestTimeout = 120_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${shownHost}:${port}`;

  return {
    url,
    port,
    link,
    async close() {
      metrics.stop();
      live.close();
      streams.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await link.close();
    },
  };
}
