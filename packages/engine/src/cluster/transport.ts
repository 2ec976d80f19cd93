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
  publish(subject: string, data: Uint8Array): void;
  /** `reply` is set when the sender waits for an answer (a request). Returns what unsubscribes. */
  subscribe(subject: string, handler: (data: Uint8Array, reply: ((data: Uint8Array) => void) | undefined) => void): () => void;
  /** Rejects with a TransportError: `no_responders`, `timeout` or `down`. */
  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Uint8Array>;
  /** Called with false when the link goes down and true when it is back. */
  onLink(listener: (up: boolean) => void): void;
  close(): Promise<void>;
}

export class TransportError extends Error {
  constructor(
    readonly kind: 'no_responders' | 'timeout' | 'down',
    message: string,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}
