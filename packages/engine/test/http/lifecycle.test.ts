/**
 * The `flint-http` request lifecycle: match → global middleware (ascending priority) → condition →
 * per-route middleware (listed order) → body parse → handler, with every middleware and condition
 * outcome (continue, respond, unrecognised, no result, throw, time-out; true/false/throw/time-out).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, startWorker } from '../support/harness.js';
import { fetchWithin, json, serveRoute, startHttpEngine } from '../support/http/helpers.js';
import { LEVEL } from '../support/log-capture.js';
import { sleep, waitFor } from '../support/util.js';

afterEach(cleanup);

describe.each(SDK_KINDS)('lifecycle with %s', (kind: SdkKind) => {
  it('runs global middleware by ascending priority (ties in config order), then the condition, then route middleware in listed order, then the handler', async () => {
    const { engine, base } = await startHttpEngine({
      // Deliberately listed out of priority order.
      middleware: [
        { function_id: 'mw::c', phase: 'preHandler', priority: 30 },
        { function_id: 'mw::b1', phase: 'preHandler', priority: 10 },
        { function_id: 'mw::a', phase: 'preHandler', priority: -5 },
        { function_id: 'mw::b2', priority: 10 },
      ],
    });
    const calls: string[] = [];
    await startWorker(kind, engine, (w) => {
      for (const id of ['mw::a', 'mw::b1', 'mw::b2', 'mw::c', 'mw::r1', 'mw::r2', 'mw::r3']) {
        w.registerFunction(id, async () => {
          calls.push(id);
          await sleep(1);
          return { action: 'continue' };
        });
      }
      w.registerFunction('cond::yes', () => {
        calls.push('cond::yes');
        return true;
      });
      serveRoute(
        w,
        'order::handler',
        { method: 'POST', path: '/order/:id', condition_function_id: 'cond::yes', middleware_function_ids: ['mw::r2', 'mw::r3', 'mw::r1'] },
        (req: { body: unknown }) => {
          calls.push('handler');
          return { status_code: 201, body: { got: req.body } };
        },
      );
    });
    const res = await fetchWithin(`${base}/order/1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ got: { n: 1 } });
    expect(calls).toEqual(['mw::a', 'mw::b1', 'mw::b2', 'mw::c', 'cond::yes', 'mw::r2', 'mw::r3', 'mw::r1', 'handler']);

    // The same order on every request (the chain is compiled once, not re-sorted per request).
    calls.length = 0;
    expect((await fetchWithin(`${base}/order/2`, { method: 'POST' })).status).toBe(201);
    expect(calls).toEqual(['mw::a', 'mw::b1', 'mw::b2', 'mw::c', 'cond::yes', 'mw::r2', 'mw::r3', 'mw::r1', 'handler']);
  });

  it('gives middleware {phase, request:{path_params, query_params, headers, method}, context:{}} and never the body', async () => {
    const { engine, base } = await startHttpEngine({ middleware: [{ function_id: 'mw::global', priority: 1 }] });
    const inputs: unknown[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('mw::global', (input: unknown) => {
        inputs.push(input);
        return { action: 'continue' };
      });
      w.registerFunction('mw::route', (input: unknown) => {
        inputs.push(input);
        return { action: 'continue' };
      });
      serveRoute(w, 'shape::handler', { method: 'PUT', path: '/shape/:id', middleware_function_ids: ['mw::route'] }, () => ({ body: 'ok' }));
    });
    const res = await fetchWithin(`${base}/shape/abc?q=find&n=2`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'X-Client': 'c1' },
      body: JSON.stringify({ secret: 'body-must-not-leak' }),
    });
    expect(res.status).toBe(200);
    expect(inputs).toHaveLength(2);
    for (const input of inputs) {
      expect(input).toEqual({
        phase: 'preHandler',
        request: {
          path_params: { id: 'abc' },
          query_params: { q: 'find', n: '2' },
          headers: expect.objectContaining({ 'x-client': 'c1', 'content-type': 'application/json' }),
          method: 'PUT',
        },
        context: {},
      });
      expect(JSON.stringify(input)).not.toContain('body-must-not-leak');
    }
  });

  it('answers with a global middleware `respond` (status, headers, body) and skips the rest', async () => {
    const { engine, base } = await startHttpEngine({
      middleware: [
        { function_id: 'mw::auth', priority: 1 },
        { function_id: 'mw::later', priority: 2 },
      ],
    });
    const calls: string[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('mw::auth', (input: { request: { headers: Record<string, string> } }) => {
        calls.push('auth');
        const token = input.request.headers.authorization;
        if (!token) return { action: 'respond', response: { status_code: 401, body: { error: 'missing token' }, headers: { 'www-authenticate': 'Bearer' } } };
        if (token !== 'Bearer good') return { action: 'respond', response: { status_code: 403, body: { error: 'forbidden' } } };
        return { action: 'continue' };
      });
      w.registerFunction('mw::later', () => {
        calls.push('later');
        return { action: 'continue' };
      });
      w.registerFunction('cond::c', () => {
        calls.push('cond');
        return true;
      });
      w.registerFunction('mw::route', () => {
        calls.push('route-mw');
        return { action: 'continue' };
      });
      serveRoute(w, 'auth::handler', { method: 'GET', path: '/secret', condition_function_id: 'cond::c', middleware_function_ids: ['mw::route'] }, () => {
        calls.push('handler');
        return { body: { secret: 42 } };
      });
    });
    const missing = await fetchWithin(`${base}/secret`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(missing.headers.get('content-type')).toMatch(/application\/json/);
    expect(await json(missing)).toEqual({ error: 'missing token' });
    expect(calls).toEqual(['auth']);

    calls.length = 0;
    const forbidden = await fetchWithin(`${base}/secret`, { headers: { authorization: 'Bearer bad' } });
    expect(forbidden.status).toBe(403);
    expect(await json(forbidden)).toEqual({ error: 'forbidden' });
    expect(calls).toEqual(['auth']);

    calls.length = 0;
    const ok = await fetchWithin(`${base}/secret`, { headers: { authorization: 'Bearer good' } });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({ secret: 42 });
    expect(calls).toEqual(['auth', 'later', 'cond', 'route-mw', 'handler']);
  });

  it('answers with a route middleware `respond` and skips the later route middleware and the handler', async () => {
    const { engine, base } = await startHttpEngine();
    const calls: string[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('mw::first', () => {
        calls.push('first');
        return { action: 'continue' };
      });
      w.registerFunction('mw::stop', () => {
        calls.push('stop');
        return { action: 'respond', response: { status_code: 429, headers: { 'content-type': 'text/plain', 'retry-after': '3' }, body: 'slow down' } };
      });
      w.registerFunction('mw::never', () => {
        calls.push('never');
        return { action: 'continue' };
      });
      serveRoute(w, 'rate::handler', { method: 'GET', path: '/rate', middleware_function_ids: ['mw::first', 'mw::stop', 'mw::never'] }, () => {
        calls.push('handler');
        return { body: 'nope' };
      });
    });
    const res = await fetchWithin(`${base}/rate`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(await res.text()).toBe('slow down');
    expect(calls).toEqual(['first', 'stop']);
  });

  it('answers 500 middleware_error when a `respond` carries an invalid status_code', async () => {
    const { engine, base, logs } = await startHttpEngine();
    await startWorker(kind, engine, (w) => {
      w.registerFunction('mw::badstatus', () => ({ action: 'respond', response: { status_code: 'teapot', body: 'x' } }));
      serveRoute(w, 'badmw::handler', { method: 'GET', path: '/badmw', middleware_function_ids: ['mw::badstatus'] }, () => ({ body: 'nope' }));
    });
    const res = await fetchWithin(`${base}/badmw`);
    expect(res.status).toBe(500);
    const body = await json(res);
    expect(body).toMatchObject({ code: 'middleware_error', error_id: expect.any(String) });
    await waitFor(() => logs.find((l) => l.error_id === body.error_id), 1000, 'the error_id in the log');
  });

  it('logs a warning and continues when middleware answers an unrecognised action or no result', async () => {
    const { engine, base, logs } = await startHttpEngine({
      middleware: [
        { function_id: 'mw::weird', priority: 1 },
        { function_id: 'mw::nothing', priority: 2 },
        { function_id: 'mw::nullish', priority: 3 },
      ],
    });
    const calls: string[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('mw::weird', () => {
        calls.push('weird');
        return { action: 'skip-everything' };
      });
      w.registerFunction('mw::nothing', () => {
        calls.push('nothing');
        return undefined;
      });
      w.registerFunction('mw::nullish', () => {
        calls.push('nullish');
        return null;
      });
      serveRoute(w, 'warn::handler', { method: 'GET', path: '/warn' }, () => {
        calls.push('handler');
        return { body: 'handled' };
      });
    });
    const res = await fetchWithin(`${base}/warn`);
    expect(res.status).toBe(200);
    expect(await json(res)).toBe('handled');
    expect(calls).toEqual(['weird', 'nothing', 'nullish', 'handler']);
    const warnings = logs.filter((l) => l.level === LEVEL.warn);
    const weird = warnings.find((l) => l.function_id === 'mw::weird');
    expect(weird?.msg).toMatch(/unrecognised action/);
    expect(weird?.msg).toContain('skip-everything');
    expect(warnings.find((l) => l.function_id === 'mw::nothing')?.msg).toMatch(/no result/);
    expect(warnings.find((l) => l.function_id === 'mw::nullish')?.msg).toMatch(/no result/);
  });

  it('answers 500 middleware_error with an error_id that is in the engine log when middleware throws', async () => {
    const { engine, base, logs } = await startHttpEngine({ middleware: [{ function_id: 'mw::boom', priority: 1 }] });
    const calls: string[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('mw::boom', () => {
        calls.push('boom');
        throw new Error('middleware exploded');
      });
      serveRoute(w, 'boom::handler', { method: 'GET', path: '/boom' }, () => {
        calls.push('handler');
        return { body: 'nope' };
      });
    });
    const res = await fetchWithin(`${base}/boom`);
    expect(res.status).toBe(500);
    const body = await json(res);
    expect(body).toMatchObject({ code: 'middleware_error', error: expect.any(String), error_id: expect.stringMatching(/^[0-9a-f]{6,}$/) });
    expect(calls).toEqual(['boom']);
    const logged = await waitFor(() => logs.find((l) => l.error_id === body.error_id), 1000, 'the error_id in the log');
    expect(logged.level).toBe(LEVEL.error);
    expect(logged.function_id).toBe('mw::boom');
    expect(logged.msg).toContain('middleware exploded');
  });

  it('answers 504 middleware_timeout when middleware does not answer in time (handler not called)', async () => {
    const { engine, base } = await startHttpEngine({ middleware_timeout_ms: 300, default_timeout_ms: 5000 });
    const calls: string[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('mw::slow', async () => {
        calls.push('slow');
        await sleep(1500);
        return { action: 'continue' };
      });
      serveRoute(w, 'slowmw::handler', { method: 'GET', path: '/slow-mw', middleware_function_ids: ['mw::slow'] }, () => {
        calls.push('handler');
        return { body: 'nope' };
      });
    });
    const started = Date.now();
    const res = await fetchWithin(`${base}/slow-mw`, {}, 3000);
    const elapsed = Date.now() - started;
    expect(res.status).toBe(504);
    expect(await json(res)).toMatchObject({ code: 'middleware_timeout', error: expect.stringContaining('mw::slow') });
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(1400);
    expect(calls).toEqual(['slow']);
  });

  it('answers 422 condition_failed (skipped: true) when the condition is false; the handler and route middleware are not called', async () => {
    const { engine, base } = await startHttpEngine({ middleware: [{ function_id: 'mw::g', priority: 1 }] });
    const calls: string[] = [];
    const conditionInputs: Record<string, unknown>[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('mw::g', () => {
        calls.push('global');
        return { action: 'continue' };
      });
      w.registerFunction('mw::r', () => {
        calls.push('route-mw');
        return { action: 'continue' };
      });
      w.registerFunction('cond::allowed', (input: Record<string, unknown>) => {
        calls.push('cond');
        conditionInputs.push(input);
        return (input.body as { allowed?: boolean } | null)?.allowed === true;
      });
      serveRoute(w, 'cond::handler', { method: 'POST', path: '/cond/:id', condition_function_id: 'cond::allowed', middleware_function_ids: ['mw::r'] }, () => {
        calls.push('handler');
        return { body: 'ran' };
      });
    });
    const post = (body: unknown) =>
      fetchWithin(`${base}/cond/9?x=y`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const denied = await post({ allowed: false });
    expect(denied.status).toBe(422);
    expect(await json(denied)).toMatchObject({ code: 'condition_failed', skipped: true, error: expect.any(String) });
    expect(calls).toEqual(['global', 'cond']);
    // The condition receives the handler's input (body included).
    expect(conditionInputs[0]).toMatchObject({ path_params: { id: '9' }, query_params: { x: 'y' }, method: 'POST', body: { allowed: false } });

    calls.length = 0;
    const allowed = await post({ allowed: true });
    expect(allowed.status).toBe(200);
    expect(await json(allowed)).toBe('ran');
    expect(calls).toEqual(['global', 'cond', 'route-mw', 'handler']);
  });

  it('answers 500 condition_error (error_id in the log) when the condition throws, and 504 condition_timeout when it is too slow', async () => {
    const { engine, base, logs } = await startHttpEngine({ middleware_timeout_ms: 300, default_timeout_ms: 5000 });
    const calls: string[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('cond::throws', () => {
        throw new Error('condition exploded');
      });
      w.registerFunction('cond::slow', async () => {
        await sleep(1500);
        return true;
      });
      serveRoute(w, 'c1::handler', { method: 'GET', path: '/cond-throws', condition_function_id: 'cond::throws' }, () => {
        calls.push('c1');
        return { body: 'nope' };
      });
      serveRoute(w, 'c2::handler', { method: 'GET', path: '/cond-slow', condition_function_id: 'cond::slow' }, () => {
        calls.push('c2');
        return { body: 'nope' };
      });
    });
    const thrown = await fetchWithin(`${base}/cond-throws`);
    expect(thrown.status).toBe(500);
    const body = await json(thrown);
    expect(body).toMatchObject({ code: 'condition_error', error_id: expect.any(String) });
    const logged = await waitFor(() => logs.find((l) => l.error_id === body.error_id), 1000, 'the error_id in the log');
    expect(logged.msg).toContain('condition exploded');

    const started = Date.now();
    const slow = await fetchWithin(`${base}/cond-slow`, {}, 3000);
    const elapsed = Date.now() - started;
    expect(slow.status).toBe(504);
    expect(await json(slow)).toMatchObject({ code: 'condition_timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(1400);
    expect(calls).toEqual([]);
  });

  it('parses the body after middleware: a middleware answer wins over invalid JSON; otherwise 400 invalid_json and no handler call', async () => {
    const { engine, base } = await startHttpEngine({ middleware: [{ function_id: 'mw::gate', priority: 1 }] });
    const calls: string[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('mw::gate', (input: { request: { headers: Record<string, string> } }) =>
        input.request.headers['x-block'] ? { action: 'respond', response: { status_code: 418, body: { blocked: true } } } : { action: 'continue' },
      );
      serveRoute(w, 'json::handler', { method: 'POST', path: '/json' }, () => {
        calls.push('handler');
        return { body: 'nope' };
      });
    });
    const blocked = await fetchWithin(`${base}/json`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-block': '1' }, body: '{not json' });
    expect(blocked.status).toBe(418);
    expect(await json(blocked)).toEqual({ blocked: true });

    const invalid = await fetchWithin(`${base}/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    expect(invalid.status).toBe(400);
    expect(await json(invalid)).toMatchObject({ code: 'invalid_json', error: expect.any(String) });
    expect(calls).toEqual([]);
  });
});
