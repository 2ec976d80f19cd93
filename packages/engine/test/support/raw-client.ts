/**
 * A bare WebSocket client speaking the bridge protocol frame by frame, for frames no SDK would send.
 *
 * Every inbound JSON frame is kept in `frames` (the full log, in arrival order). Two ways to wait:
 * - `waitFrame(match)` looks at the log: the first matching frame, already received or still to come;
 *   asking twice gives the same frame.
 * - `next(match)` takes a frame: the first matching frame no earlier `next` (or `invoke`, or a function
 *   served by this client) took; asking twice gives two different frames. `unread` lists the frames
 *   nobody took.
 *
 * Clients made by `connect` are closed by `cleanup()` (support/cleanup.ts) if the test has not closed them.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { track } from './cleanup.js';
import { within } from './util.js';

// biome-ignore lint/suspicious/noExplicitAny: frames are arbitrary JSON
export type Frame = Record<string, any>;

type Handler = (data: unknown, frame: Frame) => unknown;

interface FrameWaiter {
  match: (frame: Frame) => boolean;
  /** Frames with a lower sequence number (arrival index) do not count (`waitFrame` only). */
  from: number;
  /** `next` (takes the frame) or `waitFrame` (only looks). */
  take: boolean;
  resolve: (frame: Frame) => void;
}

