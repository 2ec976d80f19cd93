/**
 * GET /_console/flow (the registry's triggers and functions with the edges learned from traces) and
 * GET/PUT /_console/flow/layout (positions kept with state::set, or in memory without flint-state),
 * against a real engine with flint-observability.
 */
import { EngineFunctions, type TriggerInfo } from '@flint/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleEnv,
  type Json,
  consoleFlagsFor,
  consoleTestModules,
  startConsoleEnv,
  startTestConsole,
  startTestEngine,
  uid,
  waitFor,
} from './support/console-env.js';

const edgeOf = (body: Json, source: string, kind: string, target: string) => body.edges.find((e: Json) => e.id === `${source}|${kind}|${target}`);
const nodeOf = (body: Json, id: string) => body.nodes.find((n: Json) => n.id === id);

describe('GET /_console/flow', () => {
  let env: ConsoleEnv;
  const ns = uid('flow');
  const a = `${ns}::a`;
  const b = `${ns}::b`;
  const sub = `${ns}::on-order`;
  const broken = `${ns}::broken`;
  const topic = `${ns}-orders`;
  const route = `${ns}/chain`;
  let httpTriggerId = '';
  let subTriggerId = '';
  let httpBase = '';

  beforeAll(async () => {
    env = await startConsoleEnv({ extraModules: [{ name: 'flint-observability', config: {} }], consoleFlags: { enableFlow: true } });
    httpBase = env.engine.listeners().find((l) => l.name === 'http')?.url ?? '';
    const w = await env.worker((w) => {
      w.registerFunction(b, (input: Json) => ({ doubled: (input?.n ?? 1) * 2 }));
      w.registerFunction(broken, () => {
        throw new Error('no stock');
      });
      w.registerFunction(a, async (input: Json) => {
        const r = await w.trigger({ function_id: b, payload: { n: 21 } });
        await w.trigger({ function_id: 'flint::durable::publish', payload: { topic, data: { from: 'a' } } });
        if (input?.query_params?.fail === 'yes') await w.trigger({ function_id: broken, payload: {} });
        return { status_code: 200, body: r };
      });
      w.registerFunction(sub, () => null);
    });
    await Promise.all([
      w.registerTrigger({ type: 'http', function_id: a, config: { api_path: route, http_method: 'GET' } }).ready,
      w.registerTrigger({ type: 'durable:subscriber', function_id: sub, config: { topic } }).ready,
    ]);
    const { triggers } = (await env.engine.invoke(EngineFunctions.LIST_TRIGGERS, {})) as { triggers: TriggerInfo[] };
    httpTriggerId = triggers.find((t) => t.function_id === a)?.id ?? '';
    subTriggerId = triggers.find((t) => t.function_id === sub)?.id ?? '';
  });
  afterAll(() => env?.close());

  it('shows the registry before any call: the trigger with its function, the subscriber behind its topic, every worker function', async () => {
    const res = await env.api('GET', '/_console/flow');
    expect(res.status).toBe(200);
    const body = res.body;
    expect(body.traces.available).toBe(true);
    expect(body.metrics_available).toBe(true);
    expect(nodeOf(body, `trigger:${httpTriggerId}`)).toMatchObject({ kind: 'trigger', trigger_type: 'http', label: `GET /${route}`, function_id: a });
    for (const id of [a, b, sub, broken]) expect(nodeOf(body, `fn:${id}`)).toMatchObject({ kind: 'function', label: id, stats: { total: 0 } });
    expect(nodeOf(body, `topic:${topic}`)).toMatchObject({ kind: 'topic', topic });
    expect(edgeOf(body, `trigger:${httpTriggerId}`, 'trigger', `fn:${a}`)).toMatchObject({ registered: true });
    expect(edgeOf(body, `topic:${topic}`, 'deliver', `trigger:${subTriggerId}`)).toMatchObject({ registered: true });
    expect(edgeOf(body, `fn:${a}`, 'call', `fn:${b}`)).toBeUndefined();
    // The console's own listeners and the engine's functions are not part of the graph.
    expect(body.nodes.some((n: Json) => String(n.function_id ?? '').startsWith('flint-console.'))).toBe(false);
    expect(body.nodes.some((n: Json) => String(n.function_id ?? '').startsWith('engine::'))).toBe(false);
  });

  it('learns the chain from traces: trigger → a → b, a → topic → subscriber trigger → subscriber, with counts and a trace per edge', async () => {
    for (let i = 0; i < 3; i++) expect((await fetch(`${httpBase}/${route}`)).status).toBe(200);
    const failed = await fetch(`${httpBase}/${route}?fail=yes`);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const body = await waitFor(
      async () => {
        const r = (await env.api('GET', '/_console/flow')).body;
        const pub = edgeOf(r, `topic:${topic}`, 'deliver', `trigger:${subTriggerId}`);
        const toB = edgeOf(r, `fn:${a}`, 'call', `fn:${b}`);
        return toB?.calls === 4 && pub?.calls === 4 && r.traces.pending === 0 ? r : undefined;
      },
      10_000,
      'the edges of 4 requests',
    );
    const trigger = edgeOf(body, `trigger:${httpTriggerId}`, 'trigger', `fn:${a}`);
    expect(trigger).toMatchObject({ registered: true, calls: 4, errors: 1 });
    expect(trigger.avg_ms).toBeGreaterThan(0);
    expect(trigger.last_trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(trigger.last_error_trace_id).toMatch(/^[0-9a-f]{32}$/);
    const toB = edgeOf(body, `fn:${a}`, 'call', `fn:${b}`);
    expect(toB).toMatchObject({ registered: false, kind: 'call', calls: 4, errors: 0 });
    expect(toB.avg_ms).toBeGreaterThan(0);
    expect(edgeOf(body, `fn:${a}`, 'call', `fn:${broken}`)).toMatchObject({ calls: 1, errors: 1 });
    expect(edgeOf(body, `fn:${a}`, 'publish', `topic:${topic}`)).toMatchObject({ calls: 4, errors: 0 });
    expect(edgeOf(body, `trigger:${subTriggerId}`, 'trigger', `fn:${sub}`)).toMatchObject({ registered: true, calls: 4 });
    // The publish function is shown as the topic, not as a node of its own.
    expect(nodeOf(body, 'fn:flint::durable::publish')).toBeUndefined();
    // Nodes carry the live counts of flint-observability's metrics.
    await waitFor(async () => nodeOf((await env.api('GET', '/_console/flow')).body, `fn:${b}`)?.stats?.total === 4, 6000, 'the counts of b');
    const again = (await env.api('GET', '/_console/flow')).body;
    expect(nodeOf(again, `fn:${a}`).stats).toMatchObject({ total: 4, error: 1 });
    // Reading again does not count a trace twice.
    expect(edgeOf(again, `fn:${a}`, 'call', `fn:${b}`).calls).toBe(4);
    expect(again.traces.window).toBeGreaterThanOrEqual(4);
  });

  it('saves the layout with state::set and reads it back', async () => {
    const positions = { [`fn:${a}`]: { x: 120.25, y: -40 }, [`trigger:${httpTriggerId}`]: { x: 0, y: 0 } };
    const put = await env.api('PUT', '/_console/flow/layout', { positions });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ stored: 'state', positions: { [`fn:${a}`]: { x: 120.3, y: -40 } } });
    const got = await env.api('GET', '/_console/flow/layout');
    expect(got.body).toEqual({ stored: 'state', positions: { [`fn:${a}`]: { x: 120.3, y: -40 }, [`trigger:${httpTriggerId}`]: { x: 0, y: 0 } } });
    const stored = (await env.engine.invoke('state::get', { scope: 'flint-console', key: 'flow-layout' })) as Json;
    expect(stored.positions[`fn:${a}`]).toEqual({ x: 120.3, y: -40 });
    // A PUT replaces the whole layout (an empty one resets it).
    await env.api('PUT', '/_console/flow/layout', { positions: {} });
    expect((await env.api('GET', '/_console/flow/layout')).body.positions).toEqual({});
  });

  it('refuses a malformed layout, and a PUT without the console header', async () => {
    for (const body of [{}, { positions: [] }, { positions: { x: { x: 'a', y: 1 } } }, { positions: { x: { x: Number.MAX_VALUE, y: 1 } } }]) {
      const res = await env.api('PUT', '/_console/flow/layout', body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
    const res = await env.api('PUT', '/_console/flow/layout', { positions: {} }, { mutationHeader: false });
    expect(res.status).toBe(403);
  });
});

describe('the Flow API when it cannot learn', () => {
  it('answers 404 flow_disabled without --enable-flow', async () => {
    const env = await startConsoleEnv();
    try {
      for (const path of ['/_console/flow', '/_console/flow/layout']) {
        const res = await env.api('GET', path);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('flow_disabled');
        expect(res.body.error).toContain('--enable-flow');
      }
    } finally {
      await env.close();
    }
  });

  it('without flint-observability: the registry graph, no counts, and why there are no learned edges', async () => {
    const env = await startConsoleEnv({ consoleFlags: { enableFlow: true } });
    try {
      const fn = `${uid('plain')}::hello`;
      await env.worker((w) => {
        w.registerFunction(fn, () => 'hi');
        w.registerTrigger({ type: 'cron', function_id: fn, config: { expression: '0 0 1 1 *' } });
      });
      const body = await waitFor(async () => {
        const b = (await env.api('GET', '/_console/flow')).body;
        return b.nodes?.some((n: Json) => n.trigger_type === 'cron' && n.function_id === fn) ? b : undefined;
      });
      expect(body.traces).toMatchObject({ available: false, reason: 'module_not_loaded', window: 0 });
      expect(body.metrics_available).toBe(false);
      const cron = body.nodes.find((n: Json) => n.trigger_type === 'cron' && n.function_id === fn);
      expect(cron.label).toBe('cron 0 0 1 1 *');
      expect(nodeOf(body, `fn:${fn}`).stats).toBeUndefined();
      expect(edgeOf(body, cron.id, 'trigger', `fn:${fn}`)).toMatchObject({ registered: true, calls: 0, avg_ms: null });
    } finally {
      await env.close();
    }
  });

  it('keeps the layout in memory when flint-state is not loaded', async () => {
    const engine = await startTestEngine(consoleTestModules().filter((m) => m.name !== 'flint-state'));
    const server = await startTestConsole({ ...consoleFlagsFor(engine), enableFlow: true });
    try {
      await waitFor(() => server.link.bridgeState === 'connected', 5000, 'the bridge');
      const call = (method: string, body?: unknown) =>
        fetch(`${server.url}/_console/flow/layout`, {
          method,
          headers: { 'content-type': 'application/json', 'x-flint-console': '1' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }));
      expect((await call('GET')).body).toEqual({ positions: {}, stored: 'memory' });
      const put = await call('PUT', { positions: { 'fn:x': { x: 1, y: 2 } } });
      expect(put).toEqual({ status: 200, body: { positions: { 'fn:x': { x: 1, y: 2 } }, stored: 'memory' } });
      expect((await call('GET')).body).toEqual({ positions: { 'fn:x': { x: 1, y: 2 } }, stored: 'memory' });
    } finally {
      await server.close();
      await engine.stop();
    }
  });
});
