/**
 * Helpers for the stream module tests (stream/*.test.ts): an engine with flint-stream on ephemeral ports,
 * its listener URL, and a raw stream client that keeps every frame it receives.
 */
import type { Engine, Logger } from '@flint/engine';
import WebSocket from 'ws';
import { track } from '../cleanup.js';
import { startTestEngine } from '../harness.js';
import { waitFor, within } from '../util.js';

// biome-ignore lint/suspicious/noExplicitAny: frames are arbitrary JSON
export type StreamFrame = Record<string, any>;

/** Starts an in-process engine whose only module is flint-stream (port 0) with `streamConfig` merged in. */
export function startStreamEngine(streamConfig: Record<string, unknown> = {}, options: { logger?: Logger; modules?: unknown[] } = {}): Promise<Engine> {
  return startTestEngine({ modules: [{ name: 'flint-stream', config: { port: 0, ...streamConfig } }, ...(options.modules ?? [])] }, { logger: options.logger });
}

/** The stream listener's URL (`ws://127.0.0.1:PORT`). */
export function streamUrl(engine: Engine): string {
  const listener = engine.listeners().find((l) => l.name === 'stream');
  if (!listener) throw new Error('the engine has no stream listener');
  return listener.url;
}

/**
 * A bare WebSocket client of the stream listener: `frames` holds every JSON frame received, in order;
 * `join`/`leave` send the protocol's frames; `waitFrame(match)` waits for a matching frame (received or to come).
 */
export class StreamTestClient {
  readonly frames: StreamFrame[] = [];
  closeCode: number | undefined;
  closeReason = '';
  private readonly closed: Promise<void>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      try {
        this.frames.push(JSON.parse(String(data)));
      } catch {
        this.frames.push({ unparsed: String(data) });
      }
    });
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = String(reason);
        resolve();
      }),
    );
  }

  /** Connects to `url` (the listener URL, optionally with a `/stream/…` path and a query); rejects on a refused upgrade with its status. */
  static async connect(url: string, options: WebSocket.ClientOptions = {}): Promise<StreamTestClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...options });
    const client = new StreamTestClient(ws);
    track(() => client.close());
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk;
        });
        res.on('end', () =>
          reject(Object.assign(new Error(`HTTP ${res.statusCode}: ${body}`), { status: res.statusCode, body: body ? JSON.parse(body) : undefined })),
        );
      });
      ws.once('error', reject);
    });
    return client;
  }

  join(subscriptionId: string, streamName: string, groupId: string, id?: string): void {
    this.send({ type: 'join', data: { subscriptionId, streamName, groupId, ...(id === undefined ? {} : { id }) } });
  }

  leave(subscriptionId: string, streamName: string, groupId: string, id?: string): void {
    this.send({ type: 'leave', data: { subscriptionId, streamName, groupId, ...(id === undefined ? {} : { id }) } });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The first frame matching `match` (already received or still to come). */
  waitFrame(match: (frame: StreamFrame) => boolean, timeoutMs = 3000, what = 'a matching stream frame'): Promise<StreamFrame> {
    return waitFor(
      () => this.frames.find(match),
      timeoutMs,
      () => `${what} (received: ${JSON.stringify(this.frames).slice(0, 600)})`,
    );
  }

  /** Frames whose event type is `type` (sync, create, update, delete, event, unauthorized). */
  ofType(type: string): StreamFrame[] {
    return this.frames.filter((f) => f.event?.type === type);
  }

  /** Resolves once the socket is closed (by either side). */
  whenClosed(timeoutMs = 5000): Promise<void> {
    return within(this.closed, timeoutMs, 'the stream connection to close');
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.ws.close();
    await Promise.race([this.closed, new Promise((r) => setTimeout(r, 1000))]);
    this.ws.terminate();
  }
}

/** True for a frame of `event` type about stream/group (and item, when given). */
export const isFrame =
  (event: string, stream: string, group: string, id?: string | null) =>
  (f: StreamFrame): boolean =>
    f.type === 'stream' && f.event?.type === event && f.streamName === stream && f.groupId === group && (id === undefined || f.id === id);
