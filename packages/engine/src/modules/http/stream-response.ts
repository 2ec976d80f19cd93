import type { ServerResponse } from 'node:http';
import type { ChannelItem, EngineChannel } from '../../core/module-api.js';
import type { Headers } from './respond.js';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface StreamResponseOptions {
  res: ServerResponse;
  /** The engine's (reading) end of the response channel. */
  channel: EngineChannel;
  result: Promise<Outcome>;
  /** How long to wait for a result or the first body byte. */
  headTimeoutMs: number;
  baseHeaders: Headers;
  onResult(value: unknown): void;
  onError(error: unknown): void;
  onTimeout(): void;
  /** The handler failed after the body started: the response is cut off (the client sees it truncated). */
  onStreamError(error: unknown): void;
}

/**
 * Answers a request from whichever comes first: the handler's result (an ApiResponse), or a streamed
 * response on the channel (`set_status` / `set_headers` text items, then binary body chunks, sent to
 * the client as they arrive). A result without a value keeps waiting for the channel.
 */
export async function streamResponse(o: StreamResponseOptions): Promise<void> {
  let status = 200;
  const headers: Headers = { ...o.baseHeaders };
  let outcome: Outcome | undefined;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), o.headTimeoutMs);
  });
  const result = o.result.then((r) => {
    outcome = r;
    return r;
  });
  try {
    let next: Promise<ChannelItem | null> = o.channel.read();
    for (;;) {
      const winner = await Promise.race(outcome ? [next, timeout] : [next, result, timeout]);
      if (winner === 'timeout') return o.onTimeout();
      if (winner !== null && typeof winner === 'object' && 'ok' in winner) {
        if (!winner.ok) return o.onError(winner.error);
        if (winner.value !== undefined && winner.value !== null) return o.onResult(winner.value);
        continue; // no result: the body comes through the channel
      }
      const item = winner as ChannelItem | null;
      if (item === null) {
        // The channel ended without body bytes: answer with what the handler set.
        if (!outcome) {
          const r = await Promise.race([result, timeout]);
          if (r === 'timeout') return o.onTimeout();
          if (!r.ok) return o.onError(r.error);
          if (r.value !== undefined && r.value !== null) return o.onResult(r.value);
        }
        o.res.writeHead(status, headers);
        o.res.end();
        return;
      }
      if (item.kind === 'text') {
        applyControl(item.text, headers, (s) => {
          status = s;
        });
        next = o.channel.read();
        continue;
      }
      clearTimeout(timer);
      // Past this point the response is committed: a handler failure can only cut it off. A time-out
      // is not a failure here (a long SSE stream outlives the invocation time-out).
      void result.then((r) => {
        if (r.ok || isTimeout(r.error) || o.res.writableEnded) return;
        o.onStreamError(r.error);
        o.channel.destroy('handler failed', 1011);
      });
      return await pipeBody(o.res, o.channel, status, headers, item.data);
    }
  } finally {
    clearTimeout(timer);
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
