import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { REATTACH_HEADER, SPARE_CHANNEL_PATH, closeReason, errorStatus, formatError } from '@flint/protocol';
import type { WebSocket } from 'ws';
import { toBuffer } from '../../lib/buffers.js';
import { refuseUpgrade } from '../../lib/upgrade-refusal.js';
import { limitConnections } from '../connection-cap.js';
import { listen } from '../listen.js';
import type { Logger } from '../logger.js';
import { WebSocketServerWithKeepAlive } from '../ws-server.js';
import type { AccessGate } from './access/gate.js';
import type { WorkerPolicy } from './access/policy.js';
import { SessionAccess } from './access/session-access.js';
import { findChannelEnd, serveSpareChannel } from './channel-ends.js';
import { WorkerConnection } from './connection.js';
import { type BridgeAccess, UpgradeGuard, upgradeUrl } from './upgrade-guard.js';
import { type BridgeDeps, WorkerSession } from './worker-session.js';

export type { BridgeDeps };

export interface BridgeOptions {
  host: string;
  port: number;
  maxFrameBytes: number;
  pingIntervalMs: number;
  maxOutboundBytes: number;
  /** How long a worker providing a trigger type has to answer a forwarded registration. */
  triggerAckTimeoutMs: number;
  /** The setting that chose `port`, named when it is taken (`bridge.port (from ${FLINT_BRIDGE_PORT})`). */
  portSetting?: string;
  /** Connections served at once; the last tenth is kept for workers (`bridge.max_connections`). */
  maxConnections: number;
  /** Time a connection has to send its upgrade request (`bridge.handshake_timeout_ms`). */
  handshakeTimeoutMs: number;
  /** Time a spare channel socket may wait for its `bindchannel` frame (`bridge.spare_channel_idle_ms`). */
  spareIdleMs: number;
  /** Allowed web origins and the bridge token (upgrade-guard.ts). */
  access: BridgeAccess;
  /** The listener's access policy (auth function, middleware, hooks, exposure), when it has one. */
  gate?: AccessGate;
  /** Serve `wss://` with this certificate and key (PEM). */
  tls?: { cert: Buffer; key: Buffer };
  /** The config path of this listener (`bridge`, `bridge[1]`), for messages. */
  setting?: string;
}

/** The worker bridge: routes upgrades to `/` (workers), `/otel` (telemetry), `/ws/channels/<id>` and spare channel sockets on one port. */
export class BridgeServer {
  private readonly server: Server;
  private readonly sockets: WebSocketServerWithKeepAlive;
  private readonly log: Logger;
  private readonly guard: UpgradeGuard;

  constructor(
    private readonly deps: BridgeDeps,
    private readonly options: BridgeOptions,
  ) {
    this.log = deps.logger;
    this.guard = new UpgradeGuard(options.access, deps.logger, options.setting);
    const setting = options.setting ?? 'bridge';
    this.sockets = new WebSocketServerWithKeepAlive({
      maxPayloadBytes: options.maxFrameBytes,
      limitSetting: `${setting}.max_frame_bytes`,
      pingIntervalMs: options.pingIntervalMs,
    });
    const answer = (_req: IncomingMessage, res: ServerResponse) => {
      const body = JSON.stringify({ error: formatError('upgrade_required'), code: 'upgrade_required' });
      res.writeHead(errorStatus('upgrade_required'), { 'content-type': 'application/json', upgrade: 'websocket' });
      res.end(body);
    };
    this.server = options.tls ? createTlsServer({ cert: options.tls.cert, key: options.tls.key }, answer) : createServer(answer);
    this.server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
    // Channel and /otel sockets may not take the last tenth of the cap: a worker can always reconnect.
    limitConnections(
      this.server,
      {
        maxConnections: options.maxConnections,
        setting: `${setting}.max_connections`,
        headersTimeoutMs: options.handshakeTimeoutMs,
        reserve: { connections: Math.floor(options.maxConnections / 10), admits: isWorkerUpgrade, for: 'workers' },
      },
      this.log,
    );
  }

  listen(): Promise<{ host: string; port: number }> {
    return listen(this.server, this.options.host, this.options.port, this.options.portSetting);
  }

  /** Stops accepting connections (existing ones stay open until `closeConnections`). */
  stopAccepting(): void {
    this.server.close();
  }

