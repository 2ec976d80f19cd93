import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** Refuses a WebSocket upgrade with an HTTP status and the API's JSON error body, and closes the socket. */
export function writeUpgradeRefusal(socket: Duplex, status: number, code: string, message: string): void {
  const text = JSON.stringify({ error: message, code });
  const challenge = status === 401 ? 'WWW-Authenticate: Bearer realm="flint-console"\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${challenge}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}
