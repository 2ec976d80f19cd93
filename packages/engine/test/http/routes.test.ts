/**
 * `flint-http` config and routing: config validation, `http` trigger registration (conflicts, bad
 * config), matching (params, leading/trailing slashes, HEAD, OPTIONS, 404/405/503), route removal on
 * unregister and disconnect, 1,000 routes and concurrent requests to many routes.
 */
import { ConfigError, type Engine, type ModuleDefinition, createEngine, startEngine } from '@flint/engine';
import { TriggerRegistrationError } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, listTriggers, startWorker } from '../support/harness.js';
import { fetchWithin, json, rawRegisterRoute, serveRoute, startHttpEngine, waitStatus } from '../support/http/helpers.js';
import { RawClient } from '../support/raw-client.js';
import { outcome, waitFor, within } from '../support/util.js';

afterEach(cleanup);

/** Runs `task` over `items` with at most `limit` in flight. */
async function pool<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const run = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await task(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}

const echo = (tag: string) => (req: Record<string, unknown>) => ({
  status_code: 200,
  body: { tag, path_params: req.path_params, query_params: req.query_params, method: req.method, path: req.path, route: req.route },
});

describe('flint-http config', () => {
  it('refuses unknown keys at the top level, in cors and in middleware entries', () => {
    const attempt = (config: Record<string, unknown>) => {
      try {
        createEngine({ config: { log: { level: 'silent' }, modules: [{ name: 'flint-http', config }] } });
      } catch (err) {
        return err;
      }
      return undefined;
    };
    const top = attempt({ port: 0, prot: 3000 });
    expect(top).toBeInstanceOf(ConfigError);
    expect(String((top as Error).message)).toMatch(/prot/);
    const cors = attempt({ port: 0, cors: { origin: ['*'] } });
    expect(cors).toBeInstanceOf(ConfigError);
    expect(String((cors as Error).message)).toMatch(/origin/);
    const mw = attempt({ port: 0, middleware: [{ function_id: 'a::b', priority: 1, order: 2 }] });
    expect(mw).toBeInstanceOf(ConfigError);
    expect(String((mw as Error).message)).toMatch(/order/);
    const phase = attempt({ port: 0, middleware: [{ function_id: 'a::b', phase: 'postHandler' }] });
    expect(phase).toBeInstanceOf(ConfigError);
  });

  it('has the documented defaults (host, port, time-outs, body limit, CORS off, no middleware)', async () => {
    const engine = createEngine({ config: { log: { level: 'silent' }, modules: [{ name: 'flint-http' }] } });
    try {
      expect(engine.config.modules).toHaveLength(1);
      expect(engine.config.modules[0]?.name).toBe('flint-http');
      expect(engine.config.modules[0]?.config).toEqual({
        host: '127.0.0.1',
        port: 3111,
        default_timeout_ms: 30_000,
        middleware_timeout_ms: 5_000,
        max_body_bytes: 4 * 1024 * 1024,
        max_connections: 4096,
        headers_timeout_ms: 10_000,
        request_timeout_ms: 60_000,
        keep_alive_timeout_ms: 5_000,
        middleware: [],
      });
      const withCors = createEngine({ config: { log: { level: 'silent' }, modules: [{ name: 'flint-http', config: { cors: {} } }] } });
      expect((withCors.config.modules[0]!.config as { cors: unknown }).cors).toEqual({
        origins: ['*'],
        methods: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'],
        headers: ['*'],
        credentials: false,
        max_age_seconds: 600,
      });
      await withCors.stop();
      const mw = createEngine({ config: { log: { level: 'silent' }, modules: [{ name: 'flint-http', config: { middleware: [{ function_id: 'a::b' }] } }] } });
      expect((mw.config.modules[0]!.config as { middleware: unknown }).middleware).toEqual([{ function_id: 'a::b', phase: 'preHandler', priority: 0 }]);
      await mw.stop();
    } finally {
      await engine.stop();
    }
  });

  it('is loaded through its alias class: modules::api::RestApiModule', async () => {
    const engine = await startEngine({
      config: { bridge: { port: 0 }, log: { level: 'silent' }, modules: [{ class: 'modules::api::RestApiModule', config: { port: 0 } }] },
    });
    try {
      expect(engine.moduleNames).toEqual(['flint-http']);
      const url = engine.listeners().find((l) => l.name === 'http')?.url;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetchWithin(`${url}/nothing`);
      expect(res.status).toBe(404);
      expect(await json(res)).toMatchObject({ code: 'route_not_found' });
    } finally {
      await engine.stop();
    }
  });
});

