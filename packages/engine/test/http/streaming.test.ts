/**
 * Streamed `flint-http` responses through the response channel (`set_status` / `set_headers`, then
 * body bytes sent as they arrive), with both SDKs' `http()` helpers: downloads, Server-Sent Events
 * (framing, first event before the handler finishes, streams longer than the handler time-out) and a
 * client that disconnects mid-stream.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import { http as flintHttp, formatSse } from '@flint/sdk';
import { http as iiiHttp } from 'iii-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, type TestWorker, startWorker } from '../support/harness.js';
import { BodyReader, fetchWithin, json, parseSse, serveRoute, startHttpEngine } from '../support/http/helpers.js';
import { deferred, sleep, waitFor, within } from '../support/util.js';

afterEach(cleanup);

const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

// biome-ignore lint/suspicious/noExplicitAny: the request object as each SDK's http() gives it
type AnyReq = any;

/** The common part of both SDKs' response objects. */
interface Res {
  status(code: number): void;
  headers(headers: Record<string, string>): void;
  readonly stream: Writable;
  close(): void;
}

/** Wraps `handler` with the http() helper of the worker's SDK. */
function wrap(w: TestWorker, handler: (req: AnyReq, res: Res) => Promise<unknown>): (input: unknown) => unknown {
  // biome-ignore lint/suspicious/noExplicitAny: the two helpers' types differ; both take (req, res)
  return w.kind === 'flint' ? (flintHttp(handler as any) as (input: unknown) => unknown) : (iiiHttp(handler as any) as (input: unknown) => unknown);
}

/**
 * Writes one chunk and waits for it to be handed to the socket, or fails if the stream is gone
 * (iii-sdk never calls back a write queued on a socket that failed to open, so 'close' counts too).
 */
function write(stream: Writable, chunk: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stream.destroyed || stream.writableEnded) return reject(new Error('stream closed'));
    const onClose = () => reject(new Error('stream closed'));
    stream.once('close', onClose);
    stream.write(chunk, (err) => {
      stream.off('close', onClose);
      if (err) reject(err);
      else resolve();
    });
  });
}

function end(stream: Writable): Promise<void> {
  return new Promise((resolve) => stream.end(() => resolve()));
}

/** One SSE frame in the spec's format (what @flint/sdk's res.sse() writes; written by hand for iii-sdk). */
function sseFrame(id: number, event: string, data: string): string {
  return `id: ${id}\nevent: ${event}\n${data
    .split('\n')
    .map((l) => `data: ${l}\n`)
    .join('')}\n`;
}

