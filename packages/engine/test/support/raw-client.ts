import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';

/** Polls `check` until it returns a truthy value (returned) or `timeoutMs` passes (throws with the last reason). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 5000, intervalMs = 10, what = 'condition' }: { timeoutMs?: number; intervalMs?: number; what?: string | (() => string) } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const label = typeof what === 'function' ? what() : what;
      const detail = lastError instanceof Error ? `: ${lastError.message}` : lastError === undefined ? '' : `: ${String(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}${detail}`);
    }
    await sleep(intervalMs);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type Frame = Record<string, unknown> & { type?: string };

/**
 * A bare WebSocket worker speaking the bridge protocol by hand, for frames no SDK would send.
 * Keeps every inbound frame; `next` waits for one matching a predicate (consuming it).
 */
export class RawClient {
  readonly frames: Frame[] = [];
  readonly ws: WebSocket;
  workerId: string | undefined;
  closeInfo: { code: number; reason: string } | undefined;
  private readonly waiters = new Set<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }>();
  private readonly closed: Promise<{ code: number; reason: string }>;
  /** Handlers for `invokefunction` frames sent to this client (it answers like a worker). */
  readonly handlers = new Map<string, (data: unknown) => unknown>();
  /** Keep inbound frames in `frames` (off for floods, where only `onFrame` is used). */
  keepFrames = true;
  onFrame: ((f: Frame) => void) | undefined;

  private constructor(url: string) {
    this.ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    this.ws.on('error', () => {});
    this.ws.on('message', (data) => this.onMessage(data.toString()));
    this.closed = new Promise((resolve) =>
      this.ws.once('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        resolve(this.closeInfo);
      }),
    );
  }

  static async connect(url: string): Promise<RawClient> {
    const client = new RawClient(url);
    await new Promise<void>((resolve, reject) => {
      client.ws.once('open', () => resolve());
      client.ws.once('error', reject);
    });
    const registered = await client.next((f) => f.type === 'workerregistered');
    client.workerId = String(registered.worker_id);
    return client;
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(frame: Frame | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Waits for (and removes) the first inbound frame matching `match`. */
  next(match: (f: Frame) => boolean, timeoutMs = 5000): Promise<Frame> {
    const index = this.frames.findIndex(match);
    if (index >= 0) return Promise.resolve(this.frames.splice(index, 1)[0] as Frame);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (f: Frame) => {
          clearTimeout(timer);
          resolve(f);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no matching frame within ${timeoutMs} ms; got: ${this.frames.map((f) => JSON.stringify(f).slice(0, 200)).join(' | ')}`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Sends a sync `invokefunction` and waits for its `invocationresult`. */
  async call(functionId: string, data: unknown = {}, extra: Frame = {}, timeoutMs = 5000): Promise<Frame> {
    const id = randomUUID();
    this.send({ type: 'invokefunction', invocation_id: id, function_id: functionId, data, ...extra });
    return this.next((f) => f.type === 'invocationresult' && f.invocation_id === id, timeoutMs);
  }

  /** Registers a function answered by `handler` on this raw connection. */
  registerFunction(id: string, handler: (data: unknown) => unknown = (d) => d): void {
    this.handlers.set(id, handler);
    this.send({ type: 'registerfunction', id });
  }

  /** Resolves with the close code and reason once the connection is closed. */
  whenClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    return Promise.race([
      this.closed,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`connection not closed within ${timeoutMs} ms`)), timeoutMs).unref()),
    ]);
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const timer = setTimeout(() => this.ws.terminate(), 1000);
    this.ws.close();
    await this.closed;
    clearTimeout(timer);
  }

  terminate(): void {
    this.ws.terminate();
  }

  private onMessage(text: string): void {
    let frame: Frame;
    try {
      frame = JSON.parse(text) as Frame;
    } catch {
      frame = { type: '<undecodable>', text };
    }
    this.onFrame?.(frame);
    if (frame.type === 'invokefunction' && typeof frame.function_id === 'string' && this.handlers.has(frame.function_id)) {
      const handler = this.handlers.get(frame.function_id) as (data: unknown) => unknown;
      const reply = (body: Frame) => {
        if (typeof frame.invocation_id === 'string' && this.open) {
          this.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, ...body });
        }
      };
      Promise.resolve()
        .then(() => handler(frame.data))
        .then(
          (result) => reply({ result }),
          (err: unknown) => reply({ error: { code: 'invocation_failed', message: String(err) } }),
        );
      return;
    }
    for (const waiter of this.waiters) {
      if (waiter.match(frame)) {
        this.waiters.delete(waiter);
        waiter.resolve(frame);
        return;
      }
    }
    if (this.keepFrames) this.frames.push(frame);
  }
}
