import { randomUUID } from 'node:crypto';
import { type ChannelRef, FlintError, SequenceTable } from '@flint/protocol';
import type { WebSocket } from 'ws';
import { toBuffer } from '../lib/buffers.js';
import type { ChannelItem, ChannelService, EngineChannel } from './api/channels.js';
import { ChannelIds } from './channel-ids.js';
import type { Logger } from './logger.js';

/** A socket for a channel closed this recently is closed cleanly instead of refused (see ChannelIds). */
const RECENT_MS = 60_000;

export interface ChannelOptions {
  defaultBufferSize: number;
  /** Channels whose two ends were not both taken within this time are removed. */
  ttlMs: number;
  /** Channels one owner (a worker connection) may have open at once (`channels.max_per_worker`). */
  maxPerOwner: number;
}

/** A one-way ordered pipe of text/binary items with a bounded buffer. */
export class Channel implements EngineChannel {
  readonly createdAt = Date.now();
  readerTaken = false;
  writerTaken = false;
  private readonly items: ChannelItem[] = [];
  private ended = false;
  private destroyed = false;
  aborted = false;
  private waitingReader: ((item: ChannelItem | null) => void) | undefined;
  // Allocated on first use: most channels (one per HTTP request) never need them.
  private drainWaiters: (() => void)[] | undefined;
  private sockets: Set<WebSocket> | undefined;

  constructor(
    readonly id: string,
    readonly accessKey: string,
    readonly bufferSize: number,
    private readonly onDestroy: (channel: Channel) => void,
  ) {}

  get readerRef(): ChannelRef {
    return { channel_id: this.id, access_key: this.accessKey, direction: 'read' };
  }

  get writerRef(): ChannelRef {
    return { channel_id: this.id, access_key: this.accessKey, direction: 'write' };
  }

  refJson(direction: 'read' | 'write'): string {
    // Ids and keys are hex digits and dashes (ChannelIds), so nothing needs escaping.
    return `{"channel_id":"${this.id}","access_key":"${this.accessKey}","direction":"${direction}"}`;
  }

  write(item: ChannelItem): boolean {
    if (this.ended || this.destroyed) return false;
    const reader = this.waitingReader;
    if (reader) {
      this.waitingReader = undefined;
      reader(item);
      return true;
    }
    this.items.push(item);
    return this.items.length < this.bufferSize;
  }

  drained(): Promise<void> {
    if (this.items.length < this.bufferSize || this.ended || this.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      this.drainWaiters ??= [];
      this.drainWaiters.push(resolve);
    });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.items.length === 0 && this.waitingReader) {
      const reader = this.waitingReader;
      this.waitingReader = undefined;
      reader(null);
    }
    this.releaseWriters();
  }

  read(): Promise<ChannelItem | null> {
    return new Promise((resolve) => this.next(resolve));
  }

  next(callback: (item: ChannelItem | null) => void): void {
    const item = this.items.shift();
    if (item) {
      if (this.items.length < this.bufferSize) this.releaseWriters();
      callback(item);
    } else if (this.ended || this.destroyed) {
      callback(null);
    } else {
      this.waitingReader = callback;
    }
  }

  attach(ws: WebSocket): void {
    this.sockets ??= new Set();
    const sockets = this.sockets;
    sockets.add(ws);
    ws.once('close', () => sockets.delete(ws));
  }

  /** Ends the channel as failed: the reader sees the end, and `aborted` tells it the data is incomplete. */
  abort(): void {
    this.aborted = true;
    this.end();
  }

  destroy(reason = 'channel closed', code = 1000): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.ended = true;
    if (code !== 1000) this.aborted = true;
    this.items.length = 0;
    const reader = this.waitingReader;
    this.waitingReader = undefined;
    reader?.(null);
    this.releaseWriters();
    if (this.sockets) for (const ws of this.sockets) if (ws.readyState === ws.OPEN) ws.close(code, reason);
    this.onDestroy(this);
  }

  private releaseWriters(): void {
    const waiters = this.drainWaiters;
    if (!waiters) return;
    this.drainWaiters = undefined;
    for (const resolve of waiters) resolve();
  }
}

/** Creates channels, serves their WebSocket ends and sweeps abandoned ones. */
export class ChannelManager implements ChannelService {
  /** Open channels by sequence number (see SequenceTable: no Map churn per HTTP request). */
  private readonly channels = new SequenceTable<Channel>();
  private readonly empty: ChannelRef = Object.freeze({ channel_id: randomUUID(), access_key: randomUUID(), direction: 'read' as const });
  private readonly ids = new ChannelIds();
  private readonly sweeper: NodeJS.Timeout;
  /** Open channels per owner; an owner with none has no entry. */
  private readonly owned = new Map<string, number>();
  /** Spare channel sockets not bound to a channel yet (kept by the bridge, counted here for the stats). */
  spareSockets = 0;

