import { type ChannelRef, SPARE_CHANNEL_PATH, bindChannelFrame, channelPath } from '@flint/protocol';
import WebSocket from 'ws';

/** Opens the socket of a channel end. */
export interface ChannelSocketSource {
  /** A socket serving `ref`: either open already or about to open (its `open` event is still to come). */
  open(ref: ChannelRef): WebSocket;
}

/** The bridge URL of a channel end: the channel's path and key follow the bridge URL's path; its query (a `?token=`) is dropped. */
export function channelUrl(base: string, ref: ChannelRef): string {
  const url = new URL(base);
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/+$/, '') + channelPath(ref);
}

/** Opens a new socket per channel end, as every engine takes. */
export function directChannelSockets(base: string): ChannelSocketSource {
  return { open: (ref) => new WebSocket(channelUrl(base, ref), { perMessageDeflate: false }) };
}

/** At most this many spare sockets are kept open. */
const MAX_SPARES = 4;
/** The engine's close code for a spare nobody bound in time: no channel was used for a while. */
const SPARE_IDLE_CLOSE = 4000;
/** The engine's default `bridge.spare_channel_idle_ms`, for an engine that does not say. */
const DEFAULT_IDLE_MS = 60_000;

const ignore = (): void => {};

/**
 * Channel sockets of one worker. A WebSocket handshake takes about a millisecond, which a streamed
 * HTTP response would otherwise add to its time to first byte. Against an engine that takes spare
 * sockets (`workerregistered.spare_channels`), the worker keeps sockets open ahead of need once it
 * has used a channel, and a channel end takes one of them with a `bindchannel` frame instead of
 * opening its own. The pool grows by one (up to four) each time a channel finds it empty. A spare
 * unused for half the time the engine keeps one unbound (`spare_channel_idle_ms`, a minute by
 * default) is closed by the worker itself, which then keeps none until a channel is used again: the
 * worker never binds a spare the engine is just closing.
 */
export class ChannelSockets implements ChannelSocketSource {
  private readonly direct: ChannelSocketSource;
  /** Spares, opening or open, with the close listener the pool put on each. */
  private readonly spares = new Map<WebSocket, (code: number) => void>();
  /** Spares unused this long are closed by the worker (half the engine's limit). */
  private retireMs = DEFAULT_IDLE_MS / 2;
  private retireTimer: NodeJS.Timeout | undefined;
  private enabled = false;
  private closed = false;
  private refilling = false;
  /** Spares to keep open; none until a channel is used. */
  private wanted = 0;

  constructor(
    private readonly base: string,
    private readonly headers: Record<string, string> | undefined,
  ) {
    this.direct = directChannelSockets(base);
  }

  /**
   * Whether the engine of the current connection takes spare sockets, and how long it keeps one
   * unbound (both told by `workerregistered`).
   */
  setEnabled(enabled: boolean, idleMs = DEFAULT_IDLE_MS): void {
    this.enabled = enabled && !this.closed;
    this.retireMs = Math.max(1, Math.floor(idleMs / 2));
    if (this.enabled) this.refill();
    else this.dropSpares();
  }

  open(ref: ChannelRef): WebSocket {
    const spare = this.take();
    if (this.enabled) {
      this.armRetire();
      if (!spare) this.wanted = Math.min(MAX_SPARES, this.wanted + 1);
      // Opening a socket costs a few hundred microseconds of this process's time: not before the
      // channel's first bytes are on their way.
      if (!this.refilling) {
        this.refilling = true;
        setImmediate(() => {
          this.refilling = false;
          if (this.enabled) this.refill();
        });
      }
    }
    if (!spare) return this.direct.open(ref);
    spare.send(bindChannelFrame(ref));
    return spare;
  }

  /** Closes the spares and opens no more (the worker shuts down). */
  close(): void {
    this.closed = true;
    this.enabled = false;
    this.dropSpares();
  }

  /** From this channel on, spares live until `retireMs` pass without one. */
  private armRetire(): void {
    clearTimeout(this.retireTimer);
    this.retireTimer = setTimeout(() => {
      this.retireTimer = undefined;
      this.wanted = 0;
      this.dropSpares();
    }, this.retireMs);
    this.retireTimer.unref();
  }

  /** An open spare, detached from the pool; undefined when none is open yet. */
  private take(): WebSocket | undefined {
    for (const [ws, onClose] of this.spares) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      this.spares.delete(ws);
      ws.off('close', onClose);
      ws.off('error', ignore);
      return ws;
    }
    return undefined;
  }

  private refill(): void {
    while (this.spares.size < this.wanted) this.openSpare();
  }

  private openSpare(): void {
    const url = new URL(this.base);
    url.pathname = url.pathname.replace(/\/+$/, '') + SPARE_CHANNEL_PATH;
    url.hash = '';
    // The spare presents the worker's own credentials: the URL's `?token=` stays, and so do its headers.
    const ws = new WebSocket(url.toString(), { perMessageDeflate: false, headers: this.headers });
    const onClose = (code: number) => {
      this.spares.delete(ws);
      // Unused for a minute: keep none until a channel is used again. Any other close (the engine
      // stopping, a network failure) is replaced when the next channel needs a socket.
      if (code === SPARE_IDLE_CLOSE) this.wanted = 0;
    };
    ws.on('error', ignore);
    ws.once('close', onClose);
    this.spares.set(ws, onClose);
  }

  private dropSpares(): void {
    if (!this.enabled) {
      clearTimeout(this.retireTimer);
      this.retireTimer = undefined;
    }
    const spares = [...this.spares.keys()];
    this.spares.clear();
    for (const ws of spares) {
      if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'spare not needed');
      else ws.terminate();
    }
  }
}
