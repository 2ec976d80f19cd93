import { Writable } from 'node:stream';
import { type ChannelRef, FlintError } from '@flint/protocol';
import WebSocket from 'ws';
import { type ChannelSocketSource, directChannelSockets } from './channel-sockets.js';

const MAX_CHUNK = 64 * 1024;

/** How a writer names itself and a peer that went away in its `channel_closed` errors. */
export interface WriterLabel {
  channel: string;
  /** Why it closed when the other end went away. */
  peerGone: string;
  /** Why it closed when this end closed it. */
  selfClosed: string;
}

const labels = new WeakMap<ChannelWriter, WriterLabel>();

/** Names a writer in its `channel_closed` errors (http() calls its writer "the HTTP response"). */
export function labelWriter(writer: ChannelWriter, label: WriterLabel): void {
  labels.set(writer, label);
}

/**
 * The writing end of a channel: `write()` and `stream` for bytes, `sendMessage()` for text items.
 * Once the channel is closed — by this end, or because the other end went away — `closed` is true,
 * the `onClose` listeners have run once, and every write rejects with a `channel_closed` FlintError.
 */
export class ChannelWriter {
  private writable: Writable | undefined;
  private opened: Promise<WebSocket> | undefined;
  /**
   * The socket, when it was open as soon as this end asked for it (a spare): writes then go out at
   * once, without waiting for a promise. A socket that had to open first is only used through
   * `opened`, so that the writes queued while it opened keep their order.
   */
  private ready: WebSocket | undefined;
  /** Why the channel is closed; undefined while it is open. */
  private why: string | undefined;
  /** Who closed the channel: this end, the other end, or a failure of the socket. */
  private closedBy: 'self' | 'peer' | 'failure' = 'self';
  /** True once this end asked the socket to close (a close the socket reports then is not the peer's). */
  private closing = false;
  private listeners: (() => void)[] = [];
  private readonly sockets: ChannelSocketSource;

  /** `base`: the bridge URL (a new socket for this end), or the worker's channel sockets. */
  constructor(
    base: string | ChannelSocketSource,
    readonly ref: ChannelRef,
  ) {
    this.sockets = typeof base === 'string' ? directChannelSockets(base) : base;
  }

  /**
   * True once the channel is closed. Reading it opens the channel's socket if no write did yet, so
   * that the other end going away is noticed without writing.
   */
  get closed(): boolean {
    if (this.why === undefined && !this.writable?.writableEnded) this.watch();
    return this.why !== undefined || this.writable?.writableEnded === true;
  }

  /** Calls `listener` once when the channel closes (at once if it is closed); opens the socket to notice. */
  onClose(listener: () => void): void {
    if (this.why !== undefined) {
      queueMicrotask(listener);
      return;
    }
    this.listeners.push(listener);
    this.watch();
  }

  /**
   * The bytes end as a Node Writable (created on first use: most HTTP handlers never stream). A write
   * to a closed channel fails with a `channel_closed` FlintError; the stream never emits an unhandled
   * 'error' (failures reach the write callbacks, `pipeline()` and `closed`).
   */
  get stream(): Writable {
    if (this.writable) return this.writable;
    const writable = new Writable({
      write: (chunk: Buffer, _enc, callback) => this.sendBytes(chunk, callback),
      // Chunks written while an earlier one was on its way leave together, as one frame: a byte stream
      // has no chunk boundaries to keep, and many small writes (SSE events) cost a frame and a socket
      // write each on both ends otherwise.
      writev: (chunks, callback) =>
        this.sendBytes(chunks.length === 1 ? (chunks[0]?.chunk as Buffer) : Buffer.concat(chunks.map((c) => c.chunk as Buffer)), callback),
      destroy: (err, callback) => {
        // A failed writer closes abnormally so the reader (or the HTTP client) sees the data is incomplete.
        this.closeSocket(err ? 1011 : 1000, err ? 'writer failed' : 'channel_close');
        this.markClosed('this end closed it');
        callback(err);
      },
      final: (callback) => {
        this.socket().then(
          (ws) => {
            // The close frame is queued behind the data frames, so the reader gets all of them first.
            this.closing = true;
            ws.close(1000, 'stream_complete');
            this.markClosed('this end closed it');
            callback();
          },
          () => callback(this.closedError()),
        );
      },
    });
    writable.on('error', () => {});
    this.writable = writable;
    return writable;
  }

  /** Writes bytes; resolves once they are handed to the socket, rejects with `channel_closed` once the channel is closed. */
  write(chunk: string | Buffer): Promise<void> {
    return handledPromise((resolve, reject) => {
      if (this.closed) return reject(this.closedError());
      this.stream.write(chunk, (err) => (err ? reject(this.closed ? this.closedError() : err) : resolve()));
    });
  }

