/**
 * flint-observability traces through real workers: an HTTP request → worker A (@flint/sdk) → worker B
 * (@flint/sdk) and → an iii-sdk 0.11.6 worker with its OpenTelemetry on yields one trace whose tree has
 * the engine's spans and each worker's own span (sent as OTLP telemetry frames) in the right places; a
 * request carrying a `traceparent` header joins the caller's trace; sampling and `enabled: false`.
 */
import { request } from 'node:http';
import type { Engine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { waitRouted } from '../support/http/helpers.js';
import { outcome, waitFor } from '../support/util.js';

afterEach(cleanup);

// iii-sdk's span processor reads its batch delay (default 5 s) from the environment.
process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

interface TreeSpan {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  status: string;
  service_name: string;
  attributes: [string, string][];
  children: TreeSpan[];
}

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

async function startObs(config: Record<string, unknown> = {}): Promise<{ engine: Engine; base: string }> {
  const engine = await startTestEngine({
    modules: [
      { name: 'flint-http', config: { port: 0 } },
      { name: 'flint-observability', config: { enabled: true, ...config } },
    ],
  });
  const base = engine.listeners().find((l) => l.name === 'http')?.url as string;
  return { engine, base };
}

function get(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
}

const attr = (span: TreeSpan, key: string) => span.attributes.find(([k]) => k === key)?.[1];
const flatten = (nodes: TreeSpan[]): TreeSpan[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);
const tree = async (engine: Engine, traceId: string) => ((await engine.invoke('engine::traces::tree', { trace_id: traceId })) as { roots: TreeSpan[] }).roots;

describe('flint-observability traces', () => {
  it('one trace from an HTTP request through two @flint/sdk workers and an iii-sdk worker, joined to the caller by traceparent', async () => {
    const { engine, base } = await startObs();
    const workerB = (await startWorker('flint', engine, (w) => w.registerFunction('b::double', (d: { n: number }) => d.n * 2), { spans: true })).name;
    await startWorker('iii', engine, (w) => w.registerFunction('c::greet', (d: { name: string }) => `hi ${d.name}`), { otel: true });
    const { name: workerA } = await startWorker(
      'flint',
      engine,
      (w) => {
        w.registerFunction('a::chain', async () => {
          const doubled = await w.trigger({ function_id: 'b::double', payload: { n: 21 } });
          const greeting = await w.trigger({ function_id: 'c::greet', payload: { name: 'Ada' } });
          return { status_code: 200, body: { doubled, greeting } };
        });
        w.registerTrigger({ type: 'http', function_id: 'a::chain', config: { api_path: '/chain', http_method: 'GET' } });
      },
      { spans: true },
    );
    await waitRouted(base, 'GET', '/chain');
    await engine.invoke('engine::traces::clear', {});

    // node:http, not fetch: iii-sdk (in this process) instruments fetch and would put its own traceparent in.
    const res = await get(`${base}/chain`, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    expect(JSON.parse(res)).toEqual({ doubled: 42, greeting: 'hi Ada' });

    // The iii-sdk worker's span arrives on its /otel socket a moment later.
    const roots = await waitFor(
      async () => {
        const r = await tree(engine, CALLER_TRACE);
        return flatten(r).filter((s) => s.service_name !== 'flint').length === 3 ? r : undefined;
      },
      10_000,
      "the three workers' spans",
    );
    // The HTTP span is the root here: its parent is the caller's span, which the engine does not hold.
    expect(roots.map((r) => r.name)).toEqual(['GET /chain']);
    const http = roots[0] as TreeSpan;
    expect(http.parent_span_id).toBe(CALLER_SPAN);
    expect(http.status).toBe('ok');
    expect(attr(http, 'http.request.method')).toBe('GET');
    expect(attr(http, 'http.route')).toBe('/chain');
    expect(attr(http, 'http.response.status_code')).toBe('200');
    expect(attr(http, 'faas.trigger')).toBe('http');

    expect(http.children.map((s) => s.name)).toEqual(['call a::chain']);
    const chain = http.children[0] as TreeSpan;
    expect(attr(chain, 'faas.invoked_name')).toBe('a::chain');
    expect(attr(chain, 'flint.trigger.type')).toBe('http');
    expect(attr(chain, 'flint.worker.name')).toBeTypeOf('string');
    // Worker A's own span (@flint/sdk), and under it the engine's spans of the calls its handler made.
    expect(chain.children.map((s) => s.name)).toEqual(['handle a::chain']);
    const handleA = chain.children[0] as TreeSpan;
    expect(handleA.service_name).toBe(workerA);
    expect(handleA.children.map((s) => s.name)).toEqual(['call b::double', 'call c::greet']);
    const [double, greet] = handleA.children as [TreeSpan, TreeSpan];
    expect(double.children.map((s) => [s.name, s.service_name])).toEqual([['handle b::double', workerB]]);
    // iii-sdk's span for the call, sent on its /otel socket.
    expect(greet.children.length).toBe(1);
    const sdkSpan = greet.children[0] as TreeSpan;
    expect(sdkSpan.service_name).not.toBe('flint');
    expect(sdkSpan.trace_id).toBe(CALLER_TRACE);
    expect(flatten(roots).every((s) => s.trace_id === CALLER_TRACE)).toBe(true);

    // The list shows the HTTP span as the trace's row, found by its attributes.
    const listed = (await engine.invoke('engine::traces::list', { attributes: [['http.route', '/chain']] })) as { spans: TreeSpan[]; total: number };
    expect(listed.total).toBe(1);
    expect(listed.spans[0]?.span_id).toBe(http.span_id);
  });

  it('a call without trace context starts a trace; a failing call is an error span with the code', async () => {
    const { engine } = await startObs();
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('t::fail', () => {
        throw Object.assign(new Error('nope'), { code: 'app_refused' });
      });
    });
    await worker.trigger({ function_id: 'engine::traces::clear', payload: {} });
    expect((await outcome(worker.trigger({ function_id: 't::fail', payload: {} }))).ok).toBe(false);
    const listed = await waitFor(async () => {
      const l = (await engine.invoke('engine::traces::list', { name: 't::fail' })) as { spans: TreeSpan[] };
      return l.spans.length > 0 ? l : undefined;
    });
    const span = listed.spans[0] as TreeSpan;
    expect(span.name).toBe('call t::fail');
    expect(span.parent_span_id).toBeNull();
    expect(span.status).toBe('error');
    expect(attr(span, 'error.type')).toBeTypeOf('string');
  });

  it('a @flint/sdk worker records a span of its own for a traced call only with spans: true', async () => {
    const { engine } = await startObs();
    await startWorker('flint', engine, (w) => w.registerFunction('p::plain', () => 1));
    await startWorker('flint', engine, (w) => w.registerFunction('p::spans', () => 1), { spans: true });
    const intake = async () =>
      ((await engine.invoke('engine::health::check', {})) as { components: { telemetry_intake: { details: { spans: number } } } }).components.telemetry_intake
        .details.spans;
    await engine.invoke('p::plain', {}, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    await engine.invoke('p::spans', {}, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    await waitFor(async () => (await intake()) === 1, 3000, "the spans: true worker's span");
    const names = flatten(await tree(engine, CALLER_TRACE)).map((s) => s.name);
    expect(names.sort()).toEqual(['call p::plain', 'call p::spans', 'handle p::spans']);
    // An unsampled caller: no span from the worker either.
    await engine.invoke('p::spans', {}, { traceparent: `00-${'1'.repeat(32)}-${CALLER_SPAN}-00` });
    await new Promise((r) => setTimeout(r, 400));
    expect(await intake()).toBe(1);
  });

  it('does not trace the engine functions (log calls, listings, trace queries)', async () => {
    const { engine } = await startObs();
    const worker = await startWorker('flint', engine);
    await worker.trigger({ function_id: 'engine::log::info', payload: { message: 'hello' } });
    await worker.trigger({ function_id: 'engine::traces::list', payload: {} });
    const all = (await engine.invoke('engine::traces::list', { include_internal: true, name: 'engine::' })) as { total: number };
    expect(all.total).toBe(0);
  });

  it('sampling_ratio 0 records no new trace, but a sampled caller is still followed (parent-based)', async () => {
    const { engine, base } = await startObs({ sampling_ratio: 0 });
    await startWorker('flint', engine, (w) => {
      w.registerFunction('s::page', () => ({ status_code: 200, body: 'ok' }));
      w.registerTrigger({ type: 'http', function_id: 's::page', config: { api_path: '/s', http_method: 'GET' } });
    });
    await waitRouted(base, 'GET', '/s');
    await engine.invoke('engine::traces::clear', {});
    await fetch(`${base}/s`);
    await fetch(`${base}/s`, { headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } });
    const listed = (await engine.invoke('engine::traces::list', {})) as { spans: TreeSpan[] };
    expect(listed.spans.map((s) => s.trace_id)).toEqual([CALLER_TRACE]);
  });

  it('an unsampled call still hands on a trace context (flags 00) that its nested calls keep; nothing is recorded', async () => {
    const { engine } = await startObs({ sampling_ratio: 0 });
    const seen: Record<string, string | undefined> = {};
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('u::inner', (_: unknown, ctx?: { traceparent?: string }) => {
        seen.inner = ctx?.traceparent;
        return 1;
      });
      w.registerFunction('u::outer', async (_: unknown, ctx?: { traceparent?: string }) => {
        seen.outer = ctx?.traceparent;
        return w.trigger({ function_id: 'u::inner', payload: {} });
      });
    });
    await engine.invoke('engine::traces::clear', {});
    expect(await worker.trigger({ function_id: 'u::outer', payload: {} })).toBe(1);
    const unsampled = /^00-([0-9a-f]{32})-([0-9a-f]{16})-00$/;
    const outer = unsampled.exec(seen.outer ?? '');
    const inner = unsampled.exec(seen.inner ?? '');
    expect(outer, `outer traceparent ${seen.outer}`).not.toBeNull();
    expect(inner, `inner traceparent ${seen.inner}`).not.toBeNull();
    expect(inner?.[1]).toBe(outer?.[1]);
    expect(inner?.[2]).not.toBe(outer?.[2]);
    expect(((await engine.invoke('engine::traces::list', {})) as { total: number }).total).toBe(0);
  });

  it('parent_based: false lets the ratio decide even under a caller: a sampled caller is not followed at 0, an unsampled one is at 1', async () => {
    const never = await startObs({ sampling_ratio: 0, parent_based: false });
    await startWorker('flint', never.engine, (w) => w.registerFunction('pb::f', () => 1));
    await never.engine.invoke('pb::f', {}, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    expect(((await never.engine.invoke('engine::traces::list', {})) as { total: number }).total).toBe(0);

    const always = await startObs({ sampling_ratio: 1, parent_based: false });
    await startWorker('flint', always.engine, (w) => w.registerFunction('pb::f', () => 1));
    await always.engine.invoke('pb::f', {}, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00` });
    const spans = flatten(await tree(always.engine, CALLER_TRACE));
    expect(spans.map((s) => [s.name, s.parent_span_id])).toEqual([['call pb::f', CALLER_SPAN]]);
  });

  it("a failed call's span says why: status description and an exception event", async () => {
    const { engine } = await startObs();
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('t::refuse', () => {
        throw Object.assign(new Error('no stock left'), { code: 'out_of_stock' });
      });
    });
    await engine.invoke('engine::traces::clear', {});
    expect((await outcome(worker.trigger({ function_id: 't::refuse', payload: {} }))).ok).toBe(false);
    const listed = (await engine.invoke('engine::traces::list', { name: 't::refuse' })) as {
      spans: (TreeSpan & { status_description?: string; events: { name: string; attributes: Record<string, unknown> }[] })[];
    };
    expect(listed.spans[0]).toMatchObject({
      status: 'error',
      status_description: 'out_of_stock: no stock left',
      events: [{ name: 'exception', attributes: { 'exception.type': 'out_of_stock', 'exception.message': 'no stock left' } }],
    });
  });

  it('a small store keeps the latest spans whole while it reuses the objects of those it dropped', async () => {
    const { engine } = await startObs({ memory_max_spans: 4 });
    const worker = await startWorker('flint', engine, (w) => {
      for (let i = 0; i < 10; i++) w.registerFunction(`r::f${i}`, () => (i === 1 || i === 7 ? Promise.reject(new Error(`failed ${i}`)) : i));
    });
    for (let i = 0; i < 10; i++) await outcome(worker.trigger({ function_id: `r::f${i}`, payload: {} }));
    const listed = (await engine.invoke('engine::traces::list', {})) as { spans: (TreeSpan & { status_description?: string })[] };
    const byName = new Map(listed.spans.map((sp) => [sp.name, sp]));
    expect([...byName.keys()].sort()).toEqual(['call r::f6', 'call r::f7', 'call r::f8', 'call r::f9']);
    for (const [name, sp] of byName) {
      expect(attr(sp, 'function_id')).toBe(name.slice(5));
      expect(sp.status).toBe(name === 'call r::f7' ? 'error' : 'ok');
      expect(attr(sp, 'error.type') !== undefined).toBe(name === 'call r::f7');
    }
    expect(byName.get('call r::f7')?.status_description).toContain('failed 7');
    expect(new Set(listed.spans.map((sp) => sp.trace_id)).size).toBe(4);
  });

  it("each request's span names its method, route and path: repeated requests to one route, HEAD, a trailing slash, a parameter", async () => {
    const { engine, base } = await startObs();
    await startWorker('flint', engine, (w) => {
      w.registerFunction('p::static', () => ({ status_code: 200, body: 'ok' }));
      w.registerFunction('p::item', () => ({ status_code: 201, body: 'made' }));
      w.registerTrigger({ type: 'http', function_id: 'p::static', config: { api_path: '/static', http_method: 'GET' } });
      w.registerTrigger({ type: 'http', function_id: 'p::item', config: { api_path: '/items/:id', http_method: 'GET' } });
    });
    await waitRouted(base, 'GET', '/static');
    await waitRouted(base, 'GET', '/items/1');
    await engine.invoke('engine::traces::clear', {});
    const requests: [string, string][] = [
      ['GET', '/static'],
      ['GET', '/static'],
      ['HEAD', '/static'],
      ['GET', '/static/'],
      ['GET', '/items/42'],
      ['GET', '/items/7'],
    ];
    for (const [method, path] of requests) await fetch(base + path, { method });
    const listed = await waitFor(
      async () => {
        const l = (await engine.invoke('engine::traces::list', { limit: 100 })) as { spans: TreeSpan[] };
        return l.spans.length === requests.length ? l.spans : undefined;
      },
      5_000,
      'a span per request',
    );
    const seen = listed
      .map((sp) => [sp.name, attr(sp, 'http.request.method'), attr(sp, 'url.path'), attr(sp, 'http.route'), attr(sp, 'http.response.status_code')])
      .sort((a, b) => String(a).localeCompare(String(b)));
    expect(seen).toEqual(
      [
        ['GET /static', 'GET', '/static', '/static', '200'],
        ['GET /static', 'GET', '/static', '/static', '200'],
        ['HEAD /static', 'HEAD', '/static', '/static', '200'],
        ['GET /static', 'GET', '/static/', '/static', '200'],
        ['GET /items/:id', 'GET', '/items/42', '/items/:id', '201'],
        ['GET /items/:id', 'GET', '/items/7', '/items/:id', '201'],
      ].sort((a, b) => String(a).localeCompare(String(b))),
    );
  });

  it('enabled: false keeps no spans and the trace functions say why', async () => {
    const { engine } = await startObs({ enabled: false });
    const failure = await outcome(engine.invoke('engine::traces::list', {}));
    expect(failure).toMatchObject({ ok: false, error: { code: 'memory_exporter_not_enabled' } });
    expect(failure.ok === false && failure.error.message).toContain('enabled: false');
  });
});
