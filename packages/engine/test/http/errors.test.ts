/**
 * `flint-http` error answers: JSON `{error, code, ...}` bodies for 400 invalid_json, 413
 * payload_too_large (without buffering the body), 500 handler_error (error_id also in the engine log)
 * and 504 handler_timeout (plain and streaming handlers), with nothing left behind afterwards.
 */
import { http as flintHttp } from '@flint/sdk';
import { http as iiiHttp } from 'iii-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, type TestWorker, startWorker } from '../support/harness.js';
import { fetchWithin, json, serveRoute, startHttpEngine, uploadUntilAnswered } from '../support/http/helpers.js';
import { LEVEL } from '../support/log-capture.js';
import { waitFor } from '../support/util.js';

afterEach(cleanup);

const MiB = 1024 * 1024;

// biome-ignore lint/suspicious/noExplicitAny: the request/response objects as each SDK's http() gives them
type Any = any;

function wrap(w: TestWorker, handler: (req: Any, res: Any) => Promise<unknown>): (input: unknown) => unknown {
  // biome-ignore lint/suspicious/noExplicitAny: the two helpers' types differ; both take (req, res)
  return w.kind === 'flint' ? (flintHttp(handler as any) as (input: unknown) => unknown) : (iiiHttp(handler as any) as (input: unknown) => unknown);
}

const released = (engine: { stats(): { channels: number; pendingInvocations: number } }) =>
  waitFor(() => engine.stats().channels === 0 && engine.stats().pendingInvocations === 0, 3000, 'channels and calls to be released');

describe.each(SDK_KINDS)('handler errors with %s', (kind: SdkKind) => {
  it('answers 500 handler_error with an error_id that is also in the engine log', async () => {
    const { engine, base, logs } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'err::throws', { method: 'GET', path: '/err/throws' }, () => {
        throw new Error('kaboom in the handler');
      });
      serveRoute(
        w,
        'err::stream-throws',
        { method: 'GET', path: '/err/stream-throws' },
        wrap(w, async () => {
          throw new Error('kaboom before streaming');
        }),
      );
    });
    for (const path of ['/err/throws', '/err/stream-throws']) {
      const res = await fetchWithin(`${base}${path}`);
      expect(res.status, path).toBe(500);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const body = await json(res);
      expect(body).toMatchObject({ code: 'handler_error', error: expect.any(String), error_id: expect.stringMatching(/^[0-9a-f]+$/) });
      const logged = await waitFor(() => logs.find((l) => l.error_id === body.error_id), 1000, `${path}: the error_id in the log`);
      expect(logged.level).toBe(LEVEL.error);
      expect(logged.msg).toContain('kaboom');
    }
    const ids = logs.filter((l) => l.error_id).map((l) => l.error_id);
    expect(new Set(ids).size).toBe(ids.length);
    await released(engine);
  });

  it('answers 504 handler_timeout when the handler does not answer within default_timeout_ms', async () => {
    const { engine, base } = await startHttpEngine({ default_timeout_ms: 400 });
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'slow::plain', { method: 'GET', path: '/slow/plain' }, () => new Promise((resolve) => setTimeout(() => resolve({ body: 'late' }), 1200)));
      // A streaming handler that sets a status and headers but never sends a body byte in time.
      serveRoute(
        w,
        'slow::stream',
        { method: 'GET', path: '/slow/stream' },
        wrap(w, async (_req, res) => {
          res.status(200);
          res.headers({ 'content-type': 'text/event-stream' });
          await new Promise((resolve) => setTimeout(resolve, 1200));
          res.stream.end('data: late\n\n');
        }),
      );
    });
    for (const path of ['/slow/plain', '/slow/stream']) {
      const started = Date.now();
      const res = await fetchWithin(`${base}${path}`, {}, 3000);
      const elapsed = Date.now() - started;
      expect(res.status, path).toBe(504);
      expect(await json(res)).toMatchObject({ code: 'handler_timeout', error: expect.any(String) });
      expect(elapsed, path).toBeGreaterThanOrEqual(380);
      expect(elapsed, path).toBeLessThan(1100);
    }
    // The late answers change nothing and leave nothing behind.
    await waitFor(() => engine.stats().channels === 0, 3000, 'channels to be released');
    await waitFor(() => engine.stats().pendingInvocations === 0, 3000, 'calls to be released');
  });
});

