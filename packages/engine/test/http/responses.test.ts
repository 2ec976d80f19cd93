/**
 * What a `flint-http` handler receives (ApiRequest, including the request_body / response channel
 * refs and raw-body uploads through `request_body`) and how its answer (ApiResponse) maps to the HTTP
 * response; CORS.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { http as flintHttp } from '@flint/sdk';
import { http as iiiHttp } from 'iii-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, type TestWorker, startWorker } from '../support/harness.js';
import { fetchWithin, json, rawRegisterRoute, serveRoute, startHttpEngine } from '../support/http/helpers.js';
import { LEVEL } from '../support/log-capture.js';
import { RawClient } from '../support/raw-client.js';
import { deferred, waitFor, within } from '../support/util.js';

afterEach(cleanup);

const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

// biome-ignore lint/suspicious/noExplicitAny: the request object as each SDK's http() gives it
type AnyReq = any;
// biome-ignore lint/suspicious/noExplicitAny: the response object as each SDK's http() gives it
type AnyRes = any;

/** Wraps `handler` with the http() helper of the worker's SDK. */
function wrap(w: TestWorker, handler: (req: AnyReq, res: AnyRes) => Promise<unknown>): (input: unknown) => unknown {
  // biome-ignore lint/suspicious/noExplicitAny: the two helpers' types differ; both take (req, res)
  return w.kind === 'flint' ? (flintHttp(handler as any) as (input: unknown) => unknown) : (iiiHttp(handler as any) as (input: unknown) => unknown);
}

