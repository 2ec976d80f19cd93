/**
 * Trace context through every kind of hop: a queue message keeps its publisher's trace (the delivery's
 * span sits under the publish call), a state change's triggers run in the trace of the write, a cron
 * run starts a trace of its own, and a log trigger's handler runs in the trace of the record that fired
 * it. SDK telemetry frames that are not OTLP/JSON are counted and dropped; malformed spans are rejected
 * one by one; LOGS frames land in the log store and fire log triggers.
 */
import type { Engine } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { sendTelemetry } from '../support/observability/telemetry.js';
import { waitFor } from '../support/util.js';

afterEach(cleanup);

interface TreeSpan {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  attributes: [string, string][];
  children: TreeSpan[];
}
interface Row {
  trace_id: string;
  span_id: string;
  name: string;
}

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const flatten = (nodes: TreeSpan[]): TreeSpan[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);
const tree = async (engine: Engine, traceId: string) => ((await engine.invoke('engine::traces::tree', { trace_id: traceId })) as { roots: TreeSpan[] }).roots;
const attr = (span: TreeSpan | undefined, key: string) => span?.attributes.find(([k]) => k === key)?.[1];

function start(extra: Record<string, unknown>[] = []): Promise<Engine> {
  return startTestEngine({ log: { level: 'info' }, modules: [...extra, { name: 'flint-observability', config: { enabled: true } }] });
}

describe('trace context across hops', () => {
  it("a queue message carries its publisher's trace: publish call → process <topic> → the subscriber's call", async () => {
    const engine = await start([{ name: 'flint-queue' }]);
    const handled: unknown[] = [];
    await startWorker(
      'flint',
      engine,
      (w) => {
        w.registerFunction('q::handle', (d: unknown) => {
          handled.push(d);
          return null;
        });
        w.registerTrigger({ type: 'durable:subscriber', function_id: 'q::handle', config: { topic: 'orders' } });
      },
      { spans: true },
    );
    await engine.invoke('flint::durable::publish', { topic: 'orders', data: { id: 1 } }, { traceparent: `00-${TRACE}-${PARENT}-01` });
    await waitFor(() => handled.length === 1);
    const spans = flatten(
      await waitFor(async () => {
        const r = await tree(engine, TRACE);
        return flatten(r).some((s) => s.name === 'handle q::handle') ? r : undefined;
      }),
    );
    const publish = spans.find((s) => s.name === 'call flint::durable::publish');
    const process = spans.find((s) => s.name === 'process orders');
    const call = spans.find((s) => s.name === 'call q::handle');
    expect(publish?.parent_span_id).toBe(PARENT);
    expect(process?.parent_span_id).toBe(publish?.span_id);
    expect(attr(process, 'messaging.destination.name')).toBe('orders');
    expect(attr(process, 'faas.trigger')).toBe('pubsub');
    expect(call?.parent_span_id).toBe(process?.span_id);
  });

  it('state triggers run in the trace of the write', async () => {
    const engine = await start([{ name: 'flint-state' }]);
    const seen: unknown[] = [];
    await startWorker('flint', engine, (w) => {
      w.registerFunction('s::changed', (d: unknown) => {
        seen.push(d);
        return null;
      });
      w.registerTrigger({ type: 'state', function_id: 's::changed', config: { scope: 'carts' } });
    });
    await engine.invoke('state::set', { scope: 'carts', key: 'c1', value: 1 }, { traceparent: `00-${TRACE}-${PARENT}-01` });
    await waitFor(() => seen.length === 1);
    const spans = flatten(
      await waitFor(async () => {
        const r = await tree(engine, TRACE);
        return flatten(r).some((s) => s.name === 'call s::changed') ? r : undefined;
      }),
    );
    const set = spans.find((s) => s.name === 'call state::set');
    const firing = spans.find((s) => s.name === 'state:created carts');
    expect(set?.parent_span_id).toBe(PARENT);
    expect(firing?.parent_span_id).toBe(set?.span_id);
    expect(attr(firing, 'flint.state.key')).toBe('c1');
    expect(spans.find((s) => s.name === 'call s::changed')?.parent_span_id).toBe(firing?.span_id);
  });

  it("the engine's line about a failed trigger carries the firing's trace ids, so it is found by trace", async () => {
    const engine = await start([{ name: 'flint-state' }]);
    await startWorker('flint', engine, (w) => {
      w.registerFunction('s::broken', () => {
        throw new Error('cannot handle this');
      });
      w.registerTrigger({ type: 'state', function_id: 's::broken', config: { scope: 'broken' } });
    });
    await engine.invoke('state::set', { scope: 'broken', key: 'k', value: 1 }, { traceparent: `00-${TRACE}-${PARENT}-01` });
    const line = await waitFor(async () => {
      const l = (await engine.invoke('engine::logs::list', { trace_id: TRACE })) as { logs: { body: string; span_id: string | null }[] };
      return l.logs.find((r) => r.body.includes('state trigger failed'));
    });
    const firing = flatten(await tree(engine, TRACE)).find((s) => s.name === 'state:created broken');
    expect(line.span_id).toBe(firing?.span_id);
  });

  it('a cron run starts a trace of its own, named by its expression', async () => {
    const engine = await start([{ name: 'flint-cron' }]);
    let runs = 0;
    await startWorker(
      'flint',
      engine,
      (w) => {
        w.registerFunction('c::tick', () => {
          runs++;
          return null;
        });
        w.registerTrigger({ type: 'cron', function_id: 'c::tick', config: { expression: '* * * * * *' } });
      },
      { spans: true },
    );
    await waitFor(() => runs >= 1, 3000, 'a cron run');
    const row = await waitFor(async () => {
      const l = (await engine.invoke('engine::traces::list', { name: 'cron * * * * * *' })) as { spans: (Row & { parent_span_id: string | null })[] };
      return l.spans[0];
    });
    expect(row.parent_span_id).toBeNull();
    const spans = flatten(
      await waitFor(async () => {
        const r = await tree(engine, row.trace_id);
        return flatten(r).some((s) => s.name === 'handle c::tick') ? r : undefined;
      }),
    );
    expect(attr(spans[0], 'faas.trigger')).toBe('timer');
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['cron * * * * * *', 'call c::tick', 'handle c::tick']));
  });

  it("a log trigger's handler runs in the trace of the record that fired it", async () => {
    const engine = await start();
    const fired: { trace_id: string | null }[] = [];
    await startWorker('flint', engine, (w) => {
      w.registerFunction('l::alert', (d: { trace_id: string | null }) => {
        fired.push(d);
        return null;
      });
      w.registerTrigger({ type: 'log', function_id: 'l::alert', config: { level: 'error' } });
    });
    await engine.invoke('engine::log::error', { message: 'boom', trace_id: TRACE, span_id: PARENT });
    await waitFor(() => fired.length === 1);
    expect(fired[0]?.trace_id).toBe(TRACE);
    const spans = flatten(
      await waitFor(async () => {
        const r = await tree(engine, TRACE);
        return flatten(r).some((s) => s.name === 'call l::alert') ? r : undefined;
      }),
    );
    const firing = spans.find((s) => s.name.startsWith('log '));
    expect(firing?.parent_span_id).toBe(PARENT);
  });
});

