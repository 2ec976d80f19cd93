import { type NatsConnection, ErrorCode as NatsErrorCode, connect, createInbox } from 'nats';
import { type ClusterTransport, PendingRequests, TransportError } from './transport.js';

/** Hides a password in a server URL. */
function shown(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

/**
 * The cluster over NATS core messaging: subjects for announcements and heartbeats, request/reply for
 * calls. The client reconnects forever by itself; `up` follows its status.
 *
 * Requests use one inbox subscription of this connection (`<inbox>.<n>` reply subjects) matched here,
 * rather than the client's `request()`, which builds two error objects with stack traces for every
 * request, answered or not (a third of the engine's time per forwarded call, measured by bench/cluster).
 */
export class NatsTransport implements ClusterTransport {
  readonly kind = 'NATS';
  readonly shownUrl: string;
  private linkUp = true;
  private readonly listeners: ((up: boolean) => void)[] = [];
  private readonly inbox = createInbox();
  private readonly pending = new PendingRequests();

  private constructor(
    private readonly nc: NatsConnection,
    url: string,
  ) {
    this.shownUrl = shown(url);
    void this.watch();
    const prefix = this.inbox.length + 1;
    this.nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err) return;
        const id = Number(msg.subject.slice(prefix));
        // The server answers a request nobody subscribed to with a 503 status of its own.
        if (msg.headers?.code === 503) this.pending.fail(id, new TransportError('no_responders', 'nobody answers on that subject'));
        else this.pending.answer(id, msg.data);
      },
    });
  }

  /** Connects; rejects with a clear message when the server cannot be reached (start-up fails then). */
  static async open(url: string, name: string, timeoutMs: number): Promise<NatsTransport> {
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
      return new NatsTransport(nc, url);
    } catch (err) {
      const code = (err as { code?: string }).code;
      const why = code === NatsErrorCode.ConnectionRefused ? 'connection refused' : err instanceof Error ? err.message : String(err);
      throw new Error(`cannot reach NATS at ${shown(url)}: ${why}`);
    }
  }

  get up(): boolean {
    return this.linkUp && !this.nc.isClosed();
  }

  get maxMessageBytes(): number {
    // The server says in its INFO (1 MiB unless its config raises it); the client refuses bigger messages.
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  readonly maxMessageSetting = "the NATS server's max_payload";

  publish(subject: string, data: Uint8Array): void {
    if (!this.up) return;
    try {
      this.nc.publish(subject, data);
    } catch {
      // The connection is closing: a lost announcement is repeated by the next heartbeat.
    }
  }

  subscribe(subject: string, handler: (data: Uint8Array, reply: ((data: Uint8Array) => void) | undefined) => void): () => void {
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
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
    try {
      this.nc.publish(subject, data, { reply: `${this.inbox}.${id}` });
    } catch (err) {
      this.pending.fail(id, new TransportError('down', err instanceof Error ? err.message : String(err)));
    }
    return reply;
  }

  onLink(listener: (up: boolean) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
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
  return new TransportError('too_large', `a message of ${size} bytes is over the NATS server's max_payload of ${limit} bytes`, size);
}
