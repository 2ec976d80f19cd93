import { SequenceTable } from '@flint/protocol';

/**
 * What the cluster needs of a messaging system: subjects to publish and subscribe on, request/reply,
 * and whether the link is up. NATS implements it (nats.ts); the cluster never speaks a protocol of its own
 * over a socket.
 */
export interface ClusterTransport {
  /** `NATS` or `Redis`, for messages. */
  readonly kind: string;
  /** The server URL, for messages (credentials hidden). */
  readonly shownUrl: string;
  /** False while the link to the server is down (the client reconnects by itself). */
  readonly up: boolean;
  /** The largest message the server carries (NATS: its `max_payload`); Infinity when it sets no limit. */
  readonly maxMessageBytes: number;
  /** Where that limit is set, for messages (`the NATS server's max_payload`). */
  readonly maxMessageSetting: string;
  publish(subject: string, data: Uint8Array): void;
  /** `reply` is set when the sender waits for an answer (a request). Returns what unsubscribes. */
  subscribe(subject: string, handler: (data: Uint8Array, reply: ((data: Uint8Array) => void) | undefined) => void): () => void;
  /** Rejects with a TransportError: `no_responders`, `timeout`, `down` or `too_large` (over maxMessageBytes: nothing is sent). */
  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Uint8Array>;
  /** Called with false when the link goes down and true when it is back. */
  onLink(listener: (up: boolean) => void): void;
  close(): Promise<void>;
}

interface Waiting {
  id: number;
  resolve: (data: Uint8Array) => void;
  reject: (err: TransportError) => void;
  timer: NodeJS.Timeout;
  /** The message the request travelled in (see `group`). */
  group: number | undefined;
}

/**
 * Requests waiting for their reply, by a number the transport puts in the reply subject (or in a packed
 * message): each settles once, with the reply, a TransportError, or `timeout` after its time. Requests
 * sent in one message form a group, which the server may refuse as a whole (no responders).
 *
 * The numbers are issued in order, so the requests live in a SequenceTable rather than a `Map`: a map
 * with an insert and a delete per request keeps replacing its hash table, and each replaced table keeps
 * the requests of its moment reachable for the next scavenge, so every forwarded call was promoted to the
 * old generation (sequence-table.ts).
 */
export class PendingRequests {
  private readonly pending = new SequenceTable<Waiting>();
  private next = 0;
  private nextGroup = 0;

  /** A new request: its number (32 bits, as packed messages carry it), and the promise its reply settles. */
  open(timeoutMs: number): { id: number; reply: Promise<Uint8Array> } {
    const id = this.next;
    // Wraps after 2^32 requests (days at full speed), long after any request of that number timed out.
    this.next = (this.next + 1) >>> 0;
    const reply = new Promise<Uint8Array>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(id, new TransportError('timeout', `no answer within ${timeoutMs} ms`)), timeoutMs);
      this.pending.set(id, { id, resolve, reject, timer, group: undefined });
    });
    return { id, reply };
  }

  /** Requests `ids` travel in one message: the number of their group, which the server may refuse as a whole. */
  group(ids: readonly number[]): number {
    const group = this.nextGroup;
    this.nextGroup = (this.nextGroup + 1) >>> 0;
    for (const id of ids) {
      const request = this.pending.get(id);
      if (request) request.group = group;
    }
    return group;
  }

  answer(id: number, data: Uint8Array): void {
    const request = this.take(id);
    request?.resolve(data);
  }

  fail(id: number, err: TransportError): void {
    const request = this.take(id);
    request?.reject(err);
  }

  /** Fails the requests of `group` still waiting (rare: a whole message refused). */
  failGroup(group: number, err: TransportError): void {
    for (const request of this.pending.snapshot()) if (request.group === group) this.fail(request.id, err);
  }

  failAll(err: TransportError): void {
    for (const request of this.pending.snapshot()) this.fail(request.id, err);
  }

  private take(id: number): Waiting | undefined {
    const request = this.pending.get(id);
    if (!request) return undefined;
    this.pending.delete(id);
    clearTimeout(request.timer);
    return request;
  }
}

export class TransportError extends Error {
  constructor(
    readonly kind: 'no_responders' | 'timeout' | 'down' | 'too_large',
    message: string,
    /** `too_large`: the size of the message refused. */
    readonly size?: number,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}
