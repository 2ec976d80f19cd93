import { randomUUID } from 'node:crypto';
import { type ErrorBody, FlintError, decodeEngineFrame } from '@flint/protocol';
import WebSocket from 'ws';
import { z } from 'zod';
import type { Logger } from '../../core/logger.js';

/** The config keys every `bridge` adapter has: where the other engine's bridge is and how to call it. */
export const bridgeClientConfig = {
  /** The engine that holds the data: its worker bridge. */
  bridge_url: z.string().min(1).default('ws://127.0.0.1:49134'),
  /** Its bridge token, if it has one (this engine's own `FLINT_BRIDGE_TOKEN` is not sent: the engines may differ). */
  token: z.string().min(1).optional(),
  /** A call with no answer within this time fails with `store_unavailable`. */
  timeout_ms: z.number().int().positive().default(10_000),
  /** How long start-up waits for the first connection. */
  connect_timeout_ms: z.number().int().positive().default(5000),
};

/** What a forwarded write answers: `state::set`/`update`, `stream::set`/`update`/`delete`. */
export interface ForwardedChange {
  old_value: unknown;
  new_value?: unknown;
  errors?: unknown[];
}

export interface BridgeClientOptions {
  /** The other engine's bridge, e.g. `ws://central:49134`. */
  url: string;
  /** Its bridge token (`Authorization: Bearer`), if it has one. */
  token?: string;
  /** A call with no answer within this time fails with `store_unavailable`. */
  timeoutMs: number;
  /** How long `open` waits for the first connection. */
  connectTimeoutMs: number;
  /** What the adapter is, for messages (`the state bridge`). */
  label: string;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: FlintError) => void;
  timer: NodeJS.Timeout;
}

const hideToken = (url: string) => url.replace(/([?&]token=)[^&#]*/, '$1***');

/**
 * A connection to another engine's bridge, as an anonymous client (it announces no worker), that calls
 * that engine's functions: what the `bridge` adapters forward through. It reconnects by itself (every
 * 250 ms to 5 s); while it is down, calls fail at once with `store_unavailable` naming the engine.
 */
export class BridgeClient {
  private ws: WebSocket | undefined;
  private readonly pending = new Map<string, Pending>();
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private attempt = 0;
  private wasUp = false;
  readonly shownUrl: string;

  private constructor(
    private readonly options: BridgeClientOptions,
    private readonly log: Logger,
  ) {
    this.shownUrl = hideToken(options.url);
  }

  /** Opens the client an adapter's config describes (`bridgeClientConfig`); `label` names the adapter in messages. */
  static fromConfig(
    config: { bridge_url: string; token?: string; timeout_ms: number; connect_timeout_ms: number },
    label: string,
    log: Logger,
  ): Promise<BridgeClient> {
    return BridgeClient.open(
      { url: config.bridge_url, token: config.token, timeoutMs: config.timeout_ms, connectTimeoutMs: config.connect_timeout_ms, label },
      log,
    );
  }

  /** Connects; rejects with `store_unavailable` when the engine cannot be reached (start-up fails then). */
  static async open(options: BridgeClientOptions, log: Logger): Promise<BridgeClient> {
    const client = new BridgeClient(options, log);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.closed = true;
        client.ws?.terminate();
        reject(client.unavailable(`no connection within ${options.connectTimeoutMs} ms`));
      }, options.connectTimeoutMs);
      client.connect((err) => {
        clearTimeout(timer);
        if (err) {
          client.closed = true;
          reject(client.unavailable(err.message));
        } else resolve();
      });
    });
    return client;
  }

  get up(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Calls `functionId` on the other engine; its failure keeps its code (`invalid_payload`, …). */
  call<T = unknown>(functionId: string, payload: unknown): Promise<T> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.reject(this.unavailable('not connected'));
    const id = randomUUID();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(this.unavailable(`no answer to ${functionId} within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      ws.send(JSON.stringify({ type: 'invokefunction', invocation_id: id, function_id: functionId, data: payload ?? null }));
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.failAll('the bridge is closing');
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close(1000, 'engine shutting down');
      setTimeout(() => {
        ws.terminate();
        resolve();
      }, 1000).unref();
    });
  }

  private connect(first?: (err?: Error) => void): void {
    const headers = this.options.token ? { authorization: `Bearer ${this.options.token}` } : undefined;
    const ws = new WebSocket(this.options.url, { headers, perMessageDeflate: false });
    this.ws = ws;
    ws.on('open', () => {
      this.attempt = 0;
      if (this.wasUp) this.log.info({ url: this.shownUrl }, `${this.options.label}: connected to ${this.shownUrl} again`);
      this.wasUp = true;
      first?.();
      first = undefined;
    });
    ws.on('message', (data) => this.onMessage(data.toString()));
    ws.on('error', (err) => {
      if (first) {
        first(err);
        first = undefined;
      }
    });
    ws.on('unexpected-response', (_req, res) => {
      const err = new Error(`HTTP ${res.statusCode}${res.statusCode === 401 ? ' (wrong or missing bridge token)' : ''}`);
      ws.terminate();
      if (first) {
        first(err);
        first = undefined;
      }
    });
    ws.once('close', () => {
      if (this.ws !== ws) return;
      this.failAll('the connection was lost before the answer came');
      if (this.closed || first) return;
      if (this.attempt === 0) this.log.warn({ url: this.shownUrl }, `${this.options.label}: lost the connection to ${this.shownUrl}; reconnecting`);
      const delay = Math.min(250 * 2 ** this.attempt++, 5000);
      this.retry = setTimeout(() => this.connect(), delay);
      this.retry.unref();
    });
  }

  private onMessage(text: string): void {
    const decoded = decodeEngineFrame(text);
    if (!decoded.ok || decoded.message.type !== 'invocationresult') return;
    const msg = decoded.message;
    const pending = this.pending.get(msg.invocation_id);
    if (!pending) return;
    this.pending.delete(msg.invocation_id);
    clearTimeout(pending.timer);
    if (msg.error) pending.reject(FlintError.fromBody(msg.error as ErrorBody));
    else pending.resolve(msg.result === undefined ? null : msg.result);
  }

  private failAll(reason: string): void {
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(this.unavailable(reason));
    }
  }

  private unavailable(reason: string): FlintError {
    return new FlintError('store_unavailable', `${this.options.label}: the engine at ${this.shownUrl} cannot be reached: ${reason}`);
  }
}
