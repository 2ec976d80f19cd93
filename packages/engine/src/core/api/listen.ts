import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

export interface ListenOptions {
  /** Shown in the start-up banner (`http`, `stream`, `console`). */
  name: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /**
   * The key of the module's config that set `port` (usually `port`): when the port is taken, the
   * error names it as `modules[i].config.<key>`, with the environment variable it came from.
   */
  portKey?: string;
  /** The server to bind; the engine stops it accepting at drain and closes its connections at stop. */
  server: Server;
  /** URL scheme for the banner; default `http`. */
  scheme?: 'http' | 'ws';
  /**
   * Connections served at once (default 4096). One more is answered 503 `too_many_connections`
   * (JSON, `connection: close`) when its request arrives, and closed; a WebSocket upgrade is refused
   * the same way before the handshake. Each listener has its own cap, so a flood on one cannot
   * starve another (workers can always reach the bridge).
   */
  maxConnections?: number;
  /** The key of the module's config that set `maxConnections` (usually `max_connections`), for the log. */
  maxConnectionsKey?: string;
  /** Time a connection has to send a request's headers (default 10 s); then it is answered 408 and closed. */
  headersTimeoutMs?: number;
}

export interface BoundListener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /** e.g. `http://127.0.0.1:3111` (IPv6 hosts in brackets). */
  readonly url: string;
}

export interface WebSocketServerOptions {
  /** A larger frame closes the socket with 1009 and a reason naming `limitSetting`. */
  maxPayloadBytes: number;
  /** The config key of the limit, for the close reason (e.g. `bridge.max_frame_bytes`). */
  limitSetting: string;
  /** Sockets given to `keepAlive` are pinged this often and dropped when they missed a ping. */
  pingIntervalMs: number;
}

/** A socket's liveness: set `alive` when the peer shows life other than a pong (any frame). */
export interface Heartbeat {
  alive: boolean;
}

/**
 * A WebSocket server that shares the bridge's behaviour: no compression, a payload cap with a close
 * reason, ping/keep-alive for the sockets that ask for it, and a bounded close of every socket.
 */
export interface EngineWebSocketServer {
  /** Completes an HTTP upgrade (call it from the server's `upgrade` event). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, onSocket: (ws: WebSocket) => void): void;
  /** Pings `ws` every interval; calls `onDead` (default: terminate) when it did not answer the last one. */
  keepAlive(ws: WebSocket, onDead?: () => void): Heartbeat;
  /** Open sockets. */
  readonly clients: ReadonlySet<WebSocket>;
  /** Closes every socket with `code`/`reason`, terminating those that do not close within `graceMs`. */
  closeAll(code: number, reason: string, graceMs?: number): Promise<void>;
}
