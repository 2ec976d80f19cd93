import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { type ClusterTransport, PendingRequests, TransportError } from './transport.js';
import { type BatchItem, TurnBatches, packItems, unpackItems } from './turn-batches.js';

/** A packed request's reply channel: `<inbox>:packed:<group>`; the answers go packed to `<inbox>:packed`. */
const PACKED_REPLY = /^(.+:packed):\d+$/;
/** Requests (or answers) travel together up to this size; a larger one travels alone. */
const PACK_BYTES = 1024 * 1024;

/** Hides a password in a server URL. */
function shown(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/**
 * A message on a Redis channel: a flag byte (1 when a reply subject follows), the reply subject's
 * length (2 bytes) and text, then the payload. Redis pub/sub has no reply subjects of its own.
 */
function envelope(data: Uint8Array, reply?: string): Buffer {
  if (reply === undefined) return Buffer.concat([Buffer.from([0]), data]);
  const subject = Buffer.from(reply, 'utf8');
  const head = Buffer.alloc(3);
  head[0] = 1;
  head.writeUInt16BE(subject.length, 1);
  return Buffer.concat([head, subject, data]);
}

function open(message: Buffer): { reply: string | undefined; data: Uint8Array } {
  if (message[0] !== 1) return { reply: undefined, data: message.subarray(1) };
  const length = message.readUInt16BE(1);
  return { reply: message.subarray(3, 3 + length).toString('utf8'), data: message.subarray(3 + length) };
}

/**
 * The cluster over Redis pub/sub: a connection for PUBLISH and one for SUBSCRIBE. Requests carry a
 * reply channel of this engine's (one pattern subscription, `<inbox>:*`) in the message envelope; a
 * PUBLISH that reached no subscriber is `no_responders` at once. As on NATS, the requests to one channel
 * in a turn travel packed in one message (turn-batches.ts), replied to on `<inbox>:packed:<group>`, and
 * the answering engine packs the answers it has for this engine in a turn into one message to
 * `<inbox>:packed`; a request with a plain reply channel gets a plain answer. Both connections reconnect by
 * themselves (ioredis re-subscribes); `up` is true while both are ready.
 */
export class RedisTransport implements ClusterTransport {
  /** Redis carries up to 512 MB in a message (its proto-max-bulk-len); the cluster sets no limit of its own. */
  readonly maxMessageBytes = Number.POSITIVE_INFINITY;
  readonly maxMessageSetting = "Redis's proto-max-bulk-len";
  readonly kind = 'Redis';
  readonly shownUrl: string;
  private readonly handlers = new Map<string, (data: Uint8Array, reply: ((data: Uint8Array) => void) | undefined) => void>();
  private readonly listeners: ((up: boolean) => void)[] = [];
  private readonly inbox = `flint-inbox.${randomUUID()}`;
  private readonly pending = new PendingRequests();
  private readonly requests = new TurnBatches(
    (subject, items) => this.sendRequests(subject, items),
    () => PACK_BYTES,
  );
  private readonly answers = new TurnBatches(
    (subject, items) => void this.pub.publish(subject, envelope(packItems(items))).catch(() => {}),
    () => PACK_BYTES,
  );
  private linkUp = true;

  private constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    url: string,
  ) {
    this.shownUrl = shown(url);
    sub.on('messageBuffer', (channel: Buffer, message: Buffer) => this.onMessage(channel.toString('utf8'), message));
    sub.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, message: Buffer) => this.onReply(channel.toString('utf8'), message));
    for (const conn of [pub, sub]) {
      conn.on('ready', () => this.setLink());
      conn.on('close', () => this.setLink());
    }
  }

  /** Connects both connections; rejects with a clear message when the server cannot be reached. */
  static async open(url: string, name: string, timeoutMs: number): Promise<RedisTransport> {
    const options = {
      lazyConnect: true,
      connectTimeout: timeoutMs,
      connectionName: name,
      maxRetriesPerRequest: 1,
      // Commands fail at once while the link is down: a stale publish sent after a reconnect helps nobody.
      enableOfflineQueue: false,
      retryStrategy: () => 250,
    };
    // Loaded here: an engine without a cluster on Redis never loads ioredis.
    const { Redis: RedisClient } = await import('ioredis');
    const pub: Redis = new RedisClient(url, options);
    const sub: Redis = new RedisClient(url, { ...options, enableOfflineQueue: true });
    // A failed first connect is reported by connect() below; later errors through the link state.
    for (const conn of [pub, sub]) conn.on('error', () => {});
    try {
      await Promise.all([pub.connect(), sub.connect()]);
    } catch (err) {
      pub.disconnect();
      sub.disconnect();
      const code = (err as { code?: string }).code;
      const why = code === 'ECONNREFUSED' ? 'connection refused' : err instanceof Error ? err.message : String(err);
      throw new Error(`cannot reach Redis at ${shown(url)}: ${why}`);
    }
    const transport = new RedisTransport(pub, sub, url);
    await sub.psubscribe(`${transport.inbox}:*`);
    return transport;
  }

  get up(): boolean {
    return this.linkUp && this.pub.status === 'ready' && this.sub.status === 'ready';
  }

  publish(subject: string, data: Uint8Array): void {
    if (!this.up) return;
    this.pub.publish(subject, envelope(data)).catch(() => {}); // a lost announcement is repeated by the next heartbeat
  }

  subscribe(subject: string, handler: (data: Uint8Array, reply: ((data: Uint8Array) => void) | undefined) => void): () => void {
    this.handlers.set(subject, handler);
    void this.sub.subscribe(subject).catch(() => {});
    return () => {
      if (this.handlers.get(subject) !== handler) return;
      this.handlers.delete(subject);
      if (this.sub.status === 'ready') void this.sub.unsubscribe(subject).catch(() => {});
    };
  }

  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
    if (!this.up) return Promise.reject(new TransportError('down', `the link to Redis at ${this.shownUrl} is down`));
    const { id, reply } = this.pending.open(timeoutMs);
    this.requests.add(subject, id, data);
    return reply;
  }

  private sendRequests(subject: string, items: BatchItem[]): void {
    const group = this.pending.group(items.map((item) => item.id));
    this.pub.publish(subject, envelope(packItems(items), `${this.inbox}:packed:${group}`)).then(
      (receivers) => {
        if (receivers === 0) this.pending.failGroup(group, new TransportError('no_responders', 'nobody answers on that subject'));
      },
      (err: unknown) => this.pending.failGroup(group, new TransportError('down', err instanceof Error ? err.message : String(err))),
    );
  }

  onLink(listener: (up: boolean) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.answers.flush();
    this.requests.flush();
    this.pending.failAll(new TransportError('down', 'the cluster link is closing'));
    this.listeners.length = 0;
    await Promise.all([this.pub.quit().catch(() => this.pub.disconnect()), this.sub.quit().catch(() => this.sub.disconnect())]);
  }

  private onMessage(channel: string, message: Buffer): void {
    const handler = this.handlers.get(channel);
    if (!handler || message.length === 0) return;
    const { reply, data } = open(message);
    const packed = reply === undefined ? null : PACKED_REPLY.exec(reply);
    if (packed) {
      const to = packed[1] as string;
      for (const item of unpackItems(data) ?? []) handler(item.data, (out) => this.answers.add(to, item.id, out));
      return;
    }
    const answer = reply === undefined ? undefined : (out: Uint8Array) => void this.pub.publish(reply, envelope(out)).catch(() => {});
    handler(data, answer);
  }

  private onReply(channel: string, message: Buffer): void {
    if (channel !== `${this.inbox}:packed`) return;
    for (const { id, data } of unpackItems(open(message).data) ?? []) this.pending.answer(id, data);
  }

  private setLink(): void {
    const up = this.pub.status === 'ready' && this.sub.status === 'ready';
    if (up === this.linkUp) return;
    this.linkUp = up;
    for (const listener of this.listeners) listener(up);
  }
}
