import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { formatError } from '@flint/protocol';
import type { WebSocket } from 'ws';
import type { EngineWebSocketServer, ModuleContext } from '../../core/module-api.js';
import { authInput, authorize } from '../../lib/upgrade-auth.js';
import { refuseUpgrade } from '../../lib/upgrade-refusal.js';
import type { StreamConfig } from './config.js';
import type { ClientRequest } from './frames.js';
import type { StreamSessions } from './sessions.js';

/** The subscription id of the one a `/stream/<stream>/<group>[/<item>]` URL makes on connect. */
export const PATH_SUBSCRIPTION_ID = 'path';

/**
 * The stream listener: WebSocket upgrades to `/` (subscriptions by join frames) or to
 * `/stream/<stream>/<group>[/<item>]` (that subscription made on connect; names percent-encoded), each
 * checked by the auth function first when one is configured. Plain HTTP requests get 426.
 */
export class StreamListener {
  readonly server: Server;
  private readonly sockets: EngineWebSocketServer;

  constructor(
    private readonly ctx: ModuleContext,
    private readonly config: StreamConfig,
    private readonly sessions: StreamSessions,
  ) {
    this.sockets = ctx.webSocketServer({ maxPayloadBytes: config.max_frame_bytes, limitSetting: 'max_frame_bytes', pingIntervalMs: config.ping_interval_ms });
    this.server = createServer((_req, res) => {
      const body = JSON.stringify({ error: 'This is the Flint stream listener: connect with a WebSocket', code: 'upgrade_required' });
      res.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket', connection: 'close' }).end(body);
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.onUpgrade(req, socket, head).catch((err: unknown) => {
        // Nothing an upgrade request carries may stop the engine: answer, log, go on.
        this.ctx.logger.warn(`stream upgrade failed: ${err instanceof Error ? err.message : String(err)}`);
        if (!socket.destroyed) refuseUpgrade(socket, 'internal_error', 'the upgrade could not be handled');
      }),
    );
  }

  async listen(): Promise<void> {
    const { host, port, max_connections, headers_timeout_ms } = this.config;
    await this.ctx.listen({
      name: 'stream',
      host,
      port,
      portKey: 'port',
      server: this.server,
      scheme: 'ws',
      maxConnections: max_connections,
      maxConnectionsKey: 'max_connections',
      headersTimeoutMs: headers_timeout_ms,
    });
  }

  private async onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // node:http hands the socket over without an error listener: a client resetting it must not stop the engine.
    socket.on('error', (err) => this.ctx.logger.debug(`stream upgrade socket error: ${err.message}`));
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://stream');
    } catch {
      return refuseUpgrade(socket, 'not_found', formatError('not_found', { path: String(req.url).slice(0, 200) }));
    }
    const initial = url.pathname === '/' ? undefined : pathSubscription(url.pathname);
    if (initial === null) return refuseUpgrade(socket, 'not_found', formatError('not_found', { path: url.pathname }));
    let context: unknown = null;
    if (this.config.auth_function) {
      const invoke = (id: string, data: unknown, options: { timeoutMs?: number }) => this.ctx.invoke(id, data, options);
      const outcome = await authorize(invoke, this.ctx.logger, this.config.auth_function, authInput(req, url), this.config.auth_timeout_ms);
      if (!outcome.allowed) return refuseUpgrade(socket, outcome.code, outcome.message);
      context = outcome.answer?.context ?? null;
      if (socket.destroyed) return;
    }
    const ip = req.socket.remoteAddress ?? '';
    const addr = `${ip.includes(':') ? `[${ip}]` : ip}:${req.socket.remotePort ?? 0}`;
    this.sockets.handleUpgrade(req, socket, head, this.accept(addr, context, initial));
  }

  /**
   * The callback that serves an accepted socket. Made here, outside `onUpgrade`, so that it does not keep
   * the upgrade request (about 1 KiB of headers and stream state) alive for as long as the connection.
   */
  private accept(addr: string, context: unknown, initial: ClientRequest | undefined): (ws: WebSocket) => void {
    return (ws) => {
      this.sessions.open(ws, addr, context, initial);
      const heartbeat = this.sockets.keepAlive(ws);
      // Any frame shows the client is alive, not only a pong.
      ws.on('message', () => {
        heartbeat.alive = true;
      });
    };
  }
}

/** The subscription of a `/stream/<stream>/<group>[/<item>]` path; null for any other path. */
export function pathSubscription(pathname: string): ClientRequest | null {
  const parts = pathname.replace(/\/+$/, '').split('/');
  if (parts[1] !== 'stream' || parts.length < 4 || parts.length > 5) return null;
  let names: string[];
  try {
    names = parts.slice(2).map((part) => decodeURIComponent(part));
  } catch {
    return null;
  }
  const [stream, group, item] = names;
  if (!stream || !group || item === '') return null;
  return { type: 'join', subscriptionId: PATH_SUBSCRIPTION_ID, stream, group, item: item ?? null };
}
