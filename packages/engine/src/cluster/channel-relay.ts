import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { ChannelItem, RemoteChannels } from '../core/api/channels.js';
import type { Channel, ChannelManager } from '../core/channels.js';
import type { Logger } from '../core/logger.js';
import type { ClusterTransport } from './transport.js';
import { type Subjects, decode, encode } from './wire.js';

/**
 * Relayed channel messages: one op byte, then the payload. Writer side: `b`inary / `t`ext item, `e`nd,
 * `a`bort; answered `k` (taken, room for more) or `x` (the channel is gone). Reader side: `n`ext, answered
 * with an item, `e`nd or `a`bort; `c`lose when the reader went away.
 */
const OP = { binary: 98, text: 116, end: 101, abort: 97, next: 110, close: 99, ok: 107, gone: 120 } as const;

/** How long a relayed reader waits for an item before it asks again (the engine holds the read meanwhile). */
const READ_WAIT_MS = 30_000;
/** How often the holding engine looks for relays whose channel is gone (their other engine may have died). */
const SWEEP_MS = 30_000;

interface OpenRequest {
  id: string;
  key: string | null;
  dir: 'read' | 'write';
}

const frame = (op: number, payload?: Uint8Array): Uint8Array => {
  const out = new Uint8Array(1 + (payload?.length ?? 0));
  out[0] = op;
  if (payload) out.set(payload, 1);
  return out;
};

const itemFrame = (item: ChannelItem | null, aborted: boolean): Uint8Array => {
  if (item === null) return frame(aborted ? OP.abort : OP.end);
  return item.kind === 'binary' ? frame(OP.binary, item.data) : frame(OP.text, Buffer.from(item.text, 'utf8'));
};

