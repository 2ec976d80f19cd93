import type { ServerResponse } from 'node:http';
import type { ChannelItem, EngineChannel } from '../../core/module-api.js';
import type { Headers } from './respond.js';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface StreamResponseOptions {
  res: ServerResponse;
  /** The engine's (reading) end of the response channel. */
  channel: EngineChannel;
  /** The invocation's outcome; its own time-out bounds the wait for it. */
  result: Promise<Outcome>;
  /** When a result or the first body byte must have arrived (epoch ms). */
  headDeadline: number;
  baseHeaders: Headers;
  onResult(value: unknown): void;
  onError(error: unknown): void;
  onTimeout(): void;
  /** The handler failed after the body started: the response is cut off (the client sees it truncated). */
  onStreamError(error: unknown): void;
}

const TIMEOUT = Symbol('timeout');

/** Waits for `promise` until `deadline`; the timer exists only while it waits. */
function until<T>(promise: Promise<T>, deadline: number): Promise<T | typeof TIMEOUT> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(TIMEOUT), Math.max(1, deadline - Date.now()));
    promise.then((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

/**
 * Answers a request from whichever comes first: the handler's result (an ApiResponse), or a streamed
 * response on the channel (`set_status` / `set_headers` text items, then binary body chunks, sent to
 * the client as they arrive). A result without a value keeps waiting for the channel.
 */
export async function streamResponse(o: StreamResponseOptions): Promise<void> {
  let status = 200;
  let headers: Headers | undefined;
  let outcome: Outcome | undefined;
  const result = o.result.then((r) => {
    outcome = r;
    return r;
  });
  let next: Promise<ChannelItem | null> = o.channel.read();
  for (;;) {
    // Before the result: the invocation time-out bounds the race. After a result without a value:
    // the head deadline does.
    const winner = outcome ? await until(next, o.headDeadline) : await Promise.race([next, result]);
    if (winner === TIMEOUT) return o.onTimeout();
    if (winner !== null && typeof winner === 'object' && 'ok' in winner) {
      if (!winner.ok) return o.onError(winner.error);
      if (winner.value !== undefined && winner.value !== null) return o.onResult(winner.value);
      continue; // no result: the body comes through the channel
    }
    const item = winner as ChannelItem | null;
    if (item === null) {
      // The channel ended without body bytes: answer with what the handler set, once it returned.
      if (!outcome) {
        const r = await result;
        if (!r.ok) return o.onError(r.error);
        if (r.value !== undefined && r.value !== null) return o.onResult(r.value);
      }
      o.res.writeHead(status, headers ?? o.baseHeaders);
      o.res.end();
      return;
    }
    if (item.kind === 'text') {
      headers ??= { ...o.baseHeaders };
      const h = headers;
      applyControl(item.text, h, (s) => {
        status = s;
      });
      next = o.channel.read();
      continue;
    }
    // Past this point the response is committed: a handler failure can only cut it off. A time-out
    // is not a failure here (a long SSE stream outlives the invocation time-out).
    void result.then((r) => {
      if (r.ok || isTimeout(r.error) || o.res.writableEnded) return;
      o.onStreamError(r.error);
      o.channel.destroy('handler failed', 1011);
    });
    return await pipeBody(o.res, o.channel, status, headers ?? { ...o.baseHeaders }, item.data);
  }
}

function applyControl(text: string, headers: Headers, setStatus: (s: number) => void): void {
  let msg: { type?: unknown; status_code?: unknown; headers?: unknown };
  try {
    msg = JSON.parse(text);
  } catch {
    return;
  }
  if (
    msg.type === 'set_status' &&
    typeof msg.status_code === 'number' &&
    Number.isInteger(msg.status_code) &&
    msg.status_code >= 100 &&
    msg.status_code <= 599
  ) {
    setStatus(msg.status_code);
  } else if (msg.type === 'set_headers' && msg.headers && typeof msg.headers === 'object') {
    for (const [k, v] of Object.entries(msg.headers)) if (typeof v === 'string') headers[k.toLowerCase()] = v;
  }
}

/** Commits status and headers, then forwards every binary item as it arrives (chunked). */
async function pipeBody(res: ServerResponse, channel: EngineChannel, status: number, headers: Headers, first: Buffer): Promise<void> {
  if (res.destroyed) return;
  res.writeHead(status, headers);
  res.flushHeaders();
  let ok = res.write(first);
  for (;;) {
    if (!ok)
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
    if (res.destroyed) return;
    const item = await channel.read();
    if (item === null) break;
    if (item.kind === 'binary') ok = res.write(item.data);
  }
  if (channel.aborted) res.destroy();
  else res.end();
}

function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'invocation_timeout';
}
