/**
 * flint-http-functions: a worker registers a function whose implementation is an HTTP endpoint, through
 * both worker SDKs, and the engine calls a real local HTTP server for it: answers mapped to results and
 * errors, methods and bodies, headers with an HMAC signature the server verifies and credentials from
 * the engine's environment, time-outs, error statuses, the response size cap, the URL rules at
 * registration (allow-list, require_https, bad shapes), private addresses refused after DNS
 * resolution, the function's lifetime, a durable queue delivering to a webhook, and the engine without
 * the module.
 *
 * The server listens on 127.0.0.1, which block_private_addresses (on by default) refuses: tests that
 * reach it turn the block off; the blocking tests keep it on.
 */
import { createHmac } from 'node:crypto';
import type { Engine } from '@flint/engine';
import type { FlintError } from '@flint/protocol';
import type { Worker as FlintWorker, HttpInvocation } from '@flint/sdk';
import type { HttpInvocationConfig, ISdk } from 'iii-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, type TestWorker, isListed, startTestEngine, startWorker, waitForFunction } from '../support/harness.js';
import { startEndpoint } from '../support/http-functions/endpoint.js';
import { type LogCapture, captureLog } from '../support/log-capture.js';
import { freePort, outcome, sleep, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

/** Environment variables a test sets for the engine (this process); removed after each test. */
const envSet: string[] = [];
afterEach(() => {
  for (const name of envSet.splice(0)) delete process.env[name];
});
function setEnv(value: string): string {
  const name = `FLINT_TEST_${uid('secret').replace('-', '_').toUpperCase()}`;
  process.env[name] = value;
  envSet.push(name);
  return name;
}

// biome-ignore lint/suspicious/noExplicitAny: invocations are built loosely here, including bad ones
type Invocation = Record<string, any>;

/** Registers an HTTP function through the worker's own SDK (both take the invocation as the second argument). */
function registerHttp(w: TestWorker, id: string, invocation: Invocation): { unregister(): void } {
  if (w.kind === 'flint') return (w.native as FlintWorker).registerFunction(id, invocation as HttpInvocation);
  return (w.native as ISdk).registerFunction(id, invocation as HttpInvocationConfig);
}

interface Started {
  engine: Engine;
  logs: LogCapture;
}

/** An engine with flint-http-functions (private addresses allowed unless `security` says otherwise) and a debug log kept in memory. */
async function startHttpFunctions(config: Record<string, unknown> = {}, otherModules: Record<string, unknown>[] = []): Promise<Started> {
  const { security, ...rest } = config as { security?: Record<string, unknown> };
  const logs = captureLog('debug');
  const engine = await startTestEngine(
    { modules: [{ name: 'flint-http-functions', config: { ...rest, security: { block_private_addresses: false, ...security } } }, ...otherModules] },
    { logger: logs.logger },
  );
  return { engine, logs };
}

/** A worker providing HTTP function `id`; resolves once the engine lists it. */
async function provide(kind: SdkKind, engine: Engine, id: string, invocation: Invocation): Promise<TestWorker> {
  const w = await startWorker(kind, engine);
  registerHttp(w, id, invocation);
  await waitForFunction(engine, id, true, 3000);
  return w;
}

/**
 * Registers `invocation` and waits for the engine to refuse it: returns the refusal's code and message from
 * the engine's log (both SDKs) after checking that @flint/sdk reported the same as `engineError`.
 */
async function refused(kind: SdkKind, started: Started, invocation: Invocation): Promise<{ code: string; message: string }> {
  const { engine, logs } = started;
  const id = uid('http::refused');
  const w = await startWorker(kind, engine);
  const told: FlintError[] = [];
  if (kind === 'flint') (w.native as FlintWorker).on('engineError', (e) => told.push(e));
  registerHttp(w, id, invocation);
  const record = await waitFor(() => logs.records.find((r) => r.function_id === id && typeof r.code === 'string'), 3000, `the refusal of ${id}`);
  const message = String(record.msg);
  if (kind === 'flint') {
    await waitFor(() => told.length > 0, 2000, 'engineError');
    expect(told[0]?.code).toBe(record.code);
    expect(told[0]?.message).toContain(id);
  }
  expect(isListed(engine, id)).toBe(false);
  return { code: record.code as string, message };
}

describe.each(SDK_KINDS)('flint-http-functions with %s workers', (kind: SdkKind) => {
  it('maps 2xx answers to results: JSON parsed, text as a string, an empty body as null', async () => {
    const { engine } = await startHttpFunctions();
    const server = await startEndpoint();
    server.on('/json', (req) => ({ headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ echo: JSON.parse(req.body) }) }));
    server.on('/problem', () => ({ headers: { 'content-type': 'application/vnd.api+json' }, body: '[1,2]' }));
    server.on('/text', () => ({ headers: { 'content-type': 'text/plain' }, body: '{"not":"parsed"}' }));
    server.on('/empty', () => ({ status: 204 }));
    server.on('/empty-json', () => ({ status: 200, headers: { 'content-type': 'application/json' } }));
    server.on('/bad-json', () => ({ headers: { 'content-type': 'application/json' }, body: '{"truncated":' }));
    const w = await startWorker(kind, engine);
    for (const path of ['/json', '/problem', '/text', '/empty', '/empty-json', '/bad-json'])
      registerHttp(w, `http::${path.slice(1)}`, { url: `${server.origin}${path}` });
    await waitForFunction(engine, 'http::bad-json');

    // Called by the same worker through its SDK: the whole round trip.
    expect(await w.trigger({ function_id: 'http::json', payload: { name: 'Ada', n: [1, 2] } })).toEqual({ echo: { name: 'Ada', n: [1, 2] } });
    expect(await w.trigger({ function_id: 'http::problem', payload: {} })).toEqual([1, 2]);
    expect(await w.trigger({ function_id: 'http::text', payload: {} })).toBe('{"not":"parsed"}');
    // (iii-sdk hands a null result to its caller as undefined: the engine's own answer is checked.)
    expect(await engine.invoke('http::empty', {})).toBeNull();
    expect(await engine.invoke('http::empty-json', {})).toBeNull();
    const bad = await outcome(engine.invoke('http::bad-json', {}));
    expect(bad).toMatchObject({ ok: false, error: { code: 'invocation_failed' } });
    expect(!bad.ok && bad.error.message).toMatch(/says it is JSON but is not valid JSON/);
    expect(server.requests.map((r) => r.path)).toEqual(['/json', '/problem', '/text', '/empty', '/empty-json', '/bad-json']);
  });

  it('POST, PUT and PATCH send the payload as a JSON body; GET and DELETE send none', async () => {
    const { engine } = await startHttpFunctions();
    const server = await startEndpoint();
    server.on('/m', (req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method: req.method }) }));
    const w = await startWorker(kind, engine);
    const methods = ['POST', 'PUT', 'PATCH', 'GET', 'DELETE'];
    for (const m of methods) registerHttp(w, `http::${m}`, { url: `${server.origin}/m?via=${m}`, method: m });
    registerHttp(w, 'http::default', { url: `${server.origin}/m` });
    await waitForFunction(engine, 'http::default');
    for (const m of methods) expect(await engine.invoke(`http::${m}`, { order: 7 })).toEqual({ method: m });
    expect(await engine.invoke('http::default', { order: 8 })).toEqual({ method: 'POST' });

    const seen = server.requests.map((r) => ({ method: r.method, path: r.path, body: r.body, type: r.headers['content-type'] }));
    expect(seen).toEqual([
      { method: 'POST', path: '/m?via=POST', body: '{"order":7}', type: 'application/json' },
      { method: 'PUT', path: '/m?via=PUT', body: '{"order":7}', type: 'application/json' },
      { method: 'PATCH', path: '/m?via=PATCH', body: '{"order":7}', type: 'application/json' },
      { method: 'GET', path: '/m?via=GET', body: '', type: undefined },
      { method: 'DELETE', path: '/m?via=DELETE', body: '', type: undefined },
      { method: 'POST', path: '/m', body: '{"order":8}', type: 'application/json' },
    ]);
  });

  it('resolves a hostname at call time and connects to what it resolved, keeping the Host header; an unknown host fails', async () => {
    const { engine } = await startHttpFunctions();
    const server = await startEndpoint();
    server.on('/named', (req) => ({ body: String(req.headers.host) }));
    const w = await startWorker(kind, engine);
    registerHttp(w, 'http::named', { url: `http://localhost:${server.port}/named` });
    registerHttp(w, 'http::unknown', { url: 'http://flint-no-such-host.invalid/x', timeout_ms: 5000 });
    await waitForFunction(engine, 'http::unknown');
    expect(await engine.invoke('http::named', {})).toBe(`localhost:${server.port}`);
    const unknown = await outcome(engine.invoke('http::unknown', {}));
    expect(unknown).toMatchObject({
      ok: false,
      error: { code: 'invocation_failed', message: expect.stringContaining('cannot resolve flint-no-such-host.invalid') },
    });
  });

  it('sends the flint headers and the invocation headers, signs with HMAC (verified by the server), and never logs a secret', async () => {
    const { engine, logs } = await startHttpFunctions();
    const server = await startEndpoint();
    const secret = `hmac-${uid('s')}`;
    const token = `token-${uid('t')}`;
    const apiKey = `key-${uid('k')}`;
    const hmacVar = setEnv(secret);
    const tokenVar = setEnv(token);
    const keyVar = setEnv(apiKey);
    // The receiver's check, as docs/http-functions.md shows it.
    const verified: boolean[] = [];
    server.on('/signed', (req) => {
      const timestamp = String(req.headers['x-flint-timestamp']);
      const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${req.body}`).digest('hex')}`;
      const ok = req.headers['x-flint-signature'] === expected && Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
      verified.push(ok);
      return ok ? { status: 200, headers: { 'content-type': 'application/json' }, body: '"verified"' } : { status: 401, body: 'bad signature' };
    });
    server.on('/plain', () => ({ body: 'ok' }));

    const w = await startWorker(kind, engine);
    registerHttp(w, 'http::signed', {
      url: `${server.origin}/signed`,
      headers: { 'X-Tenant': 'acme', 'content-type': 'application/json; charset=utf-8' },
      auth: { type: 'hmac', secret_key: hmacVar },
    });
    registerHttp(w, 'http::signed-get', { url: `${server.origin}/signed`, method: 'GET', auth: { type: 'hmac', secret_key: hmacVar } });
    registerHttp(w, 'http::bearer', { url: `${server.origin}/plain`, auth: { type: 'bearer', token_key: tokenVar } });
    registerHttp(w, 'http::api-key', { url: `${server.origin}/plain`, auth: { type: 'api_key', header: 'X-Api-Key', value_key: keyVar } });
    await waitForFunction(engine, 'http::api-key');

    expect(await engine.invoke('http::signed', { amount: 42 })).toBe('verified');
    expect(await engine.invoke('http::signed', { amount: 43 })).toBe('verified');
    expect(await engine.invoke('http::signed-get', { ignored: true })).toBe('verified');
    expect(verified).toEqual([true, true, true]);
    const [first, second] = server.requests;
    expect(first?.headers).toMatchObject({
      'x-flint-function-id': 'http::signed',
      'x-tenant': 'acme',
      'content-type': 'application/json; charset=utf-8',
      'x-flint-signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
    });
    expect(first?.headers['x-flint-invocation-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second?.headers['x-flint-invocation-id']).not.toBe(first?.headers['x-flint-invocation-id']);
    expect(Number(first?.headers['x-flint-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
    expect(first?.headers.authorization).toBeUndefined();

    expect(await engine.invoke('http::bearer', {})).toBe('ok');
    expect(await engine.invoke('http::api-key', {})).toBe('ok');
    const [bearer, keyed] = server.requests.slice(3);
    expect(bearer?.headers.authorization).toBe(`Bearer ${token}`);
    expect(bearer?.headers['x-flint-signature']).toBeUndefined();
    expect(keyed?.headers['x-api-key']).toBe(apiKey);

    // A secret that goes away fails the call (it is read at each call), naming the variable only.
    delete process.env[tokenVar];
    const gone = await outcome(engine.invoke('http::bearer', {}));
    expect(gone).toMatchObject({ ok: false, error: { code: 'invocation_failed', message: expect.stringContaining(tokenVar) } });

    const logged = JSON.stringify(logs.records);
    expect(logged).toContain('http::signed'); // the debug log has the registrations...
    for (const s of [secret, token, apiKey]) expect(logged).not.toContain(s); // ...and no secret
  });

  it('a slow endpoint fails with invocation_timeout within timeout_ms, and the request is abandoned', async () => {
    const { engine } = await startHttpFunctions();
    const server = await startEndpoint();
    server.on('/slow', () => 'hang');
    await provide(kind, engine, 'http::slow', { url: `${server.origin}/slow`, timeout_ms: 300 });
    const started = Date.now();
    const result = await outcome(engine.invoke('http::slow', {}));
    const elapsed = Date.now() - started;
    expect(result).toMatchObject({ ok: false, error: { code: 'invocation_timeout', message: expect.stringContaining('after 300 ms') } });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
    await waitFor(() => server.requests[0]?.abandoned, 2000, 'the server to see the request abandoned');
  });

  it('timeout_ms is capped by max_timeout_ms, and default_timeout_ms applies without one', async () => {
    const { engine } = await startHttpFunctions({ default_timeout_ms: 200, max_timeout_ms: 400 });
    const server = await startEndpoint();
    server.on('/slow', () => 'hang');
    const w = await startWorker(kind, engine);
    registerHttp(w, 'http::capped', { url: `${server.origin}/slow`, timeout_ms: 60_000 });
    registerHttp(w, 'http::defaulted', { url: `${server.origin}/slow` });
    await waitForFunction(engine, 'http::defaulted');
    expect(await outcome(engine.invoke('http::capped', {}))).toMatchObject({
      ok: false,
      error: { code: 'invocation_timeout', message: expect.stringContaining('after 400 ms') },
    });
    expect(await outcome(engine.invoke('http::defaulted', {}))).toMatchObject({
      ok: false,
      error: { code: 'invocation_timeout', message: expect.stringContaining('after 200 ms') },
    });
  });

  it('a 500 fails with http_error naming the status and the first 200 characters of the body; a refused connection with invocation_failed', async () => {
    const { engine } = await startHttpFunctions();
    const server = await startEndpoint();
    const body = `${'e'.repeat(200)}TAIL-NOT-SHOWN`;
    server.on('/boom', () => ({ status: 500, body }));
    server.on('/moved', () => ({ status: 302, headers: { location: 'http://169.254.169.254/' } }));
    const w = await startWorker(kind, engine);
    registerHttp(w, 'http::boom', { url: `${server.origin}/boom?key=hidden-query` });
    registerHttp(w, 'http::moved', { url: `${server.origin}/moved` });
    registerHttp(w, 'http::nobody', { url: `http://127.0.0.1:${await freePort()}/` });
    await waitForFunction(engine, 'http::nobody');

    const boom = await outcome(w.trigger({ function_id: 'http::boom', payload: {} }));
    expect(boom).toMatchObject({ ok: false, error: { code: 'http_error' } });
    const message = boom.ok ? '' : boom.error.message;
    expect(message).toContain('HTTP 500');
    expect(message).toContain(`${server.origin}/boom`);
    expect(message).toContain(`${'e'.repeat(200)}…`);
    expect(message).not.toContain('TAIL');
    expect(message).not.toContain('hidden-query');
    // Redirects are not followed (a redirect could lead anywhere, the metadata address included).
    expect(await outcome(engine.invoke('http::moved', {}))).toMatchObject({
      ok: false,
      error: { code: 'http_error', message: expect.stringContaining('HTTP 302') },
    });
    const nobody = await outcome(engine.invoke('http::nobody', {}));
    expect(nobody).toMatchObject({ ok: false, error: { code: 'invocation_failed', message: expect.stringContaining('ECONNREFUSED') } });
  });

  it('a response larger than max_response_bytes fails with response_too_large (declared or streamed); one at the limit passes', async () => {
    const { engine } = await startHttpFunctions({ security: { max_response_bytes: 1024 } });
    const server = await startEndpoint();
    server.on('/at-limit', () => ({ body: 'a'.repeat(1024) }));
    server.on('/declared', () => ({ body: 'b'.repeat(1025) }));
    // Chunked, no content-length: the engine must count as it reads.
    server.on('/streamed', () => ({ headers: { 'transfer-encoding': 'chunked' }, body: 'c'.repeat(64 * 1024) }));
    const w = await startWorker(kind, engine);
    for (const p of ['at-limit', 'declared', 'streamed']) registerHttp(w, `http::${p}`, { url: `${server.origin}/${p}` });
    await waitForFunction(engine, 'http::streamed');
    expect(await engine.invoke('http::at-limit', {})).toBe('a'.repeat(1024));
    for (const id of ['http::declared', 'http::streamed']) {
      expect(await outcome(engine.invoke(id, {}))).toMatchObject({
        ok: false,
        error: { code: 'response_too_large', message: expect.stringContaining('larger than 1024 bytes') },
      });
    }
    // The engine still works after abandoning those connections.
    expect(await engine.invoke('http::at-limit', {})).toBe('a'.repeat(1024));
  });

  it('refuses at registration: a URL outside the allow-list, http:// under require_https, bad shapes and unset variables', async () => {
    const started = await startHttpFunctions({ security: { url_allowlist: ['http://127.0.0.1:*/hooks/*'], require_https: false } });
    const server = await startEndpoint();
    server.on('/hooks/ok', () => ({ body: 'allowed' }));
    // Inside the allow-list: accepted and called.
    await provide(kind, started.engine, 'http::allowed', { url: `${server.origin}/hooks/ok` });
    expect(await started.engine.invoke('http::allowed', {})).toBe('allowed');

    const outside = await refused(kind, started, { url: `${server.origin}/other` });
    expect(outside).toMatchObject({ code: 'url_not_allowed', message: expect.stringContaining('url_allowlist') });
    expect((await refused(kind, started, { url: 'http://localhost/hooks/x' })).code).toBe('url_not_allowed');

    const cases: [Invocation, RegExp][] = [
      [{ url: 'not a url' }, /invocation: url must be an absolute/],
      [{ url: 'ftp://127.0.0.1/hooks/x' }, /url must be http/],
      [{ url: `http://user:pw@127.0.0.1:${server.port}/hooks/x` }, /credentials/],
      [{ url: `${server.origin}/hooks/x`, method: 'TRACE' }, /method must be one of/],
      [{ url: `${server.origin}/hooks/x`, timeout_ms: -1 }, /timeout_ms must be a positive integer/],
      [{ url: `${server.origin}/hooks/x`, headers: { Host: 'evil' } }, /headers\["Host"\] is set by the engine/],
      [{ url: `${server.origin}/hooks/x`, headers: { 'x-ok': 'a\r\nx-injected: 1' } }, /headers\["x-ok"\] holds characters/],
      [
        { url: `${server.origin}/hooks/x`, auth: { type: 'bearer', token_key: 'FLINT_TEST_SURELY_UNSET_VAR' } },
        /auth.token_key: environment variable FLINT_TEST_SURELY_UNSET_VAR is not set/,
      ],
      [{ url: `${server.origin}/hooks/x`, auth: { type: 'basic' } }, /auth.type must be hmac, bearer or api_key/],
    ];
    for (const [invocation, message] of cases) {
      const r = await refused(kind, started, invocation);
      expect(r.code, JSON.stringify(invocation)).toBe('invalid_payload');
      expect(r.message).toMatch(message);
    }
    expect(server.requests).toHaveLength(1);

    const https = await startHttpFunctions({ security: { require_https: true } });
    const plain = await refused(kind, https, { url: `${server.origin}/hooks/ok` });
    expect(plain).toMatchObject({ code: 'url_not_allowed', message: expect.stringContaining('require_https') });
    // https passes the registration check (nothing listens there; the call is not made).
    await provide(kind, https.engine, 'http::secure', { url: 'https://127.0.0.1:1/hooks/ok' });
  });

  it('with block_private_addresses on (the default), loopback, localhost and the metadata address are refused at call time', async () => {
    const logs = captureLog('debug');
    const engine = await startTestEngine({ modules: [{ name: 'flint-http-functions' }] }, { logger: logs.logger });
    const server = await startEndpoint();
    server.on('/x', () => ({ body: 'reached' }));
    const w = await startWorker(kind, engine);
    const urls: Record<string, string> = {
      'http::loopback': `${server.origin}/x`,
      'http::localhost': `http://localhost:${server.port}/x`,
      'http::mapped': `http://[::ffff:127.0.0.1]:${server.port}/x`,
      // IPv6 forms that lead to a blocked IPv4 address: IPv4-compatible, NAT64, 6to4 (the metadata address), Teredo.
      'http::compatible': `http://[::127.0.0.1]:${server.port}/x`,
      'http::nat64': `http://[64:ff9b::7f00:1]:${server.port}/x`,
      'http::nat64-local': `http://[64:ff9b:1::a00:1]:${server.port}/x`,
      'http::6to4': 'http://[2002:a9fe:a9fe::1]/latest/meta-data/',
      // Teredo: a public server (65.54.227.120), the client 127.0.0.1 with its bits inverted (80ff:fffe).
      'http::teredo': `http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:${server.port}/x`,
      // Teredo: a public client (65.54.227.120 inverted), the server the metadata address.
      'http::teredo-server': 'http://[2001:0:a9fe:a9fe:8000:63bf:bec9:1c87]/latest/meta-data/',
      'http::metadata': 'http://169.254.169.254/latest/meta-data/',
      'http::decimal': `http://2130706433:${server.port}/x`,
    };
    for (const [id, url] of Object.entries(urls)) registerHttp(w, id, { url, timeout_ms: 2000 });
    await waitForFunction(engine, 'http::decimal');
    for (const id of Object.keys(urls)) {
      const r = await outcome(engine.invoke(id, {}));
      expect(r, id).toMatchObject({ ok: false, error: { code: 'url_not_allowed', message: expect.stringContaining('block_private_addresses') } });
    }
    const localhost = await outcome(engine.invoke('http::localhost', {}));
    expect(!localhost.ok && localhost.error.message).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/);
    expect(server.requests).toHaveLength(0);
  });

  it('the function goes when its worker unregisters it or disconnects', async () => {
    const { engine } = await startHttpFunctions();
    const server = await startEndpoint();
    server.on('/x', () => ({ body: 'here' }));
    const w = await startWorker(kind, engine);
    const ref = registerHttp(w, 'http::unregistered', { url: `${server.origin}/x` });
    registerHttp(w, 'http::disconnected', { url: `${server.origin}/x` });
    await waitForFunction(engine, 'http::disconnected');
    expect(engine.listFunctions().find((f) => f.function_id === 'http::disconnected')?.providers).toEqual([
      { worker_id: expect.any(String), worker_name: w.name },
    ]);
    expect(await engine.invoke('http::unregistered', {})).toBe('here');

    ref.unregister();
    await waitForFunction(engine, 'http::unregistered', false);
    expect(await outcome(engine.invoke('http::unregistered', {}))).toMatchObject({ ok: false, error: { code: 'function_not_found' } });

    expect(await engine.invoke('http::disconnected', {})).toBe('here');
    await w.shutdown();
    await waitForFunction(engine, 'http::disconnected', false);
    expect(await outcome(engine.invoke('http::disconnected', {}))).toMatchObject({ ok: false, error: { code: 'function_not_found' } });
    expect(server.requests).toHaveLength(2);
  });

  it('a durable:subscriber whose function is an HTTP function delivers published data to the endpoint, retrying a failed delivery', async () => {
    const { engine } = await startHttpFunctions({}, [{ name: 'flint-queue' }]);
    const server = await startEndpoint();
    let failures = 1;
    server.on('/webhook', () => (failures-- > 0 ? { status: 503, body: 'try later' } : { status: 200 }));
    const topic = uid('orders');
    const w = await provide(kind, engine, 'webhook::orders', { url: `${server.origin}/webhook` });
    w.registerTrigger({ type: 'durable:subscriber', function_id: 'webhook::orders', config: { topic, queue_config: { max_retries: 3, backoff_ms: 50 } } });
    await waitFor(
      async () => {
        const stats = (await engine.invoke('engine::queue::topic_stats', { topic })) as { subscribers: { function_id: string; consumers: number }[] };
        return stats.subscribers.some((s) => s.function_id === 'webhook::orders' && s.consumers > 0);
      },
      5000,
      'the subscriber to consume',
    );
    await engine.invoke('flint::durable::publish', { topic, data: { order: 'o-1', total: 12.5 } });
    await waitFor(() => server.requests.length === 2, 5000, 'the delivery and its retry');
    await sleep(200);
    expect(server.requests.map((r) => ({ method: r.method, body: JSON.parse(r.body), function_id: r.headers['x-flint-function-id'] }))).toEqual([
      { method: 'POST', body: { order: 'o-1', total: 12.5 }, function_id: 'webhook::orders' },
      { method: 'POST', body: { order: 'o-1', total: 12.5 }, function_id: 'webhook::orders' },
    ]);
    expect(await engine.invoke('engine::queue::dlq_messages', { topic })).toEqual([]);
  });
});

describe('flint-http-functions: the engine', () => {
  it.each(SDK_KINDS)('without the module, an HTTP function is refused with function_not_invokable (%s)', async (kind) => {
    const logs = captureLog('debug');
    const engine = await startTestEngine({ modules: [] }, { logger: logs.logger });
    const r = await refused(kind, { engine, logs }, { url: 'https://example.com/hook' });
    expect(r.code).toBe('function_not_invokable');
  });

  it('an invalid config stops start-up naming the key', async () => {
    await expect(startTestEngine({ modules: [{ name: 'flint-http-functions', config: { security: { block_privat_addresses: false } } }] })).rejects.toThrow(
      /block_privat_addresses/,
    );
    await expect(startTestEngine({ modules: [{ name: 'flint-http-functions', config: { default_timeout_ms: 10, max_timeout_ms: 5 } }] })).rejects.toThrow(
      /default_timeout_ms: .*must not be larger than max_timeout_ms/,
    );
  });

  it('is known by its upstream class name', async () => {
    const logs = captureLog('debug');
    const engine = await startTestEngine({ modules: [{ class: 'modules::http_functions::HttpFunctionsModule' }] }, { logger: logs.logger });
    const w = await startWorker('flint', engine);
    registerHttp(w, 'http::aliased', { url: 'https://example.com/hook' });
    await waitForFunction(engine, 'http::aliased');
  });
});
