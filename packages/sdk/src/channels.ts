import { Readable, Writable } from 'node:stream';
import { type ChannelRef, channelPath } from '@flint/protocol';
import WebSocket from 'ws';

const MAX_CHUNK = 64 * 1024;

function channelUrl(base: string, ref: ChannelRef): string {
  return base.replace(/\/+$/, '') + channelPath(ref);
}

/** The writing end of a channel: `stream` for bytes, `sendMessage` for text items. */
export class ChannelWriter {
  private writable: Writable | undefined;
  private opened: Promise<WebSocket> | undefined;

  constructor(
    private readonly base: string,
    readonly ref: ChannelRef,
  ) {}

  /** The bytes end as a Node Writable (created on first use: most HTTP handlers never stream). */
  get stream(): Writable {
    this.writable ??= new Writable({
      write: (chunk: Buffer, _enc, callback) => {
        this.socket().then((ws) => sendChunks(ws, chunk, callback), callback);
      },
      destroy: (err, callback) => {
        // A failed writer closes abnormally so the reader (or the HTTP client) sees the data is incomplete.
        if (this.opened)
          this.opened.then(
            (ws) => ws.close(err ? 1011 : 1000, err ? 'writer failed' : 'channel_close'),
            () => {},
          );
        callback(err);
      },
      final: (callback) => {
        this.socket().then(
          (ws) => {
            // The close frame is queued behind the data frames, so the reader gets all of them first.
            ws.close(1000, 'stream_complete');
            callback();
          },
          (err: Error) => callback(err),
        );
      },
    });
    return this.writable;
  }

  /** Sends one text item (e.g. a control message). */
  sendMessage(text: string): void {
    this.socket().then(
      (ws) => ws.send(text),
      () => {},
    );
  }

  close(): void {
    if (!this.opened) return;
    this.opened.then(
      (ws) => ws.close(1000, 'channel_close'),
      () => {},
    );
  }

  private socket(): Promise<WebSocket> {
    this.opened ??= new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(channelUrl(this.base, this.ref), { perMessageDeflate: false });
      ws.once('open', () => resolve(ws));
      ws.once('error', (err) => {
        reject(err);
        this.writable?.destroy(err);
      });
      ws.once('close', () => {
        if (this.writable && !this.writable.writableFinished) this.writable.destroy();
      });
    });
    return this.opened;
  }
}

function sendChunks(ws: WebSocket, chunk: Buffer, callback: (err?: Error | null) => void): void {
  if (ws.readyState !== WebSocket.OPEN) return callback(new Error('channel closed'));
  for (let offset = 0; offset < chunk.length; offset += MAX_CHUNK) {
    const last = offset + MAX_CHUNK >= chunk.length;
    ws.send(chunk.subarray(offset, offset + MAX_CHUNK), { binary: true }, last ? (err) => callback(err ?? null) : undefined);
  }
  if (chunk.length === 0) callback();
}

/** The reading end of a channel: `stream` yields bytes, `onMessage` receives text items. */
export class ChannelReader {
  private readable: Readable | undefined;
  private ws: WebSocket | undefined;
  private readonly listeners: ((text: string) => void)[] = [];

  constructor(
    private readonly base: string,
    readonly ref: ChannelRef,
  ) {}

  /** The bytes as a Node Readable; reading it opens the channel (created on first use). */
  get stream(): Readable {
    this.readable ??= new Readable({
      read: () => {
        if (!this.ws) this.open();
        else if (this.ws.isPaused) this.ws.resume();
      },
      destroy: (err, callback) => {
        this.ws?.close(1000, 'channel_close');
        callback(err);
      },
    });
    return this.readable;
  }

  onMessage(listener: (text: string) => void): void {
    this.listeners.push(listener);
  }

  /** Reads the whole channel into one Buffer. */
  async readAll(): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  close(): void {
    if (this.ws) this.ws.close(1000, 'channel_close');
    else this.readable?.push(null);
  }

  private open(): void {
    const ws = new WebSocket(channelUrl(this.base, this.ref), { perMessageDeflate: false });
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (!isBinary) {
        const text = buf.toString('utf8');
        for (const listener of this.listeners) listener(text);
        return;
      }
      if (!this.stream.push(buf)) ws.pause();
    });
    ws.once('close', (code, reason) => {
      // 1000/1005 is a normal end; anything else (writer failed, body too large, engine stopping) is an error.
      if (code === 1000 || code === 1005) this.stream.push(null);
      else this.stream.destroy(new Error(`channel closed (${code}${reason.length ? `: ${reason.toString()}` : ''})`));
    });
    ws.once('error', (err) => this.stream.destroy(err));
  }
}
