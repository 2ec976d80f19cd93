import type { Socket } from 'node:net';
import { FrameBatcher, type InvokeFunctionMessage, REATTACH_HEADER } from '@flint/protocol';
import WebSocket from 'ws';
import { type ReconnectOptions, reconnectDelay } from './backoff.js';
import { type ConnectionProblem, problemKey, refusalOf, refused, shownUrl, unreachable } from './connection-problem.js';

export type ConnectionState = 'connecting' | 'connected' | 'disconnected' | 'failed' | 'shutdown';

export interface ConnectionOptions {
  reconnect: ReconnectOptions;
  /** Extra headers on the WebSocket upgrade. */
  headers?: Record<string, string>;
  /** The upgrade carries the bridge token (a header or the URL's `?token=`): a refusal then means a wrong token. */
  sendsToken: boolean;
  /** Cap on frames queued while disconnected. */
  maxQueuedFrames: number;
  log: Pick<Console, 'warn' | 'error' | 'debug'>;
}

/** What the connection asks of the worker it carries. */
export interface ConnectionHost {
  /** Sends every registration again (with `sendNow`): on each open, before the queued frames. */
  replay(): void;
  /** A queued call is about to be sent; false for one nobody awaits any more (it timed out meanwhile): it is dropped. */
  sending(invocationId: string): boolean;
  /** The connection is open, and the registrations and queued frames are written. */
  opened(): void;
  message(data: WebSocket.RawData): void;
  /** An open connection closed; a reconnect follows unless the retries are used up. */
  disconnected(): void;
  /** Reconnecting stopped after `reconnect.maxRetries` attempts. */
  failed(): void;
}

const QUEUED_TYPES = new Set(['invokefunction', 'invocationresult', 'unregistertrigger', 'triggerregistrationresult']);
/**
 * A call queued while the next reconnect attempt is further away than this brings the attempt
 * forward (at most once per this interval): after a long outage the backoff may be 30 s, longer than
 * a call waits for a connection, and the engine may well be back.
 */
const EARLY_ATTEMPT_MS = 1000;

/**
 * The WebSocket to the engine: connects and reconnects with backoff, queues calls and results while
 * disconnected, and coalesces the frames it writes into few socket writes (FrameBatcher).
 */
export class Connection {
  state: ConnectionState = 'connecting';
  /** Why the last attempt to connect failed; undefined once connected. */
  problem: ConnectionProblem | undefined;
  /**
   * The reattach token the engine gave the current connection (`workerregistered`): presented on the
   * next connect, so that the engine hands this worker's triggers to the new connection at once.
   */
  reattachToken: string | undefined;
  /** The URL as messages show it (a `?token=` value hidden). */
  readonly shownUrl: string;
  private ws: WebSocket | undefined;
  /** The failure of the attempt in progress (the first one seen wins). */
  private attemptProblem: ConnectionProblem | undefined;
  /** The key of the problem last logged: a retry failing the same way stays quiet. */
  private reported: string | undefined;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** When the pending reconnect attempt is due (ms since the epoch). */
  private nextAttemptAt = 0;
  private lastEarlyAttempt = 0;
  private outbox: Record<string, unknown>[] = [];
  /** Batches the writes to the current connection's socket. */
  private batcher: FrameBatcher | undefined;

  constructor(
    readonly url: string,
    private readonly options: ConnectionOptions,
    private readonly host: ConnectionHost,
  ) {
    this.shownUrl = shownUrl(url);
  }

  /** Frames waiting for the next connect. */
  get queued(): number {
    return this.outbox.length;
  }

  /** Reconnect attempts made since the last open connection. */
  get attempts(): number {
    return this.attempt;
  }