export class RawClient {
  /** Every inbound frame so far (unless `keepFrames` is off); a frame that is not JSON is `{ type: '<non-json>', raw }`. */
  readonly frames: Frame[] = [];
  /** Resolves with the close code and reason once the connection is closed. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** The close code and reason, once closed. */
  closeInfo: { code: number; reason: string } | undefined;
  /** Keep inbound frames in `frames` (turn off for floods, where only `onFrame` is used). */
  keepFrames = true;
  /** Called with every inbound frame, before anything else happens to it. */
  onFrame: ((frame: Frame) => void) | undefined;
  private readonly taken = new WeakSet<Frame>();
  private readonly waiters = new Set<FrameWaiter>();
  private readonly handlers = new Map<string, Handler>();
  /** Frames received so far, kept or not (the next frame's sequence number). */
  private received = 0;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => {
      ws.once('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        resolve(this.closeInfo);
      });
    });
    ws.on('message', (data) => this.onMessage(data.toString()));
    ws.on('error', () => {});
  }

  /**
   * Opens a connection to `baseUrl` + `path` and waits until it is open (not for `workerregistered`: see
   * `registered`). `options.headers` go on the upgrade; `autoPong: false` makes a peer that never answers
   * the engine's pings (like one whose network path is gone); `ca` is the certificate to trust for a
   * `wss://` server (a self-signed one).
   */
  static async connect(
    baseUrl: string,
    path = '/',
    options: { headers?: Record<string, string>; autoPong?: boolean; ca?: string | Buffer } = {},
  ): Promise<RawClient> {
    const ws = new WebSocket(baseUrl.replace(/\/+$/, '') + path, {
      perMessageDeflate: false,
      maxPayload: 256 * 1024 * 1024,
      headers: options.headers,
      autoPong: options.autoPong ?? true,
      ca: options.ca,
    });
    const client = new RawClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    track(() => client.close());
    return client;
  }

  /** Waits for (and takes) the `workerregistered` frame; resolves with the worker id. */
  async registered(timeoutMs = 5000): Promise<string> {
    return String((await this.next((f) => f.type === 'workerregistered', timeoutMs)).worker_id);
  }

  /** The worker id from the `workerregistered` frame, once it arrived. */
  get workerId(): string | undefined {
    return this.frames.find((f) => f.type === 'workerregistered')?.worker_id as string | undefined;
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  get isClosed(): boolean {
    return this.closeInfo !== undefined;
  }

  /** Frames received and kept that nobody took (see `next`). */
  get unread(): Frame[] {
    return this.frames.filter((f) => !this.taken.has(f));
  }

  /** Sends a frame as JSON text; a string is sent as it is (for malformed input). */
  send(frame: Frame | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  sendBinary(data: Buffer): void {
    this.ws.send(data, { binary: true });
  }

  /** The first frame (at arrival index >= `from`) matching `match`, already received or still to come. Takes nothing. */
  waitFrame(match: (frame: Frame) => boolean, timeoutMs = 2000, from = 0): Promise<Frame> {
    for (let i = from; i < this.frames.length; i++) {
      const f = this.frames[i] as Frame;
      if (match(f)) return Promise.resolve(f);
    }
    return this.wait({ match, from, take: false }, timeoutMs);
  }

  /** Takes the first frame matching `match` that nobody took yet, already received or still to come. */
  next(match: (frame: Frame) => boolean, timeoutMs = 5000): Promise<Frame> {
    const found = this.frames.find((f) => !this.taken.has(f) && match(f));
    if (found) {
      this.taken.add(found);
      return Promise.resolve(found);
    }
    return this.wait({ match, from: 0, take: true }, timeoutMs);
  }

  /** Sends a sync invocation and resolves with (takes) its `invocationresult` frame. */
  invoke(functionId: string, data?: unknown, extra: Frame = {}, timeoutMs = 5000): Promise<Frame> {
    const invocationId = randomUUID();
    const frame: Frame = { type: 'invokefunction', invocation_id: invocationId, function_id: functionId, ...extra };
    if (data !== undefined) frame.data = data;
    this.send(frame);
    return this.next((f) => f.type === 'invocationresult' && f.invocation_id === invocationId, timeoutMs);
  }

  /** Sends a JSON ping and waits for the next pong: once it arrives, the engine has handled every earlier frame. */
  async roundTrip(timeoutMs = 2000): Promise<void> {
    const from = this.received;
    this.send({ type: 'ping' });
    await this.waitFrame((f) => f.type === 'pong', timeoutMs, from);
  }

  /**
   * Registers a function served by this client (`registerfunction` with `options`): `handler`'s value (or
   * throw) becomes the result; the `invokefunction` frames it answers are taken. Does not wait: see `serve`.
   */
  registerFunction(functionId: string, handler: Handler = (data) => data, options: Frame = {}): void {
    this.handlers.set(functionId, handler);
    this.send({ type: 'registerfunction', id: functionId, ...options });
  }

  /** `registerFunction`, then a round trip so the registration is in place. */
  async serve(functionId: string, handler: Handler, options: Frame = {}): Promise<void> {
    this.registerFunction(functionId, handler, options);
    await this.roundTrip();
  }

  /** Frames of `type` received so far. */
  ofType(type: string): Frame[] {
    return this.frames.filter((f) => f.type === type);
  }

  /** Resolves with the close code and reason once the connection is closed; rejects after `timeoutMs`. */
  whenClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    return within(this.closed, timeoutMs, 'the connection close');
  }

  /** A clean close (1000), or a terminate when it takes longer than a second. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000, 'test done');
    const timer = setTimeout(() => this.ws.terminate(), 1000);
    await this.closed;
    clearTimeout(timer);
  }

  /** Drops the connection without a close frame. */
  terminate(): void {
    this.ws.terminate();
  }

  private wait(waiter: Omit<FrameWaiter, 'resolve'>, timeoutMs: number): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(entry);
        reject(new Error(`no matching frame within ${timeoutMs} ms; received: ${this.frames.map((f) => JSON.stringify(f).slice(0, 200)).join(' | ')}`));
      }, timeoutMs);
      const entry: FrameWaiter = {
        ...waiter,
        resolve: (frame) => {
          clearTimeout(timer);
          resolve(frame);
        },
      };
      this.waiters.add(entry);
    });
  }

  private onMessage(text: string): void {
    let frame: Frame;
    try {
      frame = JSON.parse(text) as Frame;
    } catch {
      frame = { type: '<non-json>', raw: text };
    }
    const seq = this.received++;
    this.onFrame?.(frame);
    if (this.keepFrames) this.frames.push(frame);
    if (this.answerInvocation(frame)) this.taken.add(frame);
    for (const w of [...this.waiters]) {
      if (w.take || seq < w.from || !w.match(frame)) continue;
      this.waiters.delete(w);
      w.resolve(frame);
    }
    if (this.taken.has(frame)) return;
    for (const w of this.waiters) {
      if (!w.take || !w.match(frame)) continue;
      this.waiters.delete(w);
      this.taken.add(frame);
      w.resolve(frame);
      return;
    }
  }

  /** Answers an `invokefunction` for a function this client serves; false when it is not one. */
  private answerInvocation(frame: Frame): boolean {
    if (frame.type !== 'invokefunction') return false;
    const handler = this.handlers.get(frame.function_id as string);
    if (!handler) return false;
    const reply = (body: Frame) => {
      if (typeof frame.invocation_id === 'string' && frame.invocation_id !== '' && this.open) {
        this.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, ...body });
      }
    };
    Promise.resolve()
      .then(() => handler(frame.data, frame))
      .then(
        (result) => reply({ result }),
        (err: unknown) => reply({ error: { code: 'invocation_failed', message: err instanceof Error ? err.message : String(err) } }),
      );
    return true;
  }
}

/** Opens a WebSocket that the server is expected to refuse; resolves with the HTTP status of the refusal. */
export async function upgradeStatus(url: string, headers?: Record<string, string>): Promise<number> {
  return (await upgradeRefusal(url, headers)).status;
}

/**
 * Opens a WebSocket that the server is expected to refuse; resolves with the refusal's status, headers and
 * body. `ca`: the certificate to trust for a `wss://` server.
 */
export function upgradeRefusal(
  url: string,
  headers?: Record<string, string>,
  ca?: string | Buffer,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, headers, ca });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.once('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        ws.terminate();
      });
    });
    ws.once('open', () => {
      ws.terminate();
      reject(new Error(`the upgrade to ${url} was accepted`));
    });
    ws.on('error', () => {});
  });
}
