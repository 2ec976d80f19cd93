import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ErrorCode, errorStatus } from '@flint/protocol';

/**
 * Answers a refused WebSocket upgrade (the bridge's, a module listener's) with the code's HTTP status and
 * a JSON body `{error, code}`, and closes the socket. A 401 carries `WWW-Authenticate: Bearer`, as HTTP
 * asks of every 401.
 */
export function refuseUpgrade(socket: Duplex, code: ErrorCode, message: string): void {
  const text = JSON.stringify({ error: message, code });
  const status = errorStatus(code);
  const challenge = status === 401 ? 'WWW-Authenticate: Bearer\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${challenge}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}