  async closeConnections(): Promise<void> {
    await this.sockets.closeAll(1001, closeReason(1001));
    this.server.closeAllConnections();
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // node:http hands an upgrade's socket over without its error listener: a client resetting the
    // connection after a refusal would otherwise be an uncaught exception that stops the engine.
    socket.on('error', (err) => this.log.debug({ ip: req.socket.remoteAddress }, `bridge upgrade socket error: ${err.message}`));
    const url = upgradeUrl(req.url ?? '/');
    // A request target no URL can be made of (`//`, `//a:b`) is no endpoint of the bridge.
    if (!url) return refuseUpgrade(socket, 'not_found', formatError('not_found', { path: String(req.url).slice(0, 200) }));
    const refusal = this.guard.check(req, url);
    if (refusal) return refuseUpgrade(socket, refusal.code, refusal.message);
    (socket as Socket).setNoDelay?.(true);
    const gate = this.options.gate;
    if (url.pathname === '/' || url.pathname === '') {
      if (!gate?.active) return this.sockets.handleUpgrade(req, socket, head, (ws) => this.onWorker(ws, req, socket as Socket, undefined));
      void gate.admit(req, url).then((admitted) => {
        if (!('policy' in admitted)) return refuseUpgrade(socket, admitted.code, admitted.message);
        if (socket.destroyed) return;
        this.sockets.handleUpgrade(req, socket, head, (ws) => this.onWorker(ws, req, socket as Socket, admitted.policy));
      });
    } else if (url.pathname === '/otel' || url.pathname === '/otel/') {
      if (!gate?.config.authFunctionId) return this.sockets.handleUpgrade(req, socket, head, (ws) => this.onOtel(ws));
      // Telemetry goes into the engine's stores: the listener's auth function decides about it too.
      void gate.admit(req, url).then((admitted) => {
        if (!('policy' in admitted)) return refuseUpgrade(socket, admitted.code, admitted.message);
        if (!socket.destroyed) this.sockets.handleUpgrade(req, socket, head, (ws) => this.onOtel(ws));
      });
    } else if (url.pathname.startsWith('/ws/channels/')) {
      this.onChannelUpgrade(url, req, socket, head);
    } else if (url.pathname === SPARE_CHANNEL_PATH) {
      // Presents the worker's credentials (the guard checked the token), but binds only with a channel's key.
      this.sockets.handleUpgrade(req, socket, head, (ws) => serveSpareChannel(ws, this.deps, this.options.spareIdleMs, this.log));
    } else {
      refuseUpgrade(socket, 'not_found', formatError('not_found', { path: url.pathname }));
    }
  }

  private onChannelUpgrade(url: URL, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const dir = url.searchParams.get('dir');
    if (dir !== 'read' && dir !== 'write') return refuseUpgrade(socket, 'invalid_frame', 'Query parameter dir must be "read" or "write"');
    let id: string;
    try {
      id = decodeURIComponent(url.pathname.slice('/ws/channels/'.length));
    } catch {
      return refuseUpgrade(socket, 'channel_not_found', formatError('channel_not_found'));
    }
    const end = findChannelEnd(this.deps, id, url.searchParams.get('key'), dir);
    switch (end.kind) {
      case 'serve':
        return this.sockets.handleUpgrade(req, socket, head, end.serve);
      case 'ended':
        return this.sockets.handleUpgrade(req, socket, head, (ws) => ws.close(1000, 'channel closed'));
      case 'none':
        return refuseUpgrade(socket, 'channel_not_found', formatError('channel_not_found'));
      case 'remote':
        void end.serve.then(
          (serve) => {
            if (socket.destroyed) return;
            if (!serve) return refuseUpgrade(socket, 'channel_not_found', formatError('channel_not_found'));
            this.sockets.handleUpgrade(req, socket, head, serve);
          },
          () => refuseUpgrade(socket, 'channel_not_found', formatError('channel_not_found')),
        );
    }
  }

  private onOtel(ws: WebSocket): void {
    ws.on('message', (data, isBinary) => {
      if (isBinary) this.deps.telemetry.accept(toBuffer(data));
    });
    ws.on('error', (err) => this.log.debug(`telemetry socket error: ${err.message}`));
  }

  private onWorker(ws: WebSocket, req: IncomingMessage, socket: Socket, policy: WorkerPolicy | undefined): void {
    const conn = new WorkerConnection(randomUUID(), ws, socket, req.socket.remoteAddress ?? null, Date.now(), {
      maxOutboundBytes: this.options.maxOutboundBytes,
    });
    const gate = this.options.gate;
    if (gate && policy) conn.access = new SessionAccess(conn, policy, gate, this.deps.functions, this.log);
    conn.heartbeat = this.sockets.keepAlive(ws, () => {
      this.log.warn({ worker_id: conn.id }, 'worker did not answer a ping: dropping the connection');
      conn.terminate();
    });
    const reattach = req.headers[REATTACH_HEADER];
    new WorkerSession(conn, ws, this.deps, {
      triggerAckTimeoutMs: this.options.triggerAckTimeoutMs,
      // A holder of a claimed trigger has until the keep-alive would drop it (at most 5 s) to answer a ping.
      probeTimeoutMs: Math.min(this.options.pingIntervalMs, 5000),
      reattach: typeof reattach === 'string' ? reattach : undefined,
      spareIdleMs: this.options.spareIdleMs,
    }).open();
  }
}

/** An upgrade to `/`, the workers' endpoint. */
function isWorkerUpgrade(req: IncomingMessage): boolean {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path === '/' || path === '';
}
