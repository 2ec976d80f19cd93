import { Readable } from 'node:stream';
import { type ChannelRef, channelPath } from '@flint/protocol';
import WebSocket from 'ws';

/** The bridge URL of a channel end: the channel's path and key follow the bridge URL's path; its query (a `?token=`) is dropped. */
export function channelUrl(base: string, ref: ChannelRef): string {
  const url = new URL(base);
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/+$/, '') + channelPath(ref);
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