describe('SDK telemetry frames', () => {
  const span = (fields: Record<string, unknown>) => ({
    traceId: TRACE,
    spanId: PARENT,
    name: 'sdk work',
    startTimeUnixNano: String(Date.now() * 1e6),
    endTimeUnixNano: String((Date.now() + 5) * 1e6),
    kind: 2,
    ...fields,
  });
  const spanFrame = (spans: unknown[]) => ({
    resourceSpans: [
      { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'py-worker' } }] }, scopeSpans: [{ scope: { name: 'sdk' }, spans }] },
    ],
  });
  const health = async (engine: Engine) =>
    ((await engine.invoke('engine::health::check', {})) as { components: { telemetry_intake: { status: string; details: Record<string, number> } } }).components
      .telemetry_intake;

  it('keeps the readable spans of an OTLP frame, rejects malformed ones one by one, and survives a frame that is not JSON', async () => {
    const engine = await start();
    await sendTelemetry(
      engine,
      'OTLP',
      '{not json',
      spanFrame([
        span({}),
        span({ spanId: 'xyz' }),
        span({ traceId: 42 }),
        'junk',
        span({ spanId: 'c0ffee00c0ffee00', parentSpanId: PARENT, status: { code: 2, message: 'failed' } }),
      ]),
    );
    const intake = await waitFor(async () => {
      const h = await health(engine);
      return h.details.spans === 2 ? h : undefined;
    });
    expect(intake).toMatchObject({ status: 'degraded', details: { rejected_frames: 1, rejected_items: 3 } });
    const roots = await tree(engine, TRACE);
    expect(roots.map((r) => [r.name, r.children.length])).toEqual([['sdk work', 1]]);
    const listed = (await engine.invoke('engine::traces::list', { service_name: 'py-worker' })) as { spans: Row[]; total: number };
    expect(listed.spans.map((r) => r.name)).toEqual(['sdk work']);
  });

  it('LOGS frames go into the log store with their trace ids and fire log triggers', async () => {
    const engine = await start();
    const fired: { message: string; service_name: string }[] = [];
    await startWorker('flint', engine, (w) => {
      w.registerFunction('l::warned', (d: { message: string; service_name: string }) => {
        fired.push(d);
        return null;
      });
      w.registerTrigger({ type: 'log', function_id: 'l::warned', config: { min_level: 'warn' } });
    });
    const record = (body: string, severityNumber: number, severityText: string) => ({
      timeUnixNano: String(Date.now() * 1e6),
      severityNumber,
      severityText,
      body: { stringValue: body },
      traceId: TRACE,
      spanId: PARENT,
      attributes: [{ key: 'order', value: { intValue: '42' } }],
    });
    await sendTelemetry(engine, 'LOGS', {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'py-worker' } }] },
          scopeLogs: [{ scope: { name: 'app' }, logRecords: [record('card declined', 13, 'WARN'), record('all good', 9, 'INFO')] }],
        },
      ],
    });
    const logs = await waitFor(async () => {
      const l = (await engine.invoke('engine::logs::list', { trace_id: TRACE })) as {
        logs: { body: string; service_name: string; attributes: Record<string, unknown> }[];
      };
      return l.logs.length === 2 ? l.logs : undefined;
    });
    expect(logs.map((l) => l.body)).toEqual(expect.arrayContaining(['card declined', 'all good']));
    expect(logs[0]).toMatchObject({ service_name: 'py-worker', attributes: { order: 42 } });
    await waitFor(() => fired.length === 1);
    expect(fired[0]).toMatchObject({ message: 'card declined', service_name: 'py-worker' });
  });
});