/** `bytes` in consecutive pieces of at most `size`. */
function* pieces(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

const tooBigText = (bytes: number, transport: ClusterTransport): string =>
  `a channel's text message of ${bytes} bytes is over what one message of ${transport.kind} carries (${transport.maxMessageBytes} bytes: ${transport.maxMessageSetting}); the channel is aborted (binary data is sent in pieces)`;

/**
 * Channels across the engines of a cluster. The engine holding a channel serves a relayed end over
 * request/reply on a subject of its own (a pull per item for a reader, an acknowledged push per item
 * for a writer, so both keep the channel's back-pressure); the engine the worker's socket reached pipes
 * that socket to it.
 */
export class ChannelRelay implements RemoteChannels {
  private readonly relays = new Map<string, { channel: Channel; stop: () => void }>();
  /** Per relayed reader: its read under way, kept so that a reader asking again (its request timed out) gets the same item. */
  private readonly pendingReads = new Map<string, Promise<ChannelItem | null>>();
  /** Per relayed reader: what is left of a binary item too big for one message of the transport. */
  private readonly leftovers = new Map<string, Uint8Array>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly transport: ClusterTransport,
    private readonly subjects: Subjects,
    private readonly nodeId: string,
    private readonly channels: ChannelManager,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.transport.subscribe(this.subjects.channelOpen, (data, reply) => this.onOpen(decode<OpenRequest>(data), reply));
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    for (const relay of this.relays.values()) relay.stop();
    this.relays.clear();
  }

  // -------------------------------------------------------------------------- the socket's engine

  async relay(id: string, key: string | null, dir: 'read' | 'write'): Promise<((ws: WebSocket) => void) | undefined> {
    if (!this.transport.up) return undefined;
    let answer: { subject?: string } | undefined;
    try {
      answer = decode(await this.transport.request(this.subjects.channelOpen, encode({ id, key, dir } satisfies OpenRequest), 1000));
    } catch {
      return undefined; // nobody holds it (no answer)
    }
    const subject = answer?.subject;
    if (typeof subject !== 'string') return undefined;
    return (ws) => (dir === 'write' ? this.pipeWriter(ws, subject) : this.pipeReader(ws, subject));
  }

  private pipeWriter(ws: WebSocket, subject: string): void {
    const queue: Uint8Array[] = [];
    let sending = false;
    let done = false;
    const pump = async () => {
      if (sending) return;
      sending = true;
      while (queue.length > 0 && !done) {
        const message = queue.shift() as Uint8Array;
        const op = message[0];
        try {
          const answer = await this.transport.request(subject, message, READ_WAIT_MS);
          if (answer[0] === OP.gone) {
            done = true;
            ws.close(1000, 'channel closed');
          }
        } catch (err) {
          done = true;
          ws.close(1011, 'cluster link lost');
          this.log.debug({ subject }, `relayed channel writer failed: ${(err as Error).message}`);
        }
        if (op === OP.end || op === OP.abort) done = true;
        else if (!done) ws.resume();
      }
      sending = false;
    };
    ws.on('message', (data, isBinary) => {
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      const room = this.pieceRoom;
      if (bytes.length <= room) queue.push(frame(isBinary ? OP.binary : OP.text, bytes));
      else if (isBinary) for (const piece of pieces(bytes, room)) queue.push(frame(OP.binary, piece));
      else {
        // A text message cannot be cut without the reader getting several: the channel is aborted.
        this.log.warn({ subject, bytes: bytes.length, limit: room }, tooBigText(bytes.length, this.transport));
        ws.close(1009, 'text message too big for the cluster transport');
        return;
      }
      ws.pause(); // one item on its way at a time: the holding engine's answer is the back-pressure
      void pump();
    });
    ws.once('close', (code) => {
      queue.push(frame(code === 1000 || code === 1005 ? OP.end : OP.abort));
      void pump();
    });
  }

  private pipeReader(ws: WebSocket, subject: string): void {
    let open = true;
    ws.once('close', () => {
      if (!open) return;
      open = false;
      this.transport.request(subject, frame(OP.close), 2000).catch(() => {});
    });
    const pump = async () => {
      while (open) {
        let answer: Uint8Array;
        try {
          answer = await this.transport.request(subject, frame(OP.next), READ_WAIT_MS);
        } catch (err) {
          if ((err as { kind?: string }).kind === 'timeout' && this.transport.up) continue; // still waiting for an item
          open = false;
          ws.close(1011, 'cluster link lost');
          return;
        }
        if (!open) return;
        const op = answer[0];
        if (op === OP.end || op === OP.abort) {
          open = false;
          ws.close(op === OP.end ? 1000 : 1011, op === OP.end ? 'channel_end' : 'channel aborted by its writer');
          return;
        }
        const payload = Buffer.from(answer.buffer, answer.byteOffset + 1, answer.length - 1);
        await new Promise<void>((resolve) => {
          if (op === OP.binary) ws.send(payload, { binary: true }, () => resolve());
          else ws.send(payload.toString('utf8'), () => resolve());
        });
      }
    };
    void pump();
  }

  // -------------------------------------------------------------------------- the holding engine

  private onOpen(request: OpenRequest | undefined, reply: ((data: Uint8Array) => void) | undefined): void {
    if (!reply || !request || typeof request.id !== 'string' || (request.dir !== 'read' && request.dir !== 'write')) return;
    const channel = this.channels.lookup(request.id, request.key);
    // Only the engine holding the channel answers; the others stay silent.
    if (!channel) return;
    if (request.dir === 'read' ? channel.readerTaken : channel.writerTaken) return;
    if (request.dir === 'read') channel.readerTaken = true;
    else channel.writerTaken = true;
    const relayId = randomUUID();
    const subject = this.subjects.channelRelay(this.nodeId, relayId);
    const stop = this.transport.subscribe(subject, (data, answer) => {
      if (!answer) return;
      if (request.dir === 'write') void this.onWrite(channel, data, answer, relayId);
      else this.onRead(channel, data, answer, relayId);
    });
    this.relays.set(relayId, { channel, stop });
    reply(encode({ subject }));
  }

  private async onWrite(channel: Channel, data: Uint8Array, answer: (data: Uint8Array) => void, relayId: string): Promise<void> {
    const op = data[0];
    if (op === OP.end || op === OP.abort) {
      if (op === OP.end) channel.end();
      else channel.abort();
      this.finish(relayId);
      answer(frame(OP.ok));
      return;
    }
    const payload = Buffer.from(data.buffer, data.byteOffset + 1, data.length - 1);
    const item: ChannelItem = op === OP.binary ? { kind: 'binary', data: payload } : { kind: 'text', text: payload.toString('utf8') };
    if (!channel.write(item)) {
      if (this.gone(channel)) {
        this.finish(relayId);
        answer(frame(OP.gone));
        return;
      }
      await channel.drained();
    }
    answer(frame(OP.ok));
  }

  private onRead(channel: Channel, data: Uint8Array, answer: (data: Uint8Array) => void, relayId: string): void {
    if (data[0] === OP.close) {
      channel.destroy('reader closed');
      this.finish(relayId);
      answer(frame(OP.ok));
      return;
    }
    const rest = this.leftovers.get(relayId);
    if (rest) return answer(this.nextPiece(relayId, rest));
    let pending = this.pendingReads.get(relayId);
    if (!pending) {
      pending = channel.read();
      this.pendingReads.set(relayId, pending);
    }
    const read = pending;
    void read.then((item) => {
      if (this.pendingReads.get(relayId) === read) this.pendingReads.delete(relayId);
      const out = itemFrame(item, channel.aborted);
      if (item !== null && out.length > this.transport.maxMessageBytes) {
        // Too big for one message: a binary item goes in pieces (the reader gets the same bytes), a text one cannot.
        if (item.kind === 'binary') return answer(this.nextPiece(relayId, item.data));
        this.log.warn({ channel_id: channel.id, bytes: out.length - 1 }, tooBigText(out.length - 1, this.transport));
        answer(frame(OP.abort));
        channel.destroy('a text message too big for the cluster transport');
        this.finish(relayId);
        return;
      }
      answer(out);
      if (item === null) {
        channel.destroy();
        this.finish(relayId);
      }
    });
  }

  /** The most bytes of an item one message of the transport carries (after the frame's op byte). */
  private get pieceRoom(): number {
    return this.transport.maxMessageBytes - 1;
  }

  /** The next piece of a binary item too big for one message; the rest waits for the reader's next ask. */
  private nextPiece(relayId: string, data: Uint8Array): Uint8Array {
    const room = this.pieceRoom;
    if (data.length > room) this.leftovers.set(relayId, data.subarray(room));
    else this.leftovers.delete(relayId);
    return frame(OP.binary, data.subarray(0, room));
  }

  private gone(channel: Channel): boolean {
    return this.channels.lookup(channel.id, channel.accessKey) !== channel;
  }

  private finish(relayId: string): void {
    this.relays.get(relayId)?.stop();
    this.relays.delete(relayId);
    this.pendingReads.delete(relayId);
    this.leftovers.delete(relayId);
  }

  /** Relays whose channel is gone (its engine finished with it; the other engine may have died). */
  private sweep(): void {
    for (const [relayId, relay] of this.relays) if (this.gone(relay.channel)) this.finish(relayId);
  }
}