describe.each(SDK_KINDS)('routes with %s', (kind: SdkKind) => {
  it('matches :name segments, with or without a leading slash, ignoring a trailing slash', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'users::get', { method: 'GET', path: 'users/:id' }, echo('users'));
      serveRoute(w, 'items::get', { method: 'GET', path: '/shops/:shop/items/:item/' }, echo('items'));
      serveRoute(w, 'me::get', { method: 'GET', path: '/users/me' }, echo('me'));
    });

    const a = await json(await fetchWithin(`${base}/users/42?x=1&y=two`));
    expect(a).toEqual({ tag: 'users', path_params: { id: '42' }, query_params: { x: '1', y: 'two' }, method: 'GET', path: '/users/42', route: 'users/:id' });
    const b = await json(await fetchWithin(`${base}/users/42/`));
    expect(b).toMatchObject({ tag: 'users', path_params: { id: '42' } });
    const c = await json(await fetchWithin(`${base}/shops/s1/items/i%20two`));
    expect(c).toMatchObject({ tag: 'items', path_params: { shop: 's1', item: 'i two' }, route: '/shops/:shop/items/:item/' });
    const d = await json(await fetchWithin(`${base}/shops/s1/items/i2/`));
    expect(d).toMatchObject({ tag: 'items', path_params: { shop: 's1', item: 'i2' } });
    // A static segment wins over a parameter at the same place.
    const e = await json(await fetchWithin(`${base}/users/me`));
    expect(e).toMatchObject({ tag: 'me', path_params: {} });
  });

  it('answers 404 route_not_found and 405 method_not_allowed with Allow (JSON bodies)', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'thing::get', { method: 'GET', path: '/thing/:id' }, echo('get'));
      serveRoute(w, 'thing::post', { method: 'POST', path: '/thing/:id' }, echo('post'));
    });

    const missing = await fetchWithin(`${base}/nothing/here`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/application\/json/);
    expect(await json(missing)).toMatchObject({ code: 'route_not_found', error: expect.any(String) });

    const wrong = await fetchWithin(`${base}/thing/1`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    const allow = (wrong.headers.get('allow') ?? '').split(',').map((s) => s.trim());
    expect(allow).toEqual(expect.arrayContaining(['GET', 'HEAD', 'POST']));
    expect(allow).not.toContain('DELETE');
    expect(await json(wrong)).toMatchObject({ code: 'method_not_allowed', allowed: ['GET', 'POST'] });

    const post = await json(await fetchWithin(`${base}/thing/1`, { method: 'POST' }));
    expect(post).toMatchObject({ tag: 'post', method: 'POST' });
  });

  it('answers HEAD from the GET route (no body) and OPTIONS with Allow when CORS is off', async () => {
    const { engine, base } = await startHttpEngine();
    const seen: string[] = [];
    await startWorker(kind, engine, (w) => {
      serveRoute(w, 'doc::get', { method: 'GET', path: '/doc' }, (req: { method: string }) => {
        seen.push(req.method);
        return { status_code: 200, headers: { 'x-doc': 'yes' }, body: { hello: 'world' } };
      });
    });
    const head = await fetchWithin(`${base}/doc`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-doc')).toBe('yes');
    expect(await head.text()).toBe('');
    expect(seen).toEqual(['HEAD']);

    const options = await fetchWithin(`${base}/doc`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toMatch(/GET/);
    expect(options.headers.get('access-control-allow-origin')).toBeNull();
    expect(seen).toEqual(['HEAD']);
  });

  it('removes a route at once when its trigger is unregistered', async () => {
    const { engine, base } = await startHttpEngine();
    let trigger: { unregister(): void } | undefined;
    await startWorker(kind, engine, (w) => {
      trigger = serveRoute(w, 'gone::soon', { method: 'GET', path: '/soon' }, echo('soon'));
    });
    expect((await fetchWithin(`${base}/soon`)).status).toBe(200);
    trigger?.unregister();
    await waitStatus(base, 'GET', '/soon', 404, 1000);
    await waitFor(() => engine.stats().triggers === 0, 1000, 'the trigger to be removed');
  });

  it('removes its routes when the worker disconnects', async () => {
    const { engine, base } = await startHttpEngine();
    const w = await startWorker(kind, engine, (w) => {
      serveRoute(w, 'bye::a', { method: 'GET', path: '/bye/a' }, echo('a'));
      serveRoute(w, 'bye::b', { method: 'POST', path: '/bye/:x' }, echo('b'));
    });
    expect((await fetchWithin(`${base}/bye/a`)).status).toBe(200);
    expect((await fetchWithin(`${base}/bye/z`, { method: 'POST' })).status).toBe(200);
    await w.shutdown();
    await waitStatus(base, 'GET', '/bye/a', 404, 1000);
    await waitStatus(base, 'POST', '/bye/z', 404, 1000);
  });

  it('serves concurrent requests to many routes, each to its own function', async () => {
    const { engine, base } = await startHttpEngine();
    const ROUTES = 50;
    const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];
    await startWorker(kind, engine, (w) => {
      for (let i = 0; i < ROUTES; i++) {
        serveRoute(w, `many::r${i}`, { method: METHODS[i % METHODS.length] as string, path: `/many/r${i}/:n` }, async (req: { path_params: { n: string } }) => {
          await new Promise((resolve) => setTimeout(resolve, 1 + (i % 5)));
          return { body: { route: i, n: req.path_params.n } };
        });
      }
    });
    const requests = Array.from({ length: ROUTES * 6 }, (_, k) => ({ i: k % ROUTES, n: String(k) }));
    const results = await within(
      Promise.all(
        requests.map(async ({ i, n }) => {
          const res = await fetch(`${base}/many/r${i}/${n}`, { method: METHODS[i % METHODS.length] as string });
          return { status: res.status, body: await json(res), i, n };
        }),
      ),
      15_000,
      'concurrent requests',
    );
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ route: r.i, n: r.n });
    }
    await waitFor(() => engine.stats().pendingInvocations === 0 && engine.stats().channels === 0, 2000, 'no pending calls or channels');
  });
});

