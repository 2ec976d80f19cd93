import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { errorStatus, formatError } from '@flint/protocol';
import { LogThrottle } from '../lib/log-throttle.js';
import type { Logger } from './logger.js';

export interface ConnectionLimits {
  /** Connections served at once; one more is answered 503 `too_many_connections` and closed. */
  maxConnections: number;
  /** The setting that chose `maxConnections` (`bridge.max_connections`), for the log. */
  setting: string;
  /** Time a connection has to send a request's headers; then Node answers 408 and closes it. */
  headersTimeoutMs: number;
  /**
   * The last `connections` of the cap are kept for requests that `admits` accepts: past
   * `maxConnections - connections`, any other request is refused (the bridge keeps them for workers).
   */
  reserve?: { connections: number; admits(req: IncomingMessage): boolean; for: string };
}

/** At most this many connections over the cap wait for their 503 at once; more are closed unanswered. */
const MAX_REFUSING = 64;
/** A connection over the cap has this long to send its request (answered 503) before it is closed. */
const REFUSE_WAIT_MS = 2000;
/** Refusals are logged at most this often, with the running total. */
const LOG_INTERVAL_MS = 60_000;

/**
 * Caps the connections a listener serves, so that a flood of (slow) connections cannot use up the
 * process's file descriptors, and with them every other listener's: a connection arriving when
 * `maxConnections` are open is answered `503 too_many_connections` (JSON, `connection: close`) as
 * soon as its request arrives, and closed. A WebSocket upgrade is refused the same way, before the
 * handshake. Also sets the server's header time-out, checked often enough to hold.
 *
 * The answer has to come before the server's own `request`/`upgrade` listeners run (they would serve
 * the request), so the cap wraps the server's `emit`: the one place every request passes first.
 */
export function limitConnections(server: Server, limits: ConnectionLimits, logger: Logger): ConnectionCap {
  return new ConnectionCap(server, limits, logger);
}

/**
 * The TCP socket a request came on. Connections are counted on the server's `connection` event, which
 * gives the TCP socket; behind TLS the request's socket is the TLS socket wrapping it (`_parent`).
 */
function transportOf(socket: Duplex): Duplex {
  return (socket as Duplex & { _parent?: Duplex })._parent ?? socket;
}

export class ConnectionCap {
  private served = 0;
  private refusing = 0;
  private refused = 0;
  /** The connections counted in `served`. */
  private readonly serving = new WeakSet<Duplex>();
  private readonly overCap = new WeakSet<Duplex>();
  private readonly log = new LogThrottle(LOG_INTERVAL_MS);
  private readonly body: string;

  constructor(
    server: Server,
    private readonly limits: ConnectionLimits,
    private readonly logger: Logger,
  ) {
    this.body = JSON.stringify({ error: formatError('too_many_connections', { limit: limits.maxConnections }), code: 'too_many_connections' });
    server.headersTimeout = limits.headersTimeoutMs;
    // Node looks for expired headers every `connectionsCheckingInterval` ms (30 s by default: a stuck
    // header then lasted up to 90 s). It is a createServer option, read again when the server starts
    // listening, so it can still be set here.
    const checked = server as Server & { connectionsCheckingInterval: number };
    checked.connectionsCheckingInterval = Math.min(checked.connectionsCheckingInterval, 1000, Math.max(10, Math.floor(limits.headersTimeoutMs / 4)));
    server.on('connection', (socket: Socket) => this.onConnection(socket));
    const emit = server.emit.bind(server) as (event: string | symbol, ...args: unknown[]) => boolean;
    server.emit = ((event: string | symbol, ...args: unknown[]): boolean => {
      if (event === 'request' && this.refuses(args[0] as IncomingMessage)) return this.answer(args[1] as ServerResponse);
      if (event === 'upgrade' && this.refuses(args[0] as IncomingMessage)) return this.answerUpgrade(args[1] as Duplex);
      return emit(event, ...args);
    }) as Server['emit'];
  }

  /** Connections being served (those refused not included). */
  get connections(): number {
    return this.served;
  }

  private onConnection(socket: Socket): void {
    if (this.served < this.limits.maxConnections) {
      this.served++;
      this.serving.add(socket);
      socket.once('close', () => this.release(socket));
      return;
    }
    this.count();
    if (this.refusing >= MAX_REFUSING) {
      socket.destroy();
      return;
    }
    this.refusing++;
    this.overCap.add(socket);
    const timer = setTimeout(() => socket.destroy(), REFUSE_WAIT_MS).unref();
    socket.once('close', () => {
      this.refusing--;
      clearTimeout(timer);
    });
  }

  private refuses(req: IncomingMessage): boolean {
    const socket = transportOf(req.socket);
    if (this.overCap.has(socket)) return true;
    const reserve = this.limits.reserve;
    if (reserve === undefined || this.served <= this.limits.maxConnections - reserve.connections || reserve.admits(req)) return false;
    this.release(socket); // answered and about to close: its slot is free at once
    this.count();
    return true;
  }

  private release(socket: Duplex): void {
    if (this.serving.delete(socket)) this.served--;
  }

  private answer(res: ServerResponse): boolean {
    res.writeHead(errorStatus('too_many_connections'), {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(this.body),
      'retry-after': '1',
      connection: 'close',
    });
    res.end(this.body);
    return true;
  }

  private answerUpgrade(socket: Duplex): boolean {
    // The socket of an upgrade has no error listener of node:http's any more: a client resetting the
    // connection would otherwise be an uncaught exception that stops the engine.
    socket.on('error', () => {});
    socket.end(
      `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(this.body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${this.body}`,
    );
    const timer = setTimeout(() => socket.destroy(), REFUSE_WAIT_MS).unref();
    socket.once('close', () => clearTimeout(timer));
    return true;
  }

  private count(): void {
    this.refused++;
    if (!this.log.due()) return;
    const { maxConnections: limit, setting, reserve } = this.limits;
    const kept = reserve ? `; the last ${reserve.connections} are kept for ${reserve.for}` : '';
    this.logger.warn({ limit, refused: this.refused }, `refusing connections: ${this.served} of ${limit} open (${setting}${kept})`);
  }
}
