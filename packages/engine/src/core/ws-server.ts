import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { closeReason } from '@flint/protocol';
import { WebSocket, WebSocketServer } from 'ws';
import type { EngineWebSocketServer, Heartbeat, WebSocketServerOptions } from './api/listen.js';

interface Tracked {
  heartbeat: Heartbeat;
  onDead: () => void;
}

const ignore = () => {};

/**
 * The engine's WebSocket servers (the bridge, and any module's listener): `noServer` mode (the
 * owner routes upgrades), no permessage-deflate, a payload cap whose 1009 close says which setting
 * was exceeded, and ping/keep-alive for the sockets that ask for it.
 */
export class WebSocketServerWithKeepAlive implements EngineWebSocketServer {
  private readonly wss: WebSocketServer;
  private readonly tracked = new Map<WebSocket, Tracked>();
  private pinger: NodeJS.Timeout | undefined;

  constructor(private readonly options: WebSocketServerOptions) {
    // ws closes a connection whose frame it refuses with a code and no reason; say what was wrong
    // (for an oversized frame, which limit).
    const reasons: Record<number, string> = {
      1002: closeReason(1002),
      1007: closeReason(1007),
      1009: closeReason(1009, { setting: options.limitSetting, limit: options.maxPayloadBytes }),
    };
    class LimitedSocket extends WebSocket {
      override close(code?: number, reason?: string | Buffer): void {
        super.close(code, !reason && code !== undefined ? (reasons[code] ?? reason) : reason);
      }
    }
    this.wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: options.maxPayloadBytes, WebSocket: LimitedSocket });
  }

  get clients(): ReadonlySet<WebSocket> {
    return this.wss.clients;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, onSocket: (ws: WebSocket) => void): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      // ws reports a protocol error (e.g. a frame over the cap) with an 'error' event before it closes
      // the socket; with no listener that would be an uncaught exception in the engine.
      ws.on('error', ignore);
      onSocket(ws);
    });
  }

  keepAlive(ws: WebSocket, onDead: () => void = () => ws.terminate()): Heartbeat {
    const heartbeat: Heartbeat = { alive: true };
    this.tracked.set(ws, { heartbeat, onDead });
    ws.on('pong', () => {
      heartbeat.alive = true;
    });
    ws.once('close', () => this.tracked.delete(ws));
    this.pinger ??= setInterval(() => this.ping(), this.options.pingIntervalMs).unref();
    return heartbeat;
  }

  async closeAll(code: number, reason: string, graceMs = 2000): Promise<void> {
    clearInterval(this.pinger);
    this.pinger = undefined;
    await Promise.all(
      [...this.wss.clients].map(
        (ws) =>
          new Promise<void>((resolve) => {
            if (ws.readyState === ws.CLOSED) return resolve();
            const timer = setTimeout(() => ws.terminate(), graceMs);
            ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            ws.close(code, reason);
          }),
      ),
    );
  }

  /** A socket that did not answer the previous ping (nor sent anything since) is dead. */
  private ping(): void {
    for (const [ws, { heartbeat, onDead }] of this.tracked) {
      if (!heartbeat.alive) {
        this.tracked.delete(ws);
        onDead();
        continue;
      }
      heartbeat.alive = false;
      if (ws.readyState === ws.OPEN) ws.ping();
    }
  }
}