  /** Sends one text item (e.g. a control message); rejects with `channel_closed` once the channel is closed. */
  sendMessage(text: string): Promise<void> {
    return handledPromise((resolve, reject) => {
      if (this.why !== undefined) return reject(this.closedError());
      const send = (ws: WebSocket) => {
        if (ws.readyState !== WebSocket.OPEN) return reject(this.peerGone());
        ws.send(text, (err) => (err ? reject(this.failed(err)) : resolve()));
      };
      const opened = this.socket();
      if (this.ready) send(this.ready);
      else opened.then(send, () => reject(this.closedError()));
    });
  }

  /** Closes the channel normally (the reader sees its end). */
  close(): void {
    if (this.writable && !this.writable.writableEnded && !this.writable.destroyed) {
      this.writable.end();
      return;
    }
    this.closeSocket(1000, 'channel_close');
    this.markClosed('this end closed it');
  }

  /** The error every write to the closed channel rejects with. */
  private closedError(): FlintError {
    const label = labels.get(this);
    let reason = this.why ?? 'this end closed it';
    if (label && this.closedBy === 'peer') reason = label.peerGone;
    else if (label && this.closedBy === 'self') reason = label.selfClosed;
    return FlintError.of('channel_closed', { channel: label?.channel ?? `channel ${this.ref.channel_id}`, reason });
  }

  private watch(): void {
    this.socket().catch(() => {});
  }

  private closeSocket(code: number, reason: string): void {
    if (!this.opened) return;
    this.closing = true;
    this.opened.then(
      (ws) => ws.close(code, reason),
      () => {},
    );
  }

  private markClosed(why: string, by: 'self' | 'peer' | 'failure' = 'self'): void {
    if (this.why !== undefined) return;
    this.why = why;
    this.closedBy = by;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }

  /** The socket is not open: unless this end closed it, the other end went away. */
  private peerGone(): FlintError {
    if (!this.closing) this.markClosed('the other end went away', 'peer');
    return this.closedError();
  }

  private failed(err: Error): FlintError {
    this.markClosed(`the connection failed (${err.message})`, 'failure');
    return this.closedError();
  }

  private sendBytes(chunk: Buffer, callback: (err?: Error | null) => void): void {
    const opened = this.socket();
    if (this.ready) return this.sendChunks(this.ready, chunk, callback);
    opened.then(
      (ws) => this.sendChunks(ws, chunk, callback),
      () => callback(this.closedError()),
    );
  }

  private sendChunks(ws: WebSocket, chunk: Buffer, callback: (err?: Error | null) => void): void {
    if (ws.readyState !== WebSocket.OPEN) return callback(this.peerGone());
    if (chunk.length === 0) return callback();
    for (let offset = 0; offset < chunk.length; offset += MAX_CHUNK) {
      const last = offset + MAX_CHUNK >= chunk.length;
      ws.send(chunk.subarray(offset, offset + MAX_CHUNK), { binary: true }, last ? (err) => callback(err ? this.failed(err) : null) : undefined);
    }
  }

  private socket(): Promise<WebSocket> {
    if (this.opened) return this.opened;
    this.opened = new Promise<WebSocket>((resolve, reject) => {
      const ws = this.sockets.open(this.ref);
      let open = ws.readyState === WebSocket.OPEN;
      if (open) {
        this.ready = ws;
        resolve(ws);
      } else
        ws.once('open', () => {
          open = true;
          resolve(ws);
        });
      ws.on('error', (err) => {
        reject(err);
        this.markClosed(open ? `the connection failed (${err.message})` : `it could not be opened (${err.message})`, 'failure');
        this.writable?.destroy();
      });
      ws.once('close', (code, reason) => {
        if (!this.closing) this.markClosed(`the other end went away (${reason.length > 0 ? reason.toString() : `code ${code}`})`, 'peer');
        if (this.writable && !this.writable.writableFinished) this.writable.destroy();
      });
    });
    // Every user of the socket handles its failure; this keeps an unobserved one from being "unhandled".
    this.opened.catch(() => {});
    return this.opened;
  }
}

const ignore = (): void => {};

/**
 * A promise a caller may ignore: its rejection is marked as handled when it happens (a write nobody
 * awaits that fails must not crash the worker). Marking it only then spares the hot path, a write that
 * succeeds, a second promise.
 */
function handledPromise(executor: (resolve: () => void, reject: (err: unknown) => void) => void): Promise<void> {
  let rejectPromise!: (err: unknown) => void;
  let resolvePromise!: () => void;
  const promise = new Promise<void>((resolve, reject) => {
    resolvePromise = resolve;
    rejectPromise = reject;
  });
  executor(resolvePromise, (err) => {
    promise.catch(ignore);
    rejectPromise(err);
  });
  return promise;
}
