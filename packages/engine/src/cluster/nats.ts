import type { NatsConnection } from 'nats';
import { type ClusterTransport, PendingRequests, TransportError } from './transport.js';
import { type BatchItem, ITEM_OVERHEAD, TurnBatches, packItems, unpackItems } from './turn-batches.js';

/** A packed request's reply subject: `<inbox>.packed.<group>`; the answers go packed to `<inbox>.packed`. */
const PACKED_REPLY = /^(.+\.packed)\.\d+$/;

/** Hides a password in a server URL. */
function shown(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

/**
 * The cluster over NATS core messaging: subjects for announcements and heartbeats, request/reply for
 * calls. The client reconnects forever by itself; `up` follows its status.
 *
 * Requests use one inbox subscription of this connection, matched here, rather than the client's
 * `request()`, which builds two error objects with stack traces for every request, answered or not (a
 * third of the engine's time per forwarded call, measured by bench/cluster).
 *
 * Requests to one subject in one turn travel packed in one message (turn-batches.ts) with the reply
 * subject `<inbox>.packed.<group>`; the answering engine packs the answers it has for this engine in a
 * turn into one message to `<inbox>.packed`. A request from any other NATS client (a plain reply subject) gets a
 * plain answer.
 */
export class NatsTransport implements ClusterTransport {
  readonly kind = 'NATS';
  readonly shownUrl: string;
  private linkUp = true;
  private readonly listeners: ((up: boolean) => void)[] = [];
  private readonly pending = new PendingRequests();
  private readonly requests = new TurnBatches(
    (subject, items) => this.sendRequests(subject, items),
    () => this.serverMaxBytes,
  );
  private readonly answers = new TurnBatches(
    (subject, items) => this.send(subject, packItems(items)),
    () => this.serverMaxBytes,
  );

  private constructor(
    private readonly nc: NatsConnection,
    url: string,
    /** This engine's reply subjects start with it (the client's createInbox). */
    private readonly inbox: string,
  ) {
    this.shownUrl = shown(url);
    void this.watch();
    const answers = `${this.inbox}.packed`;
    this.nc.subscribe(`${this.inbox}.>`, {
      callback: (err, msg) => {
        if (err) return;
        if (msg.subject === answers) {
          for (const { id, data } of unpackItems(msg.data) ?? []) this.pending.answer(id, data);
          return;
        }
        // The server answers a request nobody subscribed to with a 503 status of its own, on its reply subject.
        if (msg.headers?.code === 503) {
          const group = Number(msg.subject.slice(answers.length + 1));
          this.pending.failGroup(group, new TransportError('no_responders', 'nobody answers on that subject'));
        }
      },
    });
  }

  /** Connects; rejects with a clear message when the server cannot be reached (start-up fails then). */
  static async open(url: string, name: string, timeoutMs: number): Promise<NatsTransport> {
    // Loaded here: an engine without a cluster on NATS never loads the client.
    const { connect, createInbox, ErrorCode } = await import('nats');
    try {
      const nc = await connect({
        servers: url,
        name,
        timeout: timeoutMs,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        pingInterval: 5000,
        noAsyncTraces: true,
      });
      return new NatsTransport(nc, url, createInbox());
    } catch (err) {
      const code = (err as { code?: string }).code;
      const why = code === ErrorCode.ConnectionRefused ? 'connection refused' : err instanceof Error ? err.message : String(err);
      throw new Error(`cannot reach NATS at ${shown(url)}: ${why}`);
    }
  }

  get up(): boolean {
    return this.linkUp && !this.nc.isClosed();
  }

  /** The server's limit, in its INFO (1 MiB unless its config raises it); the client refuses bigger messages. */
  private get serverMaxBytes(): number {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  /** A request or an answer travels packed, with a few bytes of its own. */
  get maxMessageBytes(): number {
    return this.serverMaxBytes - ITEM_OVERHEAD;
  }

  readonly maxMessageSetting = `the NATS server's max_payload, less ${ITEM_OVERHEAD} bytes of framing`;

  publish(subject: string, data: Uint8Array): void {
    if (this.up) this.send(subject, data);
  }

  private send(subject: string, data: Uint8Array): void {
    try {
      this.nc.publish(subject, data);
    } catch {
      // The connection is closing: a lost announcement is repeated by the next heartbeat; a requester
      // whose answer is lost ends its wait with a time-out or a link error.
    }
  }

  subscribe(subject: string, handler: (data: Uint8Array, reply: ((data: Uint8Array) => void) | undefined) => void): () => void {
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const packed = msg.reply === undefined ? null : PACKED_REPLY.exec(msg.reply);
        if (packed) {
          const to = packed[1] as string;
          for (const { id, data } of unpackItems(msg.data) ?? []) {
            handler(data, (answer) => {
              if (answer.byteLength <= this.maxMessageBytes) this.answers.add(to, id, answer);
            });
          }
          return;
        }
        // An answer too large for the server is not sent (the client would throw): callers check the size first.
        const reply = msg.reply
          ? (data: Uint8Array) => {
              if (data.byteLength > this.maxMessageBytes) return;
              try {
                msg.respond(data);
              } catch {
                // The connection is closing: the requester's wait ends in a time-out or a link error.
              }
            }
          : undefined;
        handler(msg.data, reply);
      },
    });
    return () => {
      if (!this.nc.isClosed()) sub.unsubscribe();
    };
  }

  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
    if (!this.up) return Promise.reject(new TransportError('down', `the link to NATS at ${this.shownUrl} is down`));
    if (data.byteLength > this.maxMessageBytes) return Promise.reject(tooLarge(data.byteLength, this.maxMessageBytes));
    const { id, reply } = this.pending.open(timeoutMs);
    this.requests.add(subject, id, data);
    return reply;
  }

  private sendRequests(subject: string, items: BatchItem[]): void {
    const group = this.pending.group(items.map((item) => item.id));
    try {
      this.nc.publish(subject, packItems(items), { reply: `${this.inbox}.packed.${group}` });
    } catch (err) {
      this.pending.failGroup(group, new TransportError('down', err instanceof Error ? err.message : String(err)));
    }
  }

  onLink(listener: (up: boolean) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.answers.flush();
    this.requests.flush();
    this.pending.failAll(new TransportError('down', 'the cluster link is closing'));
    if (this.nc.isClosed()) return;
    try {
      await this.nc.drain();
    } catch {
      await this.nc.close();
    }
  }

  private async watch(): Promise<void> {
    for await (const status of this.nc.status()) {
      const up = status.type === 'reconnect' ? true : status.type === 'disconnect' ? false : undefined;
      if (up === undefined || up === this.linkUp) continue;
      this.linkUp = up;
      for (const listener of this.listeners) listener(up);
    }
  }
}

function tooLarge(size: number, limit: number): TransportError {
  return new TransportError(
    'too_large',
    `a message of ${size} bytes is over the ${limit} bytes one NATS message carries (the server's max_payload less ${ITEM_OVERHEAD} bytes of framing)`,
    size,
  );
}