describe('ApiRequest on the wire', () => {
  it('carries path_params, query_params, body, lower-case headers, method, path, route, trigger and the two channel refs', async () => {
    const { engine, base } = await startHttpEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const inputs: Record<string, unknown>[] = [];
    await raw.serve('wire::fn', (data) => {
      inputs.push(data as Record<string, unknown>);
      return { status_code: 200, body: 'ok' };
    });
    expect((await rawRegisterRoute(raw, 'wire', 'wire::fn', { api_path: 'conf/x/items/:id', http_method: 'POST' })).error).toBeUndefined();
    const res = await fetchWithin(`${base}/conf/x/items/abc123?q=find&q=last&empty=`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Client': 'c1', 'X-Multi': 'a' },
      body: JSON.stringify({ name: 'widget', n: [1, 2] }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('"ok"');
    const input = inputs[0] as Record<string, unknown>;
    expect(input).toMatchObject({
      path_params: { id: 'abc123' },
      query_params: { q: 'last', empty: '' },
      body: { name: 'widget', n: [1, 2] },
      method: 'POST',
      path: '/conf/x/items/abc123',
      route: 'conf/x/items/:id',
      trigger: { type: 'http', path: 'conf/x/items/:id', method: 'POST' },
      request_body: { channel_id: expect.any(String), access_key: expect.any(String), direction: 'read' },
      response: { channel_id: expect.any(String), access_key: expect.any(String), direction: 'write' },
    });
    const headers = input.headers as Record<string, string>;
    expect(headers['x-client']).toBe('c1');
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    for (const name of Object.keys(headers)) expect(name).toBe(name.toLowerCase());
    for (const value of Object.values(headers)) expect(typeof value).toBe('string');
    await waitFor(() => engine.stats().channels === 0, 1000, 'the request channels to be removed');
  });

  it('joins repeated request headers into one string', async () => {
    const { engine, base } = await startHttpEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    let headers: Record<string, unknown> = {};
    await raw.serve('hdr::fn', (data) => {
      headers = (data as { headers: Record<string, unknown> }).headers;
      return { body: null };
    });
    await rawRegisterRoute(raw, 'hdr', 'hdr::fn', { api_path: '/hdr', http_method: 'GET' });
    // fetch merges repeated headers itself; node:http sends them as separate lines.
    await within(
      new Promise<void>((resolve, reject) => {
        const req = httpRequest(`${base}/hdr`, (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.setHeader('x-rep', ['one', 'two']);
        req.on('error', reject);
        req.end();
      }),
      3000,
      'request',
    );
    expect(headers['x-rep']).toBe('one, two');
  });
});

describe.each(SDK_KINDS)('ApiRequest and ApiResponse with %s', (kind: SdkKind) => {
  it('gives the handler the documented ApiRequest fields', async () => {
    const { engine, base } = await startHttpEngine();
    let seen: Record<string, unknown> = {};
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'req::fn', { method: 'PATCH', path: '/users/:userId/posts/:postId' }, (req: Record<string, unknown>) => {
        seen = req;
        return { status_code: 200, body: { ok: true } };
      });
    });
    const res = await fetchWithin(`${base}/users/u%2F1/posts/p2?sort=desc`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json', 'X-Verified': 'yes' },
      body: '{"title":"new"}',
    });
    expect(res.status).toBe(200);
    expect(seen).toMatchObject({
      path_params: { userId: 'u/1', postId: 'p2' },
      query_params: { sort: 'desc' },
      body: { title: 'new' },
      method: 'PATCH',
      path: '/users/u%2F1/posts/p2',
      route: '/users/:userId/posts/:postId',
    });
    expect((seen.headers as Record<string, string>)['x-verified']).toBe('yes');
    // The SDK turned the refs into channel objects.
    expect(typeof (seen.request_body as { readAll?: unknown }).readAll).toBe('function');
  });

  it('maps ApiResponse: status, headers (object or "Name: value" lines), JSON / raw bodies, defaults', async () => {
    const { engine, base } = await startHttpEngine();
    const answers: Record<string, unknown> = {
      created: { status_code: 201, headers: { 'X-Custom': 'v1', 'x-num': 7 }, body: { id: 1, tags: ['a'] } },
      nostatus: { body: [1, 2, 3] },
      text: { status_code: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'hello\nworld' },
      html: { headers: { 'Content-Type': 'text/html' }, body: '<p>hi</p>' },
      jsonstring: { body: 'just a string' },
      lines: { status_code: 202, headers: ['Set-Cookie: a=1', 'Set-Cookie: b=2', 'X-Line: yes'], body: { ok: 1 } },
      empty: { status_code: 204 },
      nullbody: { status_code: 200, headers: { 'content-type': 'text/plain' }, body: null },
      plain: { hello: 'world' },
      teapot: { status_code: 418, body: { error: 'I am a teapot' } },
    };
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'ans::fn', { method: 'GET', path: '/ans/:which' }, (req: { path_params: { which: string } }) => answers[req.path_params.which]);
    });
    const get = (which: string) => fetchWithin(`${base}/ans/${which}`);

    const created = await get('created');
    expect(created.status).toBe(201);
    expect(created.headers.get('x-custom')).toBe('v1');
    expect(created.headers.get('x-num')).toBe('7');
    expect(created.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await json(created)).toEqual({ id: 1, tags: ['a'] });

    const nostatus = await get('nostatus');
    expect(nostatus.status).toBe(200);
    expect(await json(nostatus)).toEqual([1, 2, 3]);

    const text = await get('text');
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await text.text()).toBe('hello\nworld');

    const html = await get('html');
    expect(html.headers.get('content-type')).toBe('text/html');
    expect(await html.text()).toBe('<p>hi</p>');

    const jsonString = await get('jsonstring');
    expect(jsonString.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await jsonString.text()).toBe('"just a string"');

    const lines = await get('lines');
    expect(lines.status).toBe(202);
    expect(lines.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(lines.headers.get('x-line')).toBe('yes');

    const empty = await get('empty');
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe('');

    const nullBody = await get('nullbody');
    expect(nullBody.status).toBe(200);
    expect(await nullBody.text()).toBe('');

    const plain = await get('plain');
    expect(plain.status).toBe(200);
    expect(await json(plain)).toEqual({ hello: 'world' });

    const teapot = await get('teapot');
    expect(teapot.status).toBe(418);
    expect(await json(teapot)).toEqual({ error: 'I am a teapot' });
  });

  it('answers 500 handler_error (error_id in the log) for an invalid status_code', async () => {
    const { engine, base, logs } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'badstatus::fn', { method: 'GET', path: '/badstatus' }, () => ({ status_code: 1000, body: 'x' }));
    });
    const res = await fetchWithin(`${base}/badstatus`);
    expect(res.status).toBe(500);
    const body = await json(res);
    expect(body).toMatchObject({ code: 'handler_error', error_id: expect.any(String) });
    const logged = await waitFor(() => logs.find((l) => l.error_id === body.error_id), 1000, 'the error_id in the log');
    expect(logged.level).toBe(LEVEL.error);
  });

  it('streams a non-JSON upload to the handler through request_body (http() helper), byte for byte', async () => {
    const { engine, base } = await startHttpEngine({ max_body_bytes: 8 * 1024 * 1024 });
    const upload = randomBytes(3 * 1024 * 1024 + 123);
    await startWorker(kind, engine, (w) => {
      serveRoute(
        w,
        'upload::fn',
        { method: 'POST', path: '/upload' },
        wrap(w, async (req, res) => {
          const data: Buffer = await req.request_body.readAll();
          res.status(201);
          res.headers({ 'content-type': 'application/json' });
          res.stream.end(JSON.stringify({ body: req.body, size: data.length, sha: sha(data), type: req.headers['content-type'] }));
        }),
      );
    });
    const res = await fetchWithin(`${base}/upload`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: upload }, 10_000);
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ body: null, size: upload.length, sha: sha(upload), type: 'application/octet-stream' });
    await waitFor(() => engine.stats().channels === 0 && engine.stats().pendingInvocations === 0, 2000, 'channels and calls to be released');
  });

  it('delivers the first part of a chunked upload to the handler before the client has sent the rest', async () => {
    const { engine, base } = await startHttpEngine();
    const gotFirst = deferred();
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'stream-up::fn', { method: 'PUT', path: '/stream-up' }, async (req: AnyReq) => {
        let text = '';
        for await (const chunk of req.request_body.stream as AsyncIterable<Buffer>) {
          text += chunk.toString('utf8');
          if (text.includes('first|')) gotFirst.resolve();
        }
        return { body: { text } };
      });
    });
    const result = await within(
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${base}/stream-up`, { method: 'PUT', headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.write('first|');
        // The rest is only sent once the handler has seen the first part.
        gotFirst.promise.then(() => req.end('second'), reject);
      }),
      5000,
      'the streamed upload',
    );
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body)).toEqual({ text: 'first|second' });
  });

  it('ends request_body at once for a JSON request (the body is in `body`)', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'jsonbody::fn', { method: 'POST', path: '/jsonbody' }, async (req: AnyReq) => {
        const rest: Buffer = await within(req.request_body.readAll() as Promise<Buffer>, 1000, 'reading request_body of a JSON request');
        return { body: { body: req.body, rest: rest.length } };
      });
    });
    const res = await fetchWithin(`${base}/jsonbody`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,{"b":null}]}' });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ body: { a: [1, { b: null }] }, rest: 0 });
  });

  it('gives body null and the raw text through request_body for a text/plain request', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'text::fn', { method: 'POST', path: '/text' }, async (req: AnyReq) => {
        const raw: Buffer = await req.request_body.readAll();
        return { body: { body: req.body, raw: raw.toString('utf8') } };
      });
    });
    const res = await fetchWithin(`${base}/text`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"looks":"like json"}' });
    expect(await json(res)).toEqual({ body: null, raw: '{"looks":"like json"}' });
  });
});

describe('CORS', () => {
  it('is off by default: no CORS headers even with an Origin', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker('flint', engine, (w) => serveRoute(w, 'nocors::fn', { method: 'GET', path: '/nocors' }, () => ({ body: 1 })));
    const res = await fetchWithin(`${base}/nocors`, { headers: { origin: 'https://app.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await fetchWithin(`${base}/nocors`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(pre.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('answers preflight requests for allowed origins with methods, headers, credentials and max age; the handler is not called', async () => {
    const { engine, base } = await startHttpEngine({
      cors: { origins: ['https://app.example'], methods: ['GET', 'POST'], headers: ['content-type', 'x-token'], credentials: true, max_age_seconds: 120 },
    });
    const calls: string[] = [];
    await startWorker('flint', engine, (w) => {
      for (const method of ['GET', 'POST', 'DELETE']) {
        serveRoute(w, `cors::${method}`, { method, path: '/items/:id' }, () => {
          calls.push(method);
          return { body: { method } };
        });
      }
    });
    const pre = await fetchWithin(`${base}/items/1`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(pre.headers.get('access-control-allow-credentials')).toBe('true');
    expect(pre.headers.get('access-control-max-age')).toBe('120');
    expect(pre.headers.get('vary')).toMatch(/origin/i);
    const methods = (pre.headers.get('access-control-allow-methods') ?? '').split(',').map((s) => s.trim());
    expect(methods).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(methods).not.toContain('DELETE'); // served, but not allowed by the CORS config
    expect(pre.headers.get('access-control-allow-headers')).toBe('content-type, x-token');
    expect(calls).toEqual([]);

    const actual = await fetchWithin(`${base}/items/1`, { method: 'POST', headers: { origin: 'https://app.example' } });
    expect(actual.status).toBe(200);
    expect(actual.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(actual.headers.get('access-control-allow-credentials')).toBe('true');

    const stranger = await fetchWithin(`${base}/items/1`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
    const strangerGet = await fetchWithin(`${base}/items/1`, { headers: { origin: 'https://evil.example' } });
    expect(strangerGet.headers.get('access-control-allow-origin')).toBeNull();

    const unknown = await fetchWithin(`${base}/nowhere`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(unknown.status).toBe(404);
  });

  it('with cors: {} allows any origin (*), echoes requested headers, and puts CORS headers on error answers too', async () => {
    const { engine, base } = await startHttpEngine({ cors: {}, middleware: [{ function_id: 'mw::deny', priority: 0 }] });
    await startWorker('flint', engine, (w) => {
      w.registerFunction('mw::deny', (input: { request: { headers: Record<string, string> } }) =>
        input.request.headers['x-deny'] ? { action: 'respond', response: { status_code: 401, body: { error: 'no' } } } : { action: 'continue' },
      );
      serveRoute(w, 'any::fn', { method: 'PUT', path: '/any' }, () => ({ body: 'ok' }));
    });
    const pre = await fetchWithin(`${base}/any`, {
      method: 'OPTIONS',
      headers: { origin: 'https://x.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'x-one, x-two' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toBe('x-one, x-two');
    expect(pre.headers.get('access-control-max-age')).toBe('600');
    expect(pre.headers.get('access-control-allow-methods')).toContain('PUT');

    const ok = await fetchWithin(`${base}/any`, { method: 'PUT', headers: { origin: 'https://x.example' } });
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    const denied = await fetchWithin(`${base}/any`, { method: 'PUT', headers: { origin: 'https://x.example', 'x-deny': '1' } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe('*');
    const notAllowed = await fetchWithin(`${base}/any`, { method: 'GET', headers: { origin: 'https://x.example' } });
    expect(notAllowed.status).toBe(405);
    expect(notAllowed.headers.get('access-control-allow-origin')).toBe('*');
    expect(notAllowed.headers.get('allow')).toContain('OPTIONS');
  });
});
