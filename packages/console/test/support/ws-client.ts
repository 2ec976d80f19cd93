/**
 * WebSocket clients for the console's tests (`ws` package): `connectLive(url)` opens a socket and keeps
 * every JSON message it receives; `refusedUpgrade(url)` expects the upgrade to be refused and resolves
 * with the HTTP status, headers and JSON body of the refusal.
 */
import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';
import { type Json, waitFor } from './console-env.js';

export interface WsTestClient {
  readonly ws: WebSocket;
  /** Every message received so far, parsed as JSON (text that is not JSON is kept as `{unparsed}`). */
  readonly messages: Json[];
  /** The next message not yet returned by `next` (received or still to come). */
  next(timeoutMs?: number): Promise<Json>;
  /** The first message matching `match` among all received (or still to come). */
  waitMessage(match: (message: Json) => boolean, timeoutMs?: number, what?: string): Promise<Json>;
  /** Resolves with the close code once the socket is closed by either side. */
  closed(timeoutMs?: number): Promise<number>;
  send(message: unknown): void;
  close(): void;
}

/** Opens a WebSocket to `url`; rejects when the upgrade is refused or the connection fails. */
export async function connectLive(url: string, options: WebSocket.ClientOptions = {}): Promise<WsTestClient> {
  const ws = new WebSocket(url, { perMessageDeflate: false, ...options });
  const messages: Json[] = [];
  let read = 0;
  let closeCode: number | undefined;
  ws.on('message', (data) => {
    try {
      messages.push(JSON.parse(String(data)));
    } catch {
      messages.push({ unparsed: String(data) });
    }
  });
  ws.on('close', (code) => {
    closeCode = code;
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => {
      ws.terminate();
      reject(new Error(`the upgrade was refused with HTTP ${res.statusCode}`));
    });
    ws.once('error', reject);
  });
  ws.on('error', () => {});
  const describe = () => JSON.stringify(messages).slice(0, 800);
  return {
    ws,
    messages,
    async next(timeoutMs = 3000) {
      await waitFor(() => messages.length > read, timeoutMs, `a message on ${url} (received: ${describe()})`);
      return messages[read++];
    },
    waitMessage(match, timeoutMs = 3000, what = 'a matching message') {
      return waitFor(() => messages.find(match), timeoutMs, `${what} on ${url} (received: ${describe()})`);
    },
    closed(timeoutMs = 3000) {
      return waitFor(() => closeCode, timeoutMs, `${url} to close`);
    },
    send(message) {
      ws.send(typeof message === 'string' ? message : JSON.stringify(message));
    },
    close() {
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
    },
  };
}

export interface Refusal {
  status: number;
  headers: IncomingHttpHeaders;
  body: Json;
}

/** Opens a WebSocket to `url` that must be refused; resolves with the refusal (rejects if the socket opens). */
export function refusedUpgrade(url: string, options: WebSocket.ClientOptions = {}): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...options });
    ws.on('error', () => {});
    ws.once('open', () => {
      ws.terminate();
      reject(new Error(`the upgrade to ${url} was accepted`));
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk;
      });
      res.on('end', () => {
        let body: Json = text;
        try {
          body = JSON.parse(text);
        } catch {
          // kept as text
        }
        ws.terminate();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    ws.once('error', (err) => reject(err));
  });
}