describe('route registration', () => {
  it('refuses a second function on the same method and path, naming the owner; the owner keeps the route', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'owner::fn', { method: 'GET', path: '/orders/:id' }, echo('owner'));
    });
    const raw = await RawClient.connect(engine.bridgeUrl);
    await raw.serve('intruder::fn', () => ({ body: { tag: 'intruder' } }));

    for (const [i, path] of ['/orders/:id', 'orders/:id', '/orders/:id/', '/orders/:orderId'].entries()) {
      const result = await rawRegisterRoute(raw, `dup-${i}`, 'intruder::fn', { api_path: path, http_method: 'GET' });
      expect(result.error, `api_path ${path}`).toBeDefined();
      expect(result.error.code).toBe('trigger_registration_failed');
      expect(result.error.message).toContain('owner::fn');
    }
    // The same function twice on one route is refused too (one trigger per route).
    const again = await rawRegisterRoute(raw, 'dup-same', 'owner::fn', { api_path: '/orders/:id', http_method: 'get' });
    expect(again.error?.message).toContain('owner::fn');

    expect(await json(await fetchWithin(`${base}/orders/7`))).toMatchObject({ tag: 'owner', path_params: { id: '7' } });
    // Another method on the same path is a different route.
    const post = await rawRegisterRoute(raw, 'post-ok', 'intruder::fn', { api_path: '/orders/:id', http_method: 'POST' });
    expect(post.error).toBeUndefined();
    expect(await json(await fetchWithin(`${base}/orders/7`, { method: 'POST' }))).toEqual({ tag: 'intruder' });
    expect((await listHttpTriggers(engine)).length).toBe(2);
  });

  it('lets another function take a route once its owner unregistered it', async () => {
    const { engine, base } = await startHttpEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    await raw.serve('first::fn', () => ({ body: 'first' }));
    await raw.serve('second::fn', () => ({ body: 'second' }));
    expect((await rawRegisterRoute(raw, 't1', 'first::fn', { api_path: '/take', http_method: 'PUT' })).error).toBeUndefined();
    expect((await rawRegisterRoute(raw, 't2', 'second::fn', { api_path: '/take', http_method: 'PUT' })).error).toBeDefined();
    raw.send({ type: 'unregistertrigger', id: 't1', trigger_type: 'http' });
    await raw.roundTrip();
    expect((await rawRegisterRoute(raw, 't3', 'second::fn', { api_path: '/take', http_method: 'PUT' })).error).toBeUndefined();
    expect(await json(await fetchWithin(`${base}/take`, { method: 'PUT' }))).toBe('second');
  });

  it('refuses invalid trigger config: no api_path, a bad method, bad segments', async () => {
    const { engine, base } = await startHttpEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    await raw.serve('bad::fn', () => ({ body: 'x' }));
    const cases: [string, unknown, RegExp][] = [
      ['no-path', { http_method: 'GET' }, /api_path/],
      ['empty-path', { api_path: '', http_method: 'GET' }, /api_path/],
      ['no-method', { api_path: '/a' }, /http_method/],
      ['bad-method', { api_path: '/a', http_method: 'FETCH' }, /http_method/],
      ['head-method', { api_path: '/a', http_method: 'HEAD' }, /http_method/],
      ['empty-param', { api_path: '/a/:', http_method: 'GET' }, /:/],
      ['bad-param', { api_path: '/a/:1x', http_method: 'GET' }, /:1x/],
      ['partial-param', { api_path: '/a/x:y', http_method: 'GET' }, /x:y/],
      ['space', { api_path: '/a/b c', http_method: 'GET' }, /b c/],
      ['wildcard', { api_path: '/a/*', http_method: 'GET' }, /\*/],
      ['repeated-param', { api_path: '/a/:id/b/:id', http_method: 'GET' }, /:id/],
      ['middleware-not-list', { api_path: '/a', http_method: 'GET', middleware_function_ids: 'mw::a' }, /middleware_function_ids/],
      ['condition-not-string', { api_path: '/a', http_method: 'GET', condition_function_id: 5 }, /condition_function_id/],
      ['config-not-object', 'GET /a', /object|api_path/],
    ];
    for (const [id, config, message] of cases) {
      const result = await rawRegisterRoute(raw, id, 'bad::fn', config);
      expect(result.error, id).toBeDefined();
      expect(result.error.code, id).toBe('trigger_registration_failed');
      expect(result.error.message, id).toMatch(message);
    }
    expect(await listHttpTriggers(engine)).toEqual([]);
    expect((await fetchWithin(`${base}/a`)).status).toBe(404);
  });

  it('reports a refused route to @flint/sdk as a TriggerRegistrationError on ready', async () => {
    const { engine } = await startHttpEngine();
    const w = await startWorker('flint', engine, (w) => {
      serveRoute(w, 'ok::fn', { method: 'GET', path: '/mine' }, echo('ok'));
    });
    w.registerFunction('other::fn', () => ({}));
    const ref = w.registerTrigger({ type: 'http', function_id: 'other::fn', config: { api_path: 'mine/', http_method: 'GET' } }) as unknown as {
      ready: Promise<unknown>;
    };
    const result = await outcome(within(ref.ready, 2000, 'ready'));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('trigger_registration_failed');
      expect(result.error.message).toContain('ok::fn');
    }
    await expect(ref.ready).rejects.toBeInstanceOf(TriggerRegistrationError);
    const bad = w.registerTrigger({ type: 'http', function_id: 'other::fn', config: { api_path: '/x' } }) as unknown as { ready: Promise<unknown> };
    await expect(within(bad.ready, 2000, 'ready')).rejects.toMatchObject({
      code: 'trigger_registration_failed',
      message: expect.stringMatching(/http_method/),
    });
  });

  it('serves the root path /', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'root::fn', { method: 'GET', path: '/' }, echo('root'));
    });
    expect(await json(await fetchWithin(`${base}/`))).toMatchObject({ tag: 'root', path: '/', route: '/' });
    expect(await json(await fetchWithin(`${base}/?a=b`))).toMatchObject({ tag: 'root', query_params: { a: 'b' } });
  });

  it('either refuses a percent-encoded static segment or serves it (never accepts an unreachable route)', async () => {
    const { engine, base } = await startHttpEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    await raw.serve('enc::fn', () => ({ body: 'reached' }));
    const cases: [string, string][] = [
      ['/files/caf%C3%A9', '/files/caf%C3%A9'],
      ['/files/a%20b', '/files/a%20b'],
      ['/files/bad%zz', '/files/bad%zz'],
    ];
    const problems: string[] = [];
    for (const [i, [apiPath, url]] of cases.entries()) {
      const result = await rawRegisterRoute(raw, `enc-${i}`, 'enc::fn', { api_path: apiPath, http_method: 'GET' });
      if (result.error) continue; // refused: fine
      const res = await fetchWithin(base + url);
      if (res.status !== 200) problems.push(`${apiPath} was accepted but ${url} answers ${res.status}`);
      await res.arrayBuffer();
    }
    expect(problems).toEqual([]);
  });

  it('routes to a function provided inside the engine by a module, which gets the ApiRequest as an object', async () => {
    const inputs: unknown[] = [];
    const probe: ModuleDefinition = {
      name: 'test-probe',
      configSchema: z.object({}),
      create: () => ({
        name: 'test-probe',
        start(ctx) {
          ctx.registerFunction({ id: 'probe::echo' }, (data) => {
            inputs.push(data);
            const req = data as Record<string, unknown>;
            return { status_code: 201, body: { path_params: req.path_params, query_params: req.query_params, route: req.route, trigger: req.trigger } };
          });
        },
      }),
    };
    const { engine, base } = await startHttpEngine({}, { modules: [{ name: 'test-probe' }] }, { modules: [probe] });
    const raw = await RawClient.connect(engine.bridgeUrl);
    expect((await rawRegisterRoute(raw, 'probe-route', 'probe::echo', { api_path: '/probe/:id', http_method: 'GET' })).error).toBeUndefined();
    const res = await fetchWithin(`${base}/probe/7?x=1`);
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({
      path_params: { id: '7' },
      query_params: { x: '1' },
      route: '/probe/:id',
      trigger: { type: 'http', path: '/probe/:id', method: 'GET' },
    });
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({ method: 'GET', path: '/probe/7', body: null, headers: expect.objectContaining({ host: expect.any(String) }) });
  });

  it('accepts a lower-case http_method', async () => {
    const { engine, base } = await startHttpEngine();
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'lower::fn', { method: 'patch', path: '/lower' }, echo('lower'));
    });
    expect(await json(await fetchWithin(`${base}/lower`, { method: 'PATCH' }))).toMatchObject({ tag: 'lower', method: 'PATCH' });
  });

  it('answers 503 function_unavailable (not a hang) when the route function has no live provider', async () => {
    const { engine, base } = await startHttpEngine({ default_timeout_ms: 5000 });
    const owner = await RawClient.connect(engine.bridgeUrl);
    // A route for a function nobody provides yet.
    expect((await rawRegisterRoute(owner, 'orphan', 'nobody::fn', { api_path: '/orphan', http_method: 'GET' })).error).toBeUndefined();
    const started = Date.now();
    const res = await fetchWithin(`${base}/orphan`, {}, 2000);
    expect(res.status).toBe(503);
    expect(await json(res)).toMatchObject({ code: 'function_unavailable', error: expect.stringContaining('nobody::fn') });
    expect(Date.now() - started).toBeLessThan(1000);

    // A provider appears: the route works; it leaves: 503 again (the route belongs to another worker).
    const provider = await startWorker('flint', engine, (w) => {
      w.registerFunction('nobody::fn', () => ({ body: 'here' }));
    });
    expect(await json(await fetchWithin(`${base}/orphan`))).toBe('here');
    await provider.shutdown();
    await waitStatus(base, 'GET', '/orphan', 503, 1000);
  });

  it('answers 503 when the provider disconnects during the call', async () => {
    const { engine, base } = await startHttpEngine({ default_timeout_ms: 5000 });
    const provider = await RawClient.connect(engine.bridgeUrl);
    let called!: () => void;
    const calledP = new Promise<void>((resolve) => {
      called = resolve;
    });
    await provider.serve('hang::fn', () => {
      called();
      return new Promise(() => {});
    });
    expect((await rawRegisterRoute(provider, 'hang', 'hang::fn', { api_path: '/hang', http_method: 'GET' })).error).toBeUndefined();
    const pending = fetchWithin(`${base}/hang`, {}, 3000);
    await within(calledP, 2000, 'the handler call');
    provider.ws.terminate();
    const res = await pending;
    expect(res.status).toBe(503);
    expect(await json(res)).toMatchObject({ code: 'function_unavailable' });
    await waitFor(() => engine.stats().pendingInvocations === 0 && engine.stats().channels === 0, 2000, 'no pending calls or channels');
  });
});

