import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

/**
 * How long, and how much more of an unread body, a connection answered early is read and discarded
 * before it is closed anyway. Generous: an ordinary client reads the answer within milliseconds and
 * closes the connection itself (a few MiB of its upload arrive meanwhile, up to ~25 MiB measured on a
 * busy 2-core machine); the bounds matter only for a client that ignores the answer.
 */
export const LINGER_MS = 5_000;
export const LINGER_BYTES = 128 * 1024 * 1024;

const lingering = new WeakSet<Socket>();

/**
 * Lingering close, as nginx does it, for a request answered before its body was read (a 413, a
 * middleware's or handler's early answer). Call it when a request with a body starts.
 *
 * Closing a TCP connection whose peer is still sending, with its bytes unread, makes the kernel reset
 * it, and the reset can discard the answer before the client has read it: an ordinary upload then
 * fails with ECONNRESET or EPIPE instead of reading the answer. Node's server closes a connection
 * after an answer with `socket.destroySoon()` (half-close, then destroy as soon as the answer is
 * flushed), which is exactly that. So while this request's body is incomplete, `destroySoon` on its
 * socket only half-closes (the client reads the answer and the end of the stream), and the rest of the
 * body is read and dropped, never buffered, until the client closes its side, `LINGER_BYTES` more
 * arrived or `LINGER_MS` passed; then the socket is destroyed.
 */
export function closeGracefully(req: IncomingMessage): void {
  const socket = req.socket;
  socket.destroySoon = () => (req.complete ? Socket.prototype.destroySoon.call(socket) : linger(req));
}

function linger(req: IncomingMessage): void {
  const socket = req.socket;
  if (lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  if (socket.writable) socket.end();
  const stop = () => socket.destroy();
  const timer = setTimeout(stop, LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  let discarded = 0;
  // Node's parser keeps handing the body to `req`; with no reader left it is dropped here.
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) stop();
  });
  req.resume();
}