describe('request errors', () => {
  it('answers 400 invalid_json for a JSON content type that does not parse (also +json types); an empty JSON body is null', async () => {
    const { engine, base } = await startHttpEngine();
    const bodies: unknown[] = [];
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'json::fn', { method: 'POST', path: '/json' }, (req: { body: unknown }) => {
        bodies.push(req.body);
        return { body: 'ok' };
      });
    });
    for (const type of ['application/json', 'application/vnd.api+json', 'Application/JSON; charset=utf-8']) {
      const res = await fetchWithin(`${base}/json`, { method: 'POST', headers: { 'content-type': type }, body: '{"unterminated": ' });
      expect(res.status, type).toBe(400);
      expect(await json(res)).toMatchObject({ code: 'invalid_json', error: expect.any(String) });
    }
    expect(bodies).toEqual([]);
    const empty = await fetchWithin(`${base}/json`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(empty.status).toBe(200);
    expect(bodies).toEqual([null]);
    await released(engine);
  });

  it('answers 413 at once for a declared content-length over max_body_bytes, without reading the body', async () => {
    const { engine, base } = await startHttpEngine({ max_body_bytes: MiB });
    const calls: string[] = [];
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'up::declared', { method: 'POST', path: '/up' }, () => {
        calls.push('handler');
        return { body: 'ok' };
      });
    });
    const result = await uploadUntilAnswered(`${base}/up`, { total: 50 * MiB, contentLength: 50 * MiB });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body)).toMatchObject({ code: 'payload_too_large', error: expect.any(String) });
    expect(result.sentWhenAnswered).toBeLessThan(16 * MiB);
    expect(calls).toEqual([]);
    // A body exactly at the limit is accepted.
    const ok = await fetchWithin(`${base}/up`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `"${'a'.repeat(MiB - 2)}"` });
    expect(ok.status).toBe(200);
    await released(engine);
  });

  it('answers 413 to a 50 MiB chunked JSON body while the client has sent a small part of it, without buffering it', async () => {
    const { engine, base } = await startHttpEngine({ max_body_bytes: MiB });
    const calls: string[] = [];
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'up::json', { method: 'POST', path: '/up/json' }, () => {
        calls.push('handler');
        return { body: 'ok' };
      });
    });
    const rssBefore = process.memoryUsage().rss;
    const result = await uploadUntilAnswered(`${base}/up/json`, { total: 50 * MiB, contentType: 'application/json' });
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(result.error).toBeUndefined();
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body)).toMatchObject({ code: 'payload_too_large' });
    expect(result.headers.connection).toBe('close');
    expect(result.sentWhenAnswered, 'bytes sent before the 413 arrived').toBeLessThan(16 * MiB);
    expect(rssGrowth, 'RSS growth while receiving a 50 MiB body').toBeLessThan(30 * MiB);
    expect(calls).toEqual([]);
    // The engine is fine afterwards.
    expect((await fetchWithin(`${base}/up/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"small":true}' })).status).toBe(
      200,
    );
    await released(engine);
  });

  it.each(SDK_KINDS)('answers 413 to a 50 MiB chunked raw upload streamed to a %s http() handler, and releases everything', async (kind) => {
    const { engine, base } = await startHttpEngine({ max_body_bytes: MiB });
    let received = -1;
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'up::raw',
        { method: 'POST', path: '/up/raw' },
        wrap(w, async (req, res) => {
          // After the 413 the engine has removed the exchange's channels: writing the response then
          // fails, which a handler must expect (iii-sdk's stream emits 'error').
          res.stream.on('error', () => {});
          let size = 0;
          try {
            for await (const chunk of req.request_body.stream as AsyncIterable<Buffer>) size += chunk.length;
          } catch {
            // the engine may cut the body channel
          }
          received = size;
          res.status(200);
          res.stream.end(`got ${size}`);
        }),
      );
    });
    const rssBefore = process.memoryUsage().rss;
    const result = await uploadUntilAnswered(`${base}/up/raw`, { total: 50 * MiB });
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body)).toMatchObject({ code: 'payload_too_large' });
    expect(result.sentWhenAnswered).toBeLessThan(16 * MiB);
    expect(rssGrowth, 'RSS growth while receiving a 50 MiB body').toBeLessThan(30 * MiB);
    await waitFor(() => received >= 0, 3000, 'the handler to stop reading');
    expect(received).toBeLessThanOrEqual(MiB);
    await released(engine);
  });

  it('answers JSON error bodies {error, code} for 404, 405 and 503', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'only::get', { method: 'GET', path: '/only' }, () => ({ body: 1 }));
      // A route for a function nobody provides.
      w.registerTrigger({ type: 'http', function_id: 'nobody::home', config: { api_path: '/vacant', http_method: 'GET' } });
    });
    const vacant = await fetchWithin(`${base}/vacant`);
    expect(vacant.status).toBe(503);
    expect(await json(vacant)).toMatchObject({ error: expect.any(String), code: 'function_unavailable' });
    const notFound = await fetchWithin(`${base}/missing`);
    expect([notFound.status, await json(notFound)]).toEqual([404, { error: expect.any(String), code: 'route_not_found' }]);
    const notAllowed = await fetchWithin(`${base}/only`, { method: 'PUT' });
    expect(notAllowed.status).toBe(405);
    expect(await json(notAllowed)).toMatchObject({ error: expect.any(String), code: 'method_not_allowed' });
  });
});
