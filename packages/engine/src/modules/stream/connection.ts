import { closeReason } from '@flint/protocol';
import type { WebSocket } from 'ws';
import type { StreamStats } from './stats.js';
import type { Subscriber } from './subscriptions.js';

/** One subscription of a connection, by the id the client chose. */
export interface Subscription {
  id: string;
  stream: string;
  group: string;
  item: string | null;
}

export interface ConnectionOptions {
  /** Unsent bytes beyond which the connection is closed with 1013. */
  maxBufferedBytes: number;
  stats: StreamStats;
  /** Called once when the connection is closed for being too slow. */
  onSlow: (connection: StreamConnection, buffered: number) => void;
}

/** Time a slow connection gets to take its close frame before its socket is destroyed. */
const SLOW_CLOSE_GRACE_MS = 1000;

/**
 * A client connection of the stream listener: its subscriptions, the context its auth function gave it,
 * and a send that never lets its unsent frames grow past `maxBufferedBytes` (plus one frame; the client is
 * dropped instead, with 1013, so one slow reader costs the engine a bounded amount of memory).
 */
export class StreamConnection implements Subscriber {
  readonly subscriptions = new Map<string, Subscription>();
  private dropping = false;

  constructor(
    readonly ws: WebSocket,
    readonly addr: string,
    readonly context: unknown,
    private readonly options: ConnectionOptions,
  ) {}

  /** Whether frames can still be sent (not closed, not being dropped). */
  get open(): boolean {
    return !this.dropping && this.ws.readyState === this.ws.OPEN;
  }

  /** Sends a frame made for this connection alone (a sync, a refusal), counting it. */
  deliver(text: string, stream: string): void {
    const frame = Buffer.from(text);
    if (this.send(frame)) this.options.stats.sent(stream, 1, frame.length);
  }

  send(frame: Buffer): boolean {
    if (!this.open) return false;
    // A client that has read everything gets the next frame whatever its size (a large group's sync):
    // only frames piling up behind unread ones count against the cap.
    const buffered = this.ws.bufferedAmount;
    if (buffered > 0 && buffered + frame.length > this.options.maxBufferedBytes) {
      this.drop(buffered);
      return false;
    }
    this.ws.send(frame, { binary: false });
    return true;
  }

  private drop(buffered: number): void {
    this.dropping = true;
    this.options.onSlow(this, buffered);
    this.ws.close(1013, closeReason(1013, { limit: this.options.maxBufferedBytes, setting: 'max_buffered_bytes' }));
    // The close frame waits behind what the client does not read; do not keep the socket for it.
    setTimeout(() => this.ws.terminate(), SLOW_CLOSE_GRACE_MS).unref();
  }
}