describe('1,000 routes', () => {
  it('registers 1,000 routes and routes every one of them to its function', async () => {
    const { engine, base } = await startHttpEngine();
    const N = 1000;
    const started = Date.now();
    await startWorker('flint', engine, (w) => {
      for (let i = 0; i < N; i++) {
        const path = i % 3 === 0 ? `/bulk/${i}` : i % 3 === 1 ? `/bulk/${i}/:a` : `bulk/${i}/:a/sub/:b`;
        serveRoute(w, `bulk::f${i}`, { method: 'GET', path }, (req: { path_params: Record<string, string>; route: string }) => ({
          body: { i, params: req.path_params, route: req.route },
        }));
      }
    });
    await waitFor(async () => (await listHttpTriggers(engine)).length === N, 5000, `${N} http triggers`);
    const registered = Date.now() - started;
    const ids = Array.from({ length: N }, (_, i) => i);
    const results = await pool(ids, 32, async (i) => {
      const url = i % 3 === 0 ? `${base}/bulk/${i}` : i % 3 === 1 ? `${base}/bulk/${i}/x${i}` : `${base}/bulk/${i}/x/sub/y`;
      const res = await fetch(url);
      return { i, status: res.status, body: await json(res) };
    });
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.body.i).toBe(r.i);
      if (r.i % 3 === 1) expect(r.body.params).toEqual({ a: `x${r.i}` });
      if (r.i % 3 === 2) expect(r.body.params).toEqual({ a: 'x', b: 'y' });
    }
    expect((await fetchWithin(`${base}/bulk/${N}`)).status).toBe(404);
    expect(registered).toBeLessThan(5000);
  });

  it('removes 1,000 routes of a disconnecting worker quickly, without stalling other requests', async () => {
    const { engine, base } = await startHttpEngine();
    const N = 1000;
    await startWorker('flint', engine, (w) => {
      serveRoute(w, 'stay::fn', { method: 'GET', path: '/stay' }, () => ({ body: 'stay' }));
    });
    const bulk = await startWorker('flint', engine, (w) => {
      for (let i = 0; i < N; i++) serveRoute(w, `gone::f${i}`, { method: 'GET', path: `/gone/${i}/:x` }, () => ({ body: i }));
    });
    await waitFor(async () => (await listHttpTriggers(engine)).length === N + 1, 5000, `${N + 1} http triggers`);
    expect(await json(await fetchWithin(`${base}/gone/999/a`))).toBe(999);

    // Measure how long the engine's event loop (in this process) stalls while the routes go.
    let last = Date.now();
    let worstGap = 0;
    const ticker = setInterval(() => {
      const now = Date.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 5);
    const started = Date.now();
    try {
      await bulk.shutdown();
      await waitFor(async () => (await listHttpTriggers(engine)).length === 1, 10_000, 'the bulk routes to be removed');
      const removedAfter = Date.now() - started;
      expect(await json(await fetchWithin(`${base}/stay`))).toBe('stay');
      expect((await fetchWithin(`${base}/gone/5/a`)).status).toBe(404);
      expect(removedAfter, 'time to remove 1,000 routes').toBeLessThan(1000);
      expect(worstGap, 'longest event-loop stall while removing 1,000 routes (ms)').toBeLessThan(250);
    } finally {
      clearInterval(ticker);
    }
  });
});

async function listHttpTriggers(engine: Engine): Promise<unknown[]> {
  return (await listTriggers(engine)).filter((t) => t.trigger_type === 'http');
}
