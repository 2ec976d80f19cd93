/**
 * `worker.registerFunction(id, invocation)`: a function implemented by an HTTP endpoint, against a real
 * engine with flint-http-functions and a local HTTP server. The engine calls the URL (never the worker),
 * the registration is sent again after a reconnect, an invocation the engine refuses is reported as
 * `engineError`, and shapes the `HttpInvocation` type refuses are compile errors (checked by
 * `npm run typecheck:tests` through the @ts-expect-error lines).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FlintError, HttpInvocation } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, startTestEngine, startWorker, track, waitFor } from './support.js';

afterEach(cleanup);

const moduleConfig = { modules: [{ name: 'flint-http-functions', config: { security: { block_private_addresses: false } } }] };

/** A local endpoint answering `{got: <body>}`; returns its URL and the bodies it received. */
async function endpoint(): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ got: JSON.parse(body || 'null') }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  track(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

const listed = (engine: { listFunctions(): { function_id: string }[] }, id: string) => engine.listFunctions().some((f) => f.function_id === id);

describe('registerFunction with an HttpInvocation', () => {
  it('the engine calls the URL; the registration is sent again after the engine restarts', async () => {
    const server = await endpoint();
    const first = await startTestEngine(moduleConfig);
    const port = Number(new URL(first.bridgeUrl).port);
    const w = startWorker(first.bridgeUrl);
    const invocation: HttpInvocation = { url: server.url, method: 'PUT', timeout_ms: 2000, headers: { 'x-team': 'billing' } };
    const ref = w.registerFunction('hook::orders', invocation, { description: 'orders webhook' });
    expect(ref.id).toBe('hook::orders');
    await waitFor(() => listed(first, 'hook::orders'), 2000, 'the HTTP function to be listed');
    expect(first.listFunctions().find((f) => f.function_id === 'hook::orders')).toMatchObject({ description: 'orders webhook' });
    expect(await w.trigger({ function_id: 'hook::orders', payload: { n: 1 } })).toEqual({ got: { n: 1 } });

    await first.stop();
    const second = await startTestEngine({ ...moduleConfig, bridge: { port } });
    await waitFor(() => listed(second, 'hook::orders'), 5000, 'the HTTP function to be registered again');
    expect(await w.trigger({ function_id: 'hook::orders', payload: { n: 2 } })).toEqual({ got: { n: 2 } });
    expect(server.bodies).toEqual(['{"n":1}', '{"n":2}']);

    ref.unregister();
    await waitFor(() => !listed(second, 'hook::orders'), 2000, 'the HTTP function to be gone');
  });

  it('an invocation the engine refuses is reported as engineError; a second argument of neither kind throws', async () => {
    const engine = await startTestEngine({ modules: [{ name: 'flint-http-functions', config: { security: { require_https: true } } }] });
    const w = startWorker(engine.bridgeUrl);
    const told: FlintError[] = [];
    w.on('engineError', (e) => told.push(e));
    w.registerFunction('hook::plain', { url: 'http://example.com/hook' });
    await waitFor(() => told.length > 0, 2000, 'engineError');
    expect(told[0]).toMatchObject({ code: 'url_not_allowed', message: expect.stringContaining('hook::plain') });
    expect(listed(engine, 'hook::plain')).toBe(false);

    // biome-ignore lint/suspicious/noExplicitAny: a JavaScript caller's mistake
    expect(() => w.registerFunction('hook::bad', { href: 'https://example.com' } as any)).toThrow(/handler or an HTTP invocation/);
  });

  it('the HttpInvocation type', () => {
    // @ts-expect-error the method is one of GET, POST, PUT, PATCH, DELETE
    const badMethod: HttpInvocation = { url: 'https://example.com', method: 'TRACE' };
    // @ts-expect-error an api_key auth needs the header's name
    const badAuth: HttpInvocation = { url: 'https://example.com', auth: { type: 'api_key', value_key: 'KEY' } };
    const good: HttpInvocation = { url: 'https://example.com', auth: { type: 'hmac', secret_key: 'WEBHOOK_SECRET' } };
    expect([badMethod, badAuth, good]).toHaveLength(3);
  });
});
