/**
 * POST /_console/invoke against functions of a real worker: results and errors reported with their
 * time, and the request checks (function_id, timeout_ms, JSON body, body size).
 */
import { request } from 'node:http';
import { FlintError } from '@flint/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleEnv, sleep, startConsoleEnv, uid } from './support/console-env.js';

let env: ConsoleEnv;
const ns = uid('invoke');
const received: unknown[] = [];

beforeAll(async () => {
  env = await startConsoleEnv();
  await env.worker((w) => {
    w.registerFunction(`${ns}::add`, (input: { a: number; b: number }) => {
      received.push(input);
      return { sum: input.a + input.b };
    });
    w.registerFunction(`${ns}::fail`, () => {
      throw new FlintError('out_of_stock', 'no more widgets');
    });
    w.registerFunction(`${ns}::slow`, async () => {
      await sleep(2000);
      return 'late';
    });
    w.registerFunction(`${ns}::nothing`, () => undefined);
  });
});

afterAll(() => env?.close());

describe('POST /_console/invoke', () => {
  it("answers status ok with the function's result and the time it took", async () => {
    const res = await env.api('POST', '/_console/invoke', { function_id: `${ns}::add`, input: { a: 2, b: 40 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', result: { sum: 42 } });
    expect(res.body.duration_ms).toBeTypeOf('number');
    expect(res.body.duration_ms).toBeGreaterThanOrEqual(0);
    expect(received).toContainEqual({ a: 2, b: 40 });
  });

  it('answers a function that returns nothing with result null', async () => {
    const res = await env.api('POST', '/_console/invoke', { function_id: `${ns}::nothing` });
    expect(res.body).toMatchObject({ status: 'ok', result: null });
  });

  it("reports a function that throws as status error with the function's code (HTTP 200)", async () => {
    const res = await env.api('POST', '/_console/invoke', { function_id: `${ns}::fail`, input: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'error', error: { code: 'out_of_stock', message: expect.stringContaining('no more widgets') } });
    expect(res.body.duration_ms).toBeTypeOf('number');
  });

  it('reports an unknown function as function_not_found', async () => {
    const res = await env.api('POST', '/_console/invoke', { function_id: `${ns}::missing` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'error', error: { code: 'function_not_found' } });
  });

  it('reports a call that outlives timeout_ms as an invocation time-out', async () => {
    const started = Date.now();
    const res = await env.api('POST', '/_console/invoke', { function_id: `${ns}::slow`, timeout_ms: 100 });
    expect(res.body).toMatchObject({ status: 'error', error: { code: 'invocation_timeout' } });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('refuses a body without function_id with 400 invalid_request', async () => {
    for (const body of [{}, { function_id: '' }, { function_id: 42 }]) {
      const res = await env.api('POST', '/_console/invoke', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', error: expect.stringContaining('function_id') });
    }
  });

  it('refuses a body that is not JSON with 400 invalid_json, and JSON that is not an object with invalid_request', async () => {
    const bad = await env.api('POST', '/_console/invoke', undefined, { raw: '{"function_id": ' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_json');
    const list = await env.api('POST', '/_console/invoke', undefined, { raw: '[1, 2]' });
    expect(list.status).toBe(400);
    expect(list.body.code).toBe('invalid_request');
  });

  it('refuses a body larger than 8 MiB with 413 payload_too_large', async () => {
    const raw = JSON.stringify({ function_id: `${ns}::add`, input: { text: 'x'.repeat(8 * 1024 * 1024) } });
    const res = await env.api('POST', '/_console/invoke', undefined, { raw });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it('reads an oversized body to its end before answering 413, so a client still sending gets the answer, not a broken pipe', async () => {
    const url = new URL(env.url);
    const first = Buffer.alloc(9 * 1024 * 1024, 'x');
    const rest = Buffer.alloc(4 * 1024 * 1024, 'x');
    const errors: string[] = [];
    const seen: string[] = [];
    let status = 0;
    let body = '';
    await new Promise<void>((resolve) => {
      const headers = { 'x-flint-console': '1', 'content-type': 'application/json', 'content-length': first.length + rest.length };
      const req = request({ host: url.hostname, port: url.port, path: '/_console/invoke', method: 'POST', agent: false, headers }, (res) => {
        seen.push('answer');
        status = res.statusCode ?? 0;
        res.on('data', (chunk: Buffer) => {
          body += chunk;
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message));
      req.on('close', () => resolve());
      // The limit is passed while the client is still sending: the rest comes a little later.
      req.write(first);
      setTimeout(() => {
        seen.push('rest sent');
        req.end(rest);
      }, 300);
    });
    // Before the fix the server answered at once, stopped reading and the rest of the upload broke (EPIPE).
    expect(seen).toEqual(['rest sent', 'answer']);
    expect(errors).toEqual([]);
    expect(status).toBe(413);
    expect(JSON.parse(body).code).toBe('payload_too_large');
  });

  it('refuses a timeout_ms that is not an integer from 1 to 300000 with 400', async () => {
    for (const timeout_ms of [0, -5, 1.5, '100', 300_001, null]) {
      const res = await env.api('POST', '/_console/invoke', { function_id: `${ns}::add`, input: { a: 1, b: 1 }, timeout_ms });
      expect(res.status, `timeout_ms ${JSON.stringify(timeout_ms)}`).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.error).toContain('timeout_ms');
    }
  });

  it('answers other methods on /_console/invoke with 405 and an Allow header, and unknown API paths with 404', async () => {
    const get = await env.api('GET', '/_console/invoke');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(get.body.code).toBe('method_not_allowed');
    const missing = await env.api('GET', '/_console/nope');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
  });
});