describe.each(SDK_KINDS)('streamed responses with %s http()', (kind: SdkKind) => {
  it('applies set_status and set_headers, then sends the body chunked', async () => {
    const { engine, base } = await startHttpEngine({ cors: {} });
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'dl::small',
        { method: 'GET', path: '/dl/small' },
        wrap(w, async (_req, res) => {
          res.status(201);
          res.headers({ 'content-type': 'text/plain; charset=utf-8', 'X-Stream': 'yes' });
          for (const part of ['alpha ', 'beta ', 'gamma']) await write(res.stream, part);
          await end(res.stream);
        }),
      );
    });
    const res = await fetchWithin(`${base}/dl/small`, { headers: { origin: 'https://app.example' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-stream')).toBe('yes');
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.text()).toBe('alpha beta gamma');
    await waitFor(() => engine.stats().channels === 0 && engine.stats().pendingInvocations === 0, 2000, 'channels and calls to be released');
  });

  it('streams a 6 MiB download written in pieces, byte for byte', async () => {
    const { engine, base } = await startHttpEngine();
    const file = randomBytes(6 * 1024 * 1024 + 7);
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'dl::big',
        { method: 'GET', path: '/dl/big' },
        wrap(w, async (_req, res) => {
          res.headers({ 'content-type': 'application/octet-stream' });
          for (let offset = 0; offset < file.length; offset += 100_000) {
            if (!res.stream.write(file.subarray(offset, offset + 100_000))) await new Promise((r) => res.stream.once('drain', r));
          }
          await end(res.stream);
        }),
      );
    });
    const res = await fetchWithin(`${base}/dl/big`, {}, 10_000);
    expect(res.status).toBe(200);
    const data = Buffer.from(await within(res.arrayBuffer(), 10_000, 'the download'));
    expect(data.length).toBe(file.length);
    expect(sha(data)).toBe(sha(file));
    await waitFor(() => engine.stats().channels === 0 && engine.stats().pendingInvocations === 0, 2000, 'channels and calls to be released');
  });

  it('sends each chunk to the client as it is written, before the handler finishes', async () => {
    const { engine, base } = await startHttpEngine();
    const gate = deferred();
    const finished = deferred();
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'dl::live',
        { method: 'GET', path: '/dl/live' },
        wrap(w, async (_req, res) => {
          res.headers({ 'content-type': 'text/plain' });
          await write(res.stream, 'first;');
          await gate.promise;
          await write(res.stream, 'second');
          await end(res.stream);
          finished.resolve();
        }),
      );
    });
    const res = await fetchWithin(`${base}/dl/live`);
    const reader = new BodyReader(res);
    await reader.until((t) => t.includes('first;'));
    expect(reader.text).toBe('first;');
    gate.resolve();
    expect(await reader.rest()).toBe('first;second');
    await within(finished.promise, 1000, 'the handler to finish');
  });

  it('answers the status and headers set by a handler that closes without writing a body', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'dl::nobody',
        { method: 'POST', path: '/dl/nobody' },
        wrap(w, async (_req, res) => {
          res.status(202);
          res.headers({ 'x-job': 'j-1' });
          await end(res.stream);
        }),
      );
    });
    const res = await fetchWithin(`${base}/dl/nobody`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-job')).toBe('j-1');
    expect(await res.text()).toBe('');
    await waitFor(() => engine.stats().channels === 0 && engine.stats().pendingInvocations === 0, 2000, 'channels and calls to be released');
  });

  it('lets an http() handler answer with a plain ApiResponse instead of streaming', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'dl::plain',
        { method: 'GET', path: '/dl/plain/:id' },
        wrap(w, async (req) => ({ status_code: 200, headers: { 'x-id': req.path_params.id }, body: { id: req.path_params.id } })),
      );
    });
    const res = await fetchWithin(`${base}/dl/plain/7`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-id')).toBe('7');
    expect(await json(res)).toEqual({ id: '7' });
    await waitFor(() => engine.stats().channels === 0 && engine.stats().pendingInvocations === 0, 2000, 'channels and calls to be released');
  });

  it('delivers the first SSE event before the handler finishes, framed as id:, event:, one data: line per line, blank line', async () => {
    const { engine, base } = await startHttpEngine();
    const gate = deferred();
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'sse::gated',
        { method: 'GET', path: '/sse/gated' },
        wrap(w, async (_req, res) => {
          if (kind === 'flint') {
            const r = res as unknown as { sse(e: { id?: number; event?: string; data: unknown }): void };
            r.sse({ id: 1, event: 'greeting', data: 'hello\nworld' });
            await gate.promise;
            r.sse({ id: 2, event: 'json', data: { n: 2 } });
            r.sse({ data: 'bye' });
          } else {
            res.headers({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
            await write(res.stream, sseFrame(1, 'greeting', 'hello\nworld'));
            await gate.promise;
            await write(res.stream, sseFrame(2, 'json', JSON.stringify({ n: 2 })));
            await write(res.stream, 'data: bye\n\n');
            await end(res.stream);
          }
        }),
      );
    });
    const res = await fetchWithin(`${base}/sse/gated`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = new BodyReader(res);
    // The handler is still waiting on the gate: this event can only come from a live stream.
    const first = await reader.until((t) => t.includes('\n\n'));
    expect(first).toBe('id: 1\nevent: greeting\ndata: hello\ndata: world\n\n');
    gate.resolve();
    const all = await reader.rest();
    expect(parseSse(all)).toEqual([{ id: '1', event: 'greeting', data: ['hello', 'world'] }, { id: '2', event: 'json', data: ['{"n":2}'] }, { data: ['bye'] }]);
    await waitFor(() => engine.stats().channels === 0 && engine.stats().pendingInvocations === 0, 2000, 'channels and calls to be released');
  });

  it('keeps an SSE stream going past default_timeout_ms once it has started', async () => {
    const { engine, base } = await startHttpEngine({ default_timeout_ms: 300 });
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'sse::long',
        { method: 'GET', path: '/sse/long' },
        wrap(w, async (_req, res) => {
          res.headers({ 'content-type': 'text/event-stream' });
          for (let i = 0; i < 8; i++) {
            await write(res.stream, sseFrame(i, 'tick', `t${i}`));
            await sleep(80);
          }
          await end(res.stream);
        }),
      );
    });
    const started = Date.now();
    const res = await fetchWithin(`${base}/sse/long`);
    expect(res.status).toBe(200);
    const text = await new BodyReader(res).rest(5000);
    expect(Date.now() - started).toBeGreaterThan(300);
    expect(parseSse(text).map((f) => f.data[0])).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7']);
    await waitFor(() => engine.stats().channels === 0, 2000, 'channels to be released');
  });

  it('ends the worker side when the client disconnects mid-stream; nothing leaks', async () => {
    const { engine, base } = await startHttpEngine({ default_timeout_ms: 5000 });
    const workerSaw = deferred<string>();
    let sent = 0;
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'sse::abort',
        { method: 'GET', path: '/sse/abort' },
        wrap(w, async (_req, res) => {
          const stream = res.stream;
          stream.on('error', () => {});
          const closed = new Promise<string>((resolve) => stream.once('close', () => resolve('close')));
          res.headers({ 'content-type': 'text/event-stream' });
          try {
            for (let i = 0; i < 10_000; i++) {
              const outcome = await Promise.race([write(stream, sseFrame(i, 'tick', `t${i}`)).then(() => 'written'), closed]);
              if (outcome === 'close') break;
              sent++;
              const next = await Promise.race([sleep(15).then(() => 'tick'), closed]);
              if (next === 'close') break;
            }
            workerSaw.resolve(stream.destroyed ? 'destroyed' : 'closed');
          } catch (err) {
            workerSaw.resolve(`write failed: ${(err as Error).message}`);
          }
        }),
      );
    });
    const controller = new AbortController();
    const res = await fetchWithin(`${base}/sse/abort`, { signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = new BodyReader(res);
    await reader.until((t) => parseSse(t).length >= 3);
    expect(engine.stats().channels).toBeGreaterThan(0);
    controller.abort();
    await reader.cancel();

    const seen = await within(workerSaw.promise, 3000, 'the worker to see its stream end');
    expect(seen).toMatch(/destroyed|closed|write failed/);
    const sentAtEnd = sent;
    await waitFor(() => engine.stats().channels === 0, 3000, 'the response channels to be removed');
    await waitFor(() => engine.stats().pendingInvocations === 0, 3000, 'the call to finish');
    // The handler stopped: nothing keeps being written after the disconnect.
    await sleep(60);
    expect(sent).toBe(sentAtEnd);
  });

  it('releases everything when the client disconnects before the handler answered', async () => {
    const { engine, base } = await startHttpEngine({ default_timeout_ms: 5000 });
    const entered = deferred();
    const gate = deferred();
    const done = deferred<string>();
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'quick::answer', { method: 'GET', path: '/quick' }, () => ({ body: 'quick' }));
      serveRoute(
        w,
        'slow::answer',
        { method: 'GET', path: '/slow/answer' },
        wrap(w, async (_req, res) => {
          res.stream.on('error', () => {});
          entered.resolve();
          await gate.promise;
          try {
            res.status(200);
            await write(res.stream, 'too late');
            done.resolve('written');
          } catch (err) {
            done.resolve(`failed: ${(err as Error).message}`);
          }
        }),
      );
    });
    const controller = new AbortController();
    const pending = fetch(`${base}/slow/answer`, { signal: controller.signal }).catch((err: unknown) => err);
    await within(entered.promise, 2000, 'the handler to start');
    // The response channel (a GET without a body shares the engine's always-ended request-body ref).
    expect(engine.stats().channels).toBe(1);
    controller.abort();
    await pending;
    await waitFor(() => engine.stats().channels === 0, 2000, 'the channels to be removed after the disconnect');
    gate.resolve();
    expect(await within(done.promise, 2000, 'the late write')).toMatch(/failed|written/);
    await waitFor(() => engine.stats().pendingInvocations === 0, 2000, 'the call to finish');
    // The engine still serves requests.
    expect(await json(await fetchWithin(`${base}/quick`))).toBe('quick');
  });

  it('ends the client response and releases the channels when the handler throws mid-stream', async () => {
    const { engine, base } = await startHttpEngine({ default_timeout_ms: 5000 });
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'streaming::throws',
        { method: 'GET', path: '/stream/throws' },
        wrap(w, async (_req, res) => {
          res.stream.on('error', () => {});
          res.headers({ 'content-type': 'text/plain' });
          await write(res.stream, 'partial ');
          throw new Error('failed half-way');
        }),
      );
    });
    const res = await fetchWithin(`${base}/stream/throws`);
    expect(res.status).toBe(200);
    const reader = new BodyReader(res);
    await reader.until((t) => t.includes('partial'));
    // The body must not hang: it ends (ideally as an aborted, visibly truncated response).
    const ending = await within(
      reader.rest(10_000).then(
        () => 'ended',
        (err: unknown) => `errored: ${(err as Error).message}`,
      ),
      3000,
      'the response to end after the handler threw',
    ).catch((err: unknown) => `hung: ${(err as Error).message}`);
    expect(ending).not.toMatch(/^hung/);
    await waitFor(() => engine.stats().channels === 0, 2000, 'the channels to be removed');
  });
});

