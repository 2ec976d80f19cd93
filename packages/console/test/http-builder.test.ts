/**
 * POST /_console/http: the request builder, sent by the console to the engine's HTTP port, calling
 * routes a real worker registered; the checks on path and headers; an HTTP port that does not answer.
 */
import type { HttpRequest } from '@flint/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, closedPort, consoleFlagsFor, startConsoleEnv, startTestConsole, uid } from './support/console-env.js';

let env: ConsoleEnv;
const ns = uid('api');
const base = `/${ns}`;

beforeAll(async () => {
  env = await startConsoleEnv();
  const worker = await env.worker((w) => {
    w.registerFunction(`${ns}::echo`, (req: HttpRequest) => ({
      status_code: 200,
      headers: { 'x-echo': req.headers['x-demo'] ?? 'none' },
      body: { id: req.path_params.id, query: req.query_params, demo: req.headers['x-demo'] ?? null, method: req.method },
    }));
    w.registerFunction(`${ns}::create`, (req: HttpRequest<{ name: string }>) => ({
      status_code: 201,
      body: { created: req.body.name, content_type: req.headers['content-type'] },
    }));
    w.registerFunction(`${ns}::headers`, (req: HttpRequest) => ({ status_code: 200, body: req.headers }));
    w.registerFunction(`${ns}::text`, () => ({ status_code: 418, headers: { 'content-type': 'text/plain' }, body: 'short and stout' }));
  });
  await Promise.all([
    worker.registerTrigger({ type: 'http', function_id: `${ns}::echo`, config: { api_path: `${base}/items/:id`, http_method: 'GET' } }).ready,
    worker.registerTrigger({ type: 'http', function_id: `${ns}::create`, config: { api_path: `${base}/items`, http_method: 'POST' } }).ready,
    worker.registerTrigger({ type: 'http', function_id: `${ns}::headers`, config: { api_path: `${base}/headers`, http_method: 'GET' } }).ready,
    worker.registerTrigger({ type: 'http', function_id: `${ns}::text`, config: { api_path: `${base}/teapot`, http_method: 'GET' } }).ready,
  ]);
});

afterAll(() => env?.close());

const send = (request: Record<string, unknown>) => env.api('POST', '/_console/http', request);

describe('POST /_console/http', () => {
  it('sends a GET with query parameters and a header to a worker route and shows the answer', async () => {
    const res = await send({
      method: 'get',
      path: `${base}/items/42`,
      query: [
        ['q', 'a b&c'],
        ['', 'ignored'],
      ],
      headers: [['X-Demo', 'hello']],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 200,
      body_is_json: true,
      body: { id: '42', query: { q: 'a b&c' }, demo: 'hello', method: 'GET' },
    });
    expect(res.body.headers).toContainEqual(['x-echo', 'hello']);
    expect(res.body.duration_ms).toBeTypeOf('number');
    const url = new URL(res.body.url);
    expect(url.pathname).toBe(`${base}/items/42`);
    expect(url.searchParams.get('q')).toBe('a b&c');
    const http = env.engine.listeners().find((l) => l.name === 'http');
    expect(url.origin).toBe(http?.url);
  });

  it('sends a POST with a JSON body', async () => {
    const res = await send({ method: 'POST', path: `${base}/items`, body: { name: 'widget' } });
    expect(res.body).toMatchObject({ status: 201, body_is_json: true, body: { created: 'widget', content_type: 'application/json' } });
  });

  it("shows a text answer as text, and the engine's own 404 for an unknown route", async () => {
    const teapot = await send({ method: 'GET', path: `${base}/teapot` });
    expect(teapot.body).toMatchObject({ status: 418, body_is_json: false, body: 'short and stout' });
    const missing = await send({ method: 'GET', path: `${base}/nothing` });
    expect(missing.status).toBe(200);
    expect(missing.body.status).toBe(404);
  });

  it('refuses a path that leaves the engine (//evil) or does not start with /', async () => {
    for (const path of ['//evil.example/x', 'http://evil.example/', 'relative', '']) {
      const res = await send({ method: 'GET', path });
      expect(res.status, path).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
  });

  it('refuses the host header and the other connection headers, and bad methods or pairs', async () => {
    for (const name of ['host', 'Host', 'content-length', 'transfer-encoding', 'connection']) {
      const res = await send({ method: 'GET', path: `${base}/items/1`, headers: [[name, 'x']] });
      expect(res.status, name).toBe(400);
      expect(res.body.error).toContain('cannot be set');
    }
    const method = await send({ method: 'TRACE', path: `${base}/items/1` });
    expect(method.status).toBe(400);
    const pairs = await send({ method: 'GET', path: `${base}/items/1`, headers: { 'x-demo': 'object' } });
    expect(pairs.status).toBe(400);
    const badName = await send({ method: 'GET', path: `${base}/items/1`, headers: [['bad name', 'x']] });
    expect(badName.status).toBe(400);
  });

  it("does not pass the console's own token, cookie or headers on to the engine", async () => {
    const token = 'builder-token-0123456789';
    const server = await startTestConsole({ ...consoleFlagsFor(env.engine), token });
    try {
      const res = await fetch(`${server.url}/_console/http`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-flint-console': '1',
          authorization: `Bearer ${token}`,
          cookie: `flint_console_token=${token}`,
        },
        body: JSON.stringify({ method: 'GET', path: `${base}/headers`, headers: [['x-chosen', 'yes']] }),
      });
      expect(res.status).toBe(200);
      const seen = ((await res.json()) as { body: Record<string, string> }).body;
      expect(seen['x-chosen']).toBe('yes');
      expect(seen.authorization).toBeUndefined();
      expect(seen.cookie).toBeUndefined();
      expect(seen['x-flint-console']).toBeUndefined();
      expect(JSON.stringify(seen)).not.toContain(token);
    } finally {
      await server.close();
    }
  });

  it('answers 502 engine_http_unreachable when the engine HTTP port is closed', async () => {
    const server = await startTestConsole({ ...consoleFlagsFor(env.engine), enginePort: await closedPort() });
    try {
      const res = await fetch(`${server.url}/_console/http`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-flint-console': '1' },
        body: JSON.stringify({ method: 'GET', path: '/' }),
      });
      expect(res.status).toBe(502);
      const body = (await res.json()) as { code: string; error: string };
      expect(body.code).toBe('engine_http_unreachable');
      expect(body.error).toContain('ECONNREFUSED');
      const status = (await (await fetch(`${server.url}/_console/status`)).json()) as { http: { reachable: boolean; detail: string } };
      expect(status.http).toMatchObject({ reachable: false, detail: 'ECONNREFUSED' });
    } finally {
      await server.close();
    }
  });
});
