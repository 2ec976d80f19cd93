import { Readable } from 'node:stream';
import type { ChannelRef } from '@flint/protocol';
import type WebSocket from 'ws';
import { type ChannelSocketSource, directChannelSockets } from './channel-sockets.js';

/** The reading end of a channel: `stream` yields bytes, `onMessage` receives text items. */
export class ChannelReader {
  private readable: Readable | undefined;
  private ws: WebSocket | undefined;
  private readonly listeners: ((text: string) => void)[] = [];
  private readonly sockets: ChannelSocketSource;

  /** `base`: the bridge URL (a new socket for this end), or the worker's channel sockets. */
  constructor(
    base: string | ChannelSocketSource,
    readonly ref: ChannelRef,
  ) {
    this.sockets = typeof base === 'string' ? directChannelSockets(base) : base;
  }

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
    const ws = this.sockets.open(this.ref);
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