  constructor(
    private readonly options: ChannelOptions,
    private readonly logger: Logger,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(30_000, options.ttlMs)).unref();
  }

  get size(): number {
    return this.channels.size;
  }

  get emptyReaderRef(): ChannelRef {
    return this.empty;
  }

  create(bufferSize?: number, owner?: string): Channel {
    const size = Math.max(1, Math.min(1024, Math.floor(bufferSize ?? this.options.defaultBufferSize)));
    if (owner !== undefined) this.claim(owner);
    const { id, key, seq } = this.ids.issue();
    const channel = new Channel(id, key, size, () => this.forget(seq, owner));
    this.channels.set(seq, channel);
    return channel;
  }

  /** Counts one more open channel for `owner`; throws too_many_channels at the cap. */
  private claim(owner: string): void {
    const open = this.owned.get(owner) ?? 0;
    if (open >= this.options.maxPerOwner) throw FlintError.of('too_many_channels', { open, limit: this.options.maxPerOwner });
    this.owned.set(owner, open + 1);
  }

  /** True for a channel removed in the last minute: a late socket is closed cleanly rather than refused. */
  wasClosed(id: string, key: string | null): boolean {
    return this.ids.closedSince(id, key, Date.now() - RECENT_MS);
  }

  private forget(seq: number, owner: string | undefined): void {
    this.channels.delete(seq);
    this.ids.closed(seq, Date.now());
    if (owner === undefined) return;
    const open = (this.owned.get(owner) ?? 1) - 1;
    if (open > 0) this.owned.set(owner, open);
    else this.owned.delete(owner);
  }

  /** Finds a channel for a socket end; undefined when the id or key does not match. */
  lookup(id: string, key: string | null): Channel | undefined {
    if (id === this.empty.channel_id) {
      // Every reader of the shared empty ref gets its own channel that has already ended.
      if (key !== this.empty.access_key) return undefined;
      const channel = new Channel(id, this.empty.access_key, 1, () => {});
      channel.end();
      return channel;
    }
    const seq = this.ids.seqOf(id);
    const channel = seq === undefined ? undefined : this.channels.get(seq);
    return channel && channel.accessKey === key ? channel : undefined;
  }

  /** Serves the writer end: every frame becomes an item; the channel ends when the socket closes. */
  serveWriter(channel: Channel, ws: WebSocket): void {
    channel.writerTaken = true;
    channel.attach(ws);
    ws.on('message', (data, isBinary) => {
      const item: ChannelItem = isBinary ? { kind: 'binary', data: toBuffer(data) } : { kind: 'text', text: toBuffer(data).toString('utf8') };
      if (!channel.write(item)) {
        ws.pause();
        void channel.drained().then(() => ws.resume());
      }
    });
    // Every frame the socket received was emitted before 'close', so a normal close ends the channel
    // at once; a dropped or failed writer aborts it, so a reader can tell the data is incomplete.
    ws.once('close', (code) => {
      if (code === 1000 || code === 1005) channel.end();
      else channel.abort();
    });
  }

  /** Serves the reader end: items go out as frames in order; the socket closes at the end. */
  serveReader(channel: Channel, ws: WebSocket): void {
    channel.readerTaken = true;
    channel.attach(ws);
    let open = true;
    ws.once('close', () => {
      open = false;
      channel.destroy('reader closed');
    });
    const pump = async () => {
      for (;;) {
        const item = await channel.read();
        if (!open) return;
        if (item === null) {
          if (channel.aborted) ws.close(1011, 'channel aborted by its writer');
          else ws.close(1000, 'channel_end');
          channel.destroy();
          return;
        }
        await sendItem(ws, item);
      }
    };
    pump().catch((err: unknown) => this.logger.warn({ channel_id: channel.id }, `channel reader failed: ${String(err)}`));
  }

  stop(): void {
    clearInterval(this.sweeper);
    for (const channel of this.channels.snapshot()) channel.destroy('engine shutting down');
  }

  private sweep(): void {
    const cutoff = Date.now() - this.options.ttlMs;
    for (const channel of this.channels.snapshot()) {
      if (channel.createdAt < cutoff && !(channel.readerTaken && channel.writerTaken)) {
        this.logger.debug({ channel_id: channel.id }, 'abandoned channel removed');
        channel.destroy('channel expired');
      }
    }
  }
}

function sendItem(ws: WebSocket, item: ChannelItem): Promise<void> {
  const payload = item.kind === 'text' ? item.text : item.data;
  const options = { binary: item.kind === 'binary' };
  if (ws.bufferedAmount < 1 << 20) {
    ws.send(payload, options);
    return Promise.resolve();
  }
  return new Promise((resolve) => ws.send(payload, options, () => resolve()));
}
