import { type Server, type Socket, connect, createServer } from 'node:net';

/** Which way bytes flow through the proxy: `up` = client → engine, `down` = engine → client. */
export type Direction = 'up' | 'down' | 'both';

export interface CutOptions {
  /** `true`: send a TCP RST (`resetAndDestroy`), else a plain FIN (`destroy`). Both are abrupt for a WebSocket: no close frame. */
  reset?: boolean;
  /**
   * Cut the client side at once but the engine side only this many ms later (nothing is forwarded
   * meanwhile): the engine learns about the failure late, after the worker may already have
   * reconnected and re-registered on a new connection. Default 0.
   */
  upstreamDelayMs?: number;
}

interface Pair {
  id: number;
  client: Socket;
  upstream: Socket;
  /** Bytes forwarded client → engine / engine → client. */
  up: number;
  down: number;
  /** Once set, nothing more is forwarded for this pair (a cut is in progress). */
  frozen: boolean;
}

interface ArmedCut {
  remaining: number;
  direction: Direction;
  options: CutOptions;
  settle: (fired: boolean) => void;
}

/**
 * A TCP proxy for tests: forwards every accepted connection to `target` and can cut all of them
 * abruptly, like a network failure (no WebSocket close frame), either at once (`cutAll`) or after a
 * given number of forwarded bytes (`cutAfter`), which lands in the middle of a frame.
 */
export class CuttingProxy {
  private readonly server: Server;
  private readonly pairs = new Set<Pair>();
  private readonly delayed = new Map<NodeJS.Timeout, Socket>();
  private armed: ArmedCut | undefined;
  private nextId = 1;
  /** Connections accepted so far. */
  accepted = 0;
  /** Cuts performed so far (one `cutAll` or one fired `cutAfter` = one cut). */
  cuts = 0;
  port = 0;

  private constructor(private readonly target: { host: string; port: number }) {
    this.server = createServer({ noDelay: true }, (client) => this.onClient(client));
  }

  /** Starts a proxy on an ephemeral 127.0.0.1 port forwarding to `target`. */
  static async start(target: { host: string; port: number }): Promise<CuttingProxy> {
    const proxy = new CuttingProxy(target);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', () => {
        proxy.server.off('error', reject);
        resolve();
      });
    });
    const address = proxy.server.address();
    proxy.port = typeof address === 'object' && address ? address.port : 0;
    return proxy;
  }

  /** Builds a proxy for a `ws://host:port` URL. */
  static forUrl(url: string): Promise<CuttingProxy> {
    const u = new URL(url);
    return CuttingProxy.start({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) });
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  /** Client/upstream pairs currently open. */
  get openPairs(): number {
    return this.pairs.size;
  }

  /** Engine-side sockets of cut pairs still waiting for their delayed cut (`upstreamDelayMs`). */
  get delayedCuts(): number {
    return this.delayed.size;
  }

  /** Destroys every open client/upstream socket pair at once. Returns how many pairs were cut. */
  cutAll(options: CutOptions = {}): number {
    const pairs = [...this.pairs];
    for (const pair of pairs) this.destroyPair(pair, options);
    this.cuts++;
    return pairs.length;
  }

  /**
   * Arms a cut that fires once `bytes` more bytes have been forwarded in `direction` (counted over
   * all pairs, including ones accepted later): exactly that many bytes are delivered, then every
   * pair is cut. Resolves `true` when it fired, `false` when disarmed first. One armed cut at a time.
   */
  cutAfter(bytes: number, direction: Direction = 'up', options: CutOptions = {}): Promise<boolean> {
    if (!(bytes >= 0)) throw new Error('bytes must be >= 0');
    this.disarm();
    return new Promise<boolean>((settle) => {
      this.armed = { remaining: Math.floor(bytes), direction, options, settle };
    });
  }

  /** Cancels an armed `cutAfter` (it resolves `false`). */
  disarm(): void {
    const armed = this.armed;
    this.armed = undefined;
    armed?.settle(false);
  }

  async close(): Promise<void> {
    this.disarm();
    for (const pair of [...this.pairs]) this.destroyPair(pair, {});
    for (const [timer, socket] of this.delayed) {
      clearTimeout(timer);
      socket.destroy();
    }
    this.delayed.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onClient(client: Socket): void {
    this.accepted++;
    const upstream = connect({ host: this.target.host, port: this.target.port, noDelay: true });
    const pair: Pair = { id: this.nextId++, client, upstream, up: 0, down: 0, frozen: false };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => this.forward(pair, chunk, 'up'));
    upstream.on('data', (chunk: Buffer) => this.forward(pair, chunk, 'down'));
    // A clean end on one side is passed on; anything else tears the pair down.
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    const teardown = () => this.destroyPair(pair, {});
    client.on('close', teardown);
    upstream.on('close', teardown);
    client.on('error', () => {});
    upstream.on('error', () => {});
  }

  private forward(pair: Pair, chunk: Buffer, dir: 'up' | 'down'): void {
    if (pair.frozen) return;
    const src = dir === 'up' ? pair.client : pair.upstream;
    const dst = dir === 'up' ? pair.upstream : pair.client;
    const armed = this.armed;
    if (armed && (armed.direction === 'both' || armed.direction === dir)) {
      if (chunk.length >= armed.remaining) {
        this.armed = undefined;
        const part = chunk.subarray(0, armed.remaining);
        // Freeze everything so no more bytes pass, deliver the partial chunk, then cut.
        for (const p of this.pairs) p.frozen = true;
        const cut = () => {
          const pairs = [...this.pairs].filter((p) => p.frozen);
          for (const p of pairs) this.destroyPair(p, armed.options);
          this.cuts++;
          armed.settle(true);
        };
        if (part.length > 0 && !dst.destroyed) {
          if (dir === 'up') pair.up += part.length;
          else pair.down += part.length;
          dst.write(part, () => cut());
        } else {
          cut();
        }
        return;
      }
      armed.remaining -= chunk.length;
    }
    if (dir === 'up') pair.up += chunk.length;
    else pair.down += chunk.length;
    if (!dst.write(chunk)) {
      src.pause();
      dst.once('drain', () => src.resume());
    }
  }

  private destroyPair(pair: Pair, options: CutOptions): void {
    if (!this.pairs.delete(pair)) return;
    pair.frozen = true;
    const reset = options.reset ?? false;
    this.destroySocket(pair.client, reset);
    const delay = options.upstreamDelayMs ?? 0;
    if (delay <= 0) {
      this.destroySocket(pair.upstream, reset);
      return;
    }
    const timer = setTimeout(() => {
      this.delayed.delete(timer);
      this.destroySocket(pair.upstream, reset);
    }, delay);
    this.delayed.set(timer, pair.upstream);
  }

  private destroySocket(socket: Socket, reset: boolean): void {
    if (socket.destroyed) return;
    // resetAndDestroy only works on a connected socket; fall back to destroy otherwise.
    if (reset && !socket.connecting && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
    else socket.destroy();
  }
}
