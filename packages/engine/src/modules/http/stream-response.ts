import type { ServerResponse } from 'node:http';
import { toErrorBody } from '@flint/protocol';
import type { ChannelItem, EngineChannel, TriggerFiring } from '../../core/module-api.js';
import type { Headers } from './respond.js';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface StreamResponseOptions {
  res: ServerResponse;
  /** The engine's (reading) end of the response channel. */
  channel: EngineChannel;
  /** When the first body byte must have arrived if the handler returned no value (epoch ms). */
  headDeadline: number;
  baseHeaders: Headers;
  /** Ended with the handler's outcome (for invocation hooks). */
  firing: TriggerFiring;
  onResult(value: unknown): void;
  onError(error: unknown): void;
  onTimeout(): void;
  /** The handler failed after the body started: the response is cut off (the client sees it truncated). */
  onStreamError(error: unknown): void;
  /** Called once, when the request has been answered (for a streamed body: once the body has ended). */
  onDone(): void;
}

/**
 * Answers a request from whichever comes first: the handler's result (an ApiResponse), or a streamed
 * response on the channel (`set_status` / `set_headers` text items, then binary body chunks, sent to
 * the client as they arrive). A result without a value keeps waiting for the channel, until the head
 * deadline. Returns the callback that takes the invocation's outcome (its own time-out bounds the
 * wait for it). Callbacks, not promises: this runs for every HTTP request, and the engine's time per
 * request is what flint-http's throughput is made of.
 */
export function streamResponse(o: StreamResponseOptions): (error: unknown, value: unknown) => void {
  let status = 200;
  let headers: Headers | undefined;
  let outcome: Outcome | undefined;
  let channelEnded = false;
  let settled = false;
  let committed = false;
  let doneCalled = false;
  let timer: NodeJS.Timeout | undefined;

  const done = () => {
    if (doneCalled) return;
    doneCalled = true;
    o.onDone();
  };
  const finish = (answer: () => void) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    // Another path may have answered already (e.g. a 413 while the body streamed to the worker).
    if (!o.res.headersSent && !o.res.destroyed) answer();
    done();
  };
  const endWithoutBody = () => {
    o.res.writeHead(status, headers ?? o.baseHeaders);
    o.res.end();
  };
  // Nothing thrown while answering may escape into the code that delivered the outcome or item.
  const fail = (err: unknown) => {
    settled = true;
    clearTimeout(timer);
    o.onStreamError(err);
    if (!o.res.destroyed) o.res.destroy();
    done();
  };

  const onOutcome = (r: Outcome) => {
    outcome = r;
    if (committed) {
      // A time-out is not a failure once streaming (a long SSE stream outlives it).
      if (!r.ok && !isTimeout(r.error) && !o.res.writableEnded) {
        o.onStreamError(r.error);
        o.channel.destroy('handler failed', 1011);
      }
      return;
    }
    if (!r.ok) return finish(() => o.onError(r.error));
    if (r.value !== undefined && r.value !== null) return finish(() => o.onResult(r.value));
    if (channelEnded) return finish(endWithoutBody);
    // No value: the body comes through the channel, within the head deadline.
    if (!settled) timer = setTimeout(() => finish(() => o.onTimeout()), Math.max(1, o.headDeadline - Date.now()));
  };

  const onItem = (item: ChannelItem | null): void => {
    if (settled) return;
    try {
      if (item === null) {
        // Ended without body bytes: answer with what the handler set, once it has returned.
        channelEnded = true;
        if (outcome?.ok) finish(endWithoutBody);
        return;
      }
      if (item.kind === 'text') {
        headers ??= { ...o.baseHeaders };
        applyControl(item.text, headers, (s) => {
          status = s;
        });
        o.channel.next(onItem);
        return;
      }
      settled = true;
      committed = true;
      clearTimeout(timer);
      if (outcome) onOutcome(outcome);
      if (o.res.headersSent || o.res.destroyed) return done();
      pipeBody(o.res, o.channel, status, headers ?? { ...o.baseHeaders }, item.data).then(done, fail);
    } catch (err) {
      fail(err);
    }
  };
  o.channel.next(onItem);

  return (error, value) => {
    o.firing.end(error === undefined ? undefined : { error: toErrorBody(error) });
    try {
      onOutcome(error === undefined ? { ok: true, value } : { ok: false, error });
    } catch (err) {
      fail(err);
    }
  };
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

/**
 * Commits status and headers, then forwards every binary item as it arrives (chunked). Callbacks, not
 * `await channel.read()`: items already buffered are written in one synchronous loop, without a
 * promise (and a microtask) per item, which is what a stream of small SSE events is made of.
 */
function pipeBody(res: ServerResponse, channel: EngineChannel, status: number, headers: Headers, first: Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (res.destroyed) return resolve();
    res.writeHead(status, headers);
    res.flushHeaders();
    let ok = res.write(first);
    let pumping = false;
    let again = false;
    let corked = false;
    const uncork = () => {
      if (!corked) return;
      corked = false;
      res.uncork();
    };
    const onItem = (item: ChannelItem | null) => {
      try {
        if (res.destroyed) return resolve();
        if (item === null) {
          uncork();
          if (channel.aborted) res.destroy();
          else res.end();
          return resolve();
        }
        if (item.kind === 'binary') ok = res.write(item.data);
        pump();
      } catch (err) {
        reject(err);
      }
    };
    const onDrain = () => {
      res.off('drain', onDrain);
      res.off('close', onDrain);
      ok = true;
      pump();
    };
    // A loop rather than recursion: `next` calls back at once while items are buffered.
    const pump = () => {
      if (pumping) {
        again = true;
        return;
      }
      pumping = true;
      // The items buffered now leave in one socket write (uncorked at the end of this loop).
      if (!corked) {
        corked = true;
        res.cork();
      }
      do {
        again = false;
        if (res.destroyed) {
          resolve();
          break;
        }
        if (!ok) {
          res.once('drain', onDrain);
          res.once('close', onDrain);
          break;
        }
        channel.next(onItem);
      } while (again);
      pumping = false;
      uncork();
    };
    pump();
  });
}

function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'invocation_timeout';
}