  connect(): void {
    this.state = 'connecting';
    this.attemptProblem = undefined;
    const headers = this.reattachToken === undefined ? this.options.headers : { ...this.options.headers, [REATTACH_HEADER]: this.reattachToken };
    const ws = new WebSocket(this.url, { headers, perMessageDeflate: false });
    this.ws = ws;
    // A plain HTTP answer (the engine's HTTP port, another program): not a bridge. Abort the handshake
    // (the 'error' that follows is this abort, not news).
    ws.on('unexpected-response', (_req, res) => {
      // The engine's refusals carry {error, code} (e.g. its auth function's reason): read a little of it.
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 4096) body += chunk;
      });
      const done = () => {
        if (this.ws === ws) this.attemptProblem ??= refused(this.shownUrl, res.statusCode ?? 0, this.options.sendsToken, refusalOf(body));
        ws.terminate();
      };
      res.once('end', done);
      res.once('error', done);
    });
    ws.on('upgrade', (response) => {
      if (this.ws !== ws) return;
      const socket = response.socket as Socket;
      socket.setNoDelay(true);
      this.batcher = new FrameBatcher(socket);
    });
    ws.on('open', () => this.onOpen(ws));
    ws.on('message', (data) => this.host.message(data));
    ws.on('error', (err) => {
      if (this.ws !== ws) return;
      if (this.state === 'connecting') this.attemptProblem ??= unreachable(this.shownUrl, err);
      else this.options.log.debug(`[flint] connection error: ${err.message}`);
    });
    ws.once('close', () => this.onClose(ws));
  }

  /** Stops reconnecting, drops the queued frames and closes the connection (forcibly after 1 s). */
  async shutdown(): Promise<void> {
    this.state = 'shutdown';
    clearTimeout(this.reconnectTimer);
    this.outbox = [];
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 1000);
      ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000, 'worker shutdown');
    });
  }

  /** Registration frames: sent when connected, else dropped (the registrations are replayed on connect). */
  sendNow(frame: object): void {
    if (this.state === 'connected' && this.ws?.readyState === WebSocket.OPEN) this.write(this.ws, JSON.stringify(frame));
  }

  /** A binary telemetry frame (`OTLP…`): sent when connected, else false (the caller keeps it for later). */
  sendTelemetry(frame: Buffer): boolean {
    if (this.state !== 'connected' || this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(frame, { binary: true });
    return true;
  }

  /** Calls and results: sent when connected, else queued until the next connect. False when the queue is full. */
  send(frame: Record<string, unknown> | InvokeFunctionMessage): 'sent' | 'queued' | false {
    if (this.state === 'connected' && this.ws?.readyState === WebSocket.OPEN) {
      this.write(this.ws, JSON.stringify(frame));
      return 'sent';
    }
    if (this.state === 'shutdown' || !QUEUED_TYPES.has(frame.type as string)) return false;
    if (this.outbox.length >= this.options.maxQueuedFrames) return false;
    this.outbox.push(frame as Record<string, unknown>);
    if (frame.type === 'invokefunction') this.hurry();
    return 'queued';
  }

  /**
   * A frame already written out (see resultFrame): sent when connected, else `frame()` is queued like
   * `send` would (the text is not kept: a queued frame may still be looked at, see `unqueue`).
   */
  sendText(text: string, frame: () => Record<string, unknown>): 'sent' | 'queued' | false {
    if (this.state === 'connected' && this.ws?.readyState === WebSocket.OPEN) {
      this.write(this.ws, text);
      return 'sent';
    }
    return this.send(frame());
  }

  /** Brings a distant reconnect attempt forward for a call that waits (see EARLY_ATTEMPT_MS). */
  private hurry(): void {
    if (this.state !== 'disconnected' || this.reconnectTimer === undefined) return;
    const now = Date.now();
    if (this.nextAttemptAt - now <= EARLY_ATTEMPT_MS || now - this.lastEarlyAttempt < EARLY_ATTEMPT_MS) return;
    this.lastEarlyAttempt = now;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.connect();
  }

  /** Takes a queued frame back (its call gave up waiting), so it no longer counts against the queue. */
  unqueue(frame: object): void {
    const i = this.outbox.indexOf(frame as Record<string, unknown>);
    if (i >= 0) this.outbox.splice(i, 1);
  }

  private onOpen(ws: WebSocket): void {
    if (this.ws !== ws) return;
    this.state = 'connected';
    this.attempt = 0;
    this.problem = undefined;
    // Once connected, the next failure is news again.
    this.reported = undefined;
    // Full replay: the engine gave this connection a new worker id and knows nothing of it yet.
    this.host.replay();
    const queued = this.outbox;
    this.outbox = [];
    for (const frame of queued) {
      if (frame.type === 'invokefunction' && typeof frame.invocation_id === 'string' && !this.host.sending(frame.invocation_id)) continue;
      this.sendNow(frame);
    }
    this.host.opened();
  }

  private onClose(ws: WebSocket): void {
    if (this.ws !== ws) return;
    const wasConnected = this.state === 'connected';
    if (this.state === 'shutdown') return;
    this.state = 'disconnected';
    if (wasConnected) this.host.disconnected();
    else this.attemptFailed();
    const { maxRetries } = this.options.reconnect;
    if (maxRetries >= 0 && this.attempt >= maxRetries) {
      this.state = 'failed';
      if (maxRetries > 0) this.options.log.error(`[flint] giving up on ${this.shownUrl} after ${this.attempt} reconnect attempts`);
      this.host.failed();
      return;
    }
    const delay = reconnectDelay(this.options.reconnect, this.attempt++);
    this.nextAttemptAt = Date.now() + delay;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect();
    }, delay);
  }

  /** Logs why an attempt failed once per situation; retries failing the same way stay quiet. */
  private attemptFailed(): void {
    const problem = this.attemptProblem;
    if (!problem) return;
    this.problem = problem;
    const key = problemKey(problem);
    if (key === this.reported) return;
    this.reported = key;
    const { maxRetries } = this.options.reconnect;
    const retrying = maxRetries < 0 || this.attempt < maxRetries;
    this.options.log.warn(`[flint] ${problem.message}${retrying ? '; retrying quietly' : ''}`);
  }

  /** Writes one frame, batched with the others of its burst (see FrameBatcher for the policy). */
  private write(ws: WebSocket, text: string): void {
    const batcher = this.batcher;
    batcher?.beforeWrite();
    ws.send(text);
    batcher?.afterWrite();
  }
}
