import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { writeUpgradeRefusal } from './http/upgrade-refusal.js';

/** Largest frame passed through (the stream module's own cap applies upstream). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 5000;

/** A close code that may be sent in a close frame (1005, 1006 and 1015 are reserved for reporting). */
const sendable = (code: number) => (code >= 1000 && code <= 1014 && ![1004, 1005, 1006].includes(code)) || (code >= 3000 && code <= 4999);

/**
 * WS /_console/streams[/<path>]: a pipe to the engine's stream WebSocket (`ws://engine-host:ws-port/<path>`),
 * frames unchanged both ways. The caller has already checked the Origin and the token; the console's
 * cookie and headers are not forwarded.
 */
export class StreamProxy {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  private readonly upstreams = new Set<WebSocket>();

  constructor(private readonly upstreamBase: string) {}

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, rest: string): void {
    const url = `${this.upstreamBase}${rest}`;
    const upstream = new WebSocket(url, { maxPayload: MAX_FRAME_BYTES, handshakeTimeout: CONNECT_TIMEOUT_MS, perMessageDeflate: false });
    this.upstreams.add(upstream);
    const failed = (reason: string) => {
      this.upstreams.delete(upstream);
      writeUpgradeRefusal(socket, 502, 'engine_stream_unreachable', `the engine's stream WebSocket at ${this.upstreamBase} is not reachable: ${reason}`);
    };
    upstream.once('unexpected-response', (_r, res) => {
      upstream.removeAllListeners('error');
      upstream.on('error', () => {});
      failed(`it answered HTTP ${res.statusCode}`);
    });
    upstream.once('error', (err) => failed((err as NodeJS.ErrnoException).code ?? err.message));
    upstream.once('open', () => {
      upstream.removeAllListeners('error');
      this.wss.handleUpgrade(req, socket, head, (client) => this.pipe(client, upstream));
    });
  }

  close(): void {
    for (const u of this.upstreams) u.terminate();
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
  }

  private pipe(client: WebSocket, upstream: WebSocket): void {
    client.on('message', (data, isBinary) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
    });
    upstream.on('message', (data, isBinary) => {
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
    });
    const closeOther = (other: WebSocket) => (code: number, reason: Buffer) => {
      if (other.readyState === WebSocket.OPEN || other.readyState === WebSocket.CONNECTING) {
        other.close(sendable(code) ? code : 1000, reason.subarray(0, 123));
      }
    };
    client.on('close', closeOther(upstream));
    upstream.on('close', (code, reason) => {
      this.upstreams.delete(upstream);
      closeOther(client)(code, reason);
    });
    client.on('error', () => upstream.terminate());
    upstream.on('error', () => client.terminate());
  }
}