describe('engine shutdown with an open stream', () => {
  it('stops promptly while an SSE response is open', async () => {
    const { engine, base } = await startHttpEngine({ default_timeout_ms: 5000 });
    await startWorker('flint', engine, (w) => {
      serveRoute(
        w,
        'sse::forever',
        { method: 'GET', path: '/sse/forever' },
        flintHttp(async (_req, res) => {
          res.stream.on('error', () => {});
          for (let i = 0; i < 1000 && !res.stream.destroyed; i++) {
            res.sse({ id: i, data: `t${i}` });
            await sleep(20);
          }
        }),
      );
    });
    const res = await fetchWithin(`${base}/sse/forever`);
    const reader = new BodyReader(res);
    await reader.until((t) => parseSse(t).length >= 2);
    const started = Date.now();
    await within(engine.stop(), 3000, 'engine.stop() with an open SSE response');
    expect(Date.now() - started).toBeLessThan(2000);
    await reader.cancel();
  });
});

describe('@flint/sdk http() SSE helper', () => {
  it('formats frames: id, event, retry, one data line per line (CRLF, CR and LF), JSON for non-strings', () => {
    expect(formatSse({ id: 3, event: 'update', data: 'a\r\nb\rc\nd' })).toBe('id: 3\nevent: update\ndata: a\ndata: b\ndata: c\ndata: d\n\n');
    expect(formatSse({ data: { x: [1] } })).toBe('data: {"x":[1]}\n\n');
    expect(formatSse({ data: '', retry: 1500 })).toBe('retry: 1500\ndata: \n\n');
    // Line breaks cannot smuggle extra fields through id or event.
    expect(formatSse({ id: '1\ndata: evil', event: 'e\nid: 9', data: 'ok' })).toBe('id: 1data: evil\nevent: eid: 9\ndata: ok\n\n');
  });

  it('sets text/event-stream unless a content type was set, and writes status/headers before the events', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker('flint', engine, (w) => {
      serveRoute(
        w,
        'sse::custom',
        { method: 'GET', path: '/sse/custom' },
        flintHttp(async (_req, res) => {
          res.status(207);
          res.headers({ 'Content-Type': 'text/event-stream; charset=utf-8', 'x-sse': '1' });
          res.sse({ id: 'a', data: 'one' });
          res.write('data: raw\n\n');
          res.close();
        }),
      );
    });
    const res = await fetchWithin(`${base}/sse/custom`);
    expect(res.status).toBe(207);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-sse')).toBe('1');
    expect(await res.text()).toBe('id: a\ndata: one\n\ndata: raw\n\n');
  });
});
