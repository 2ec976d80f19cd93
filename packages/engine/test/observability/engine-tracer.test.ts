/**
 * The engine's tracer (src/modules/observability/engine-tracer.ts) through its pipeline, without an
 * engine: what a span records, and that a scope ended twice (a caller's bug) stores its span once, as
 * the memory store hands the objects of the spans it drops back to the tracer for new spans.
 *
 * TracePipeline is not part of the package's public entry, so this file imports the built modules
 * (dist/; run `npx tsc -b` first).
 */
import { describe, expect, test } from 'vitest';
import type { Logger } from '../../dist/core/logger.js';
import { observabilityConfigSchema } from '../../dist/modules/observability/config.js';
import type { EngineSpan } from '../../dist/modules/observability/engine-spans.js';
import { EngineTracer } from '../../dist/modules/observability/engine-tracer.js';
import { PooledIdGenerator } from '../../dist/modules/observability/id-generator.js';
import { TracePipeline } from '../../dist/modules/observability/trace-pipeline.js';
import { seeded } from '../support/observability/spans.js';

const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => silent };

async function pipeline(config: Record<string, unknown> = {}) {
  const parsed = observabilityConfigSchema.parse({ enabled: true, exporter: 'memory', sampling_ratio: 1, ...config });
  // A logger that says nothing stands for the engine's.
  return TracePipeline.create(parsed, { 'service.name': 'flint' }, '0.0.0-test', silent as unknown as Logger);
}

const call = (functionId: string, traceparent?: string) => ({
  kind: 'invocation' as const,
  functionId,
  trigger: undefined,
  caller: 'w-1',
  traceparent,
  baggage: undefined,
  startedAt: performance.now(),
});

describe('the engine tracer', () => {
  test('a scope ended twice stores its span once; the spans after it are their own', async () => {
    const p = await pipeline({ memory_max_spans: 2 });
    const first = call('t::one');
    const scope = p.tracer.start(first);
    if (!scope) throw new Error('not traced');
    scope.end(first, { durationMs: 1 });
    scope.end(first, { durationMs: 2, error: { code: 'late', message: 'ended again' } });
    expect(p.store?.stats()).toMatchObject({ spans: 1, dropped_by_count: 0 });
    // Through a 2-span store, so that dropped objects are used again.
    for (const id of ['t::two', 't::three', 't::four']) {
      const e = call(id);
      p.tracer.start(e)?.end(e, { durationMs: 1 });
    }
    const held = [...(p.store?.all() ?? [])];
    expect(held.map((s) => [s.name, s.status, s.attributes.find(([k]) => k === 'function_id')?.[1]])).toEqual([
      ['call t::three', 'ok', 't::three'],
      ['call t::four', 'ok', 't::four'],
    ]);
  });

  test("a call under an open span of the engine is its child; under a caller's traceparent, the caller's", async () => {
    const p = await pipeline();
    const outer = call('t::outer', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    const outerScope = p.tracer.start(outer);
    if (!outerScope?.traceparent) throw new Error('not traced');
    const inner = call('t::inner', outerScope.traceparent);
    const innerScope = p.tracer.start(inner);
    innerScope?.end(inner, { durationMs: 1 });
    outerScope.end(outer, { durationMs: 2 });
    const spans = p.store?.byTrace('4bf92f3577b34da6a3ce929d0e0e4736') ?? [];
    const o = spans.find((s) => s.name === 'call t::outer');
    const i = spans.find((s) => s.name === 'call t::inner');
    expect(o?.parent_span_id).toBe('00f067aa0ba902b7');
    expect(i?.parent_span_id).toBe(o?.span_id);
    expect(outerScope.traceparent).toBe(`00-4bf92f3577b34da6a3ce929d0e0e4736-${o?.span_id}-01`);
  });

  test('sampling_ratio 0.5 records about half the new traces, by trace id: the traceparent flag says which', async () => {
    const p = await pipeline({ sampling_ratio: 0.5, memory_max_spans: 10_000 });
    const flags = Array.from({ length: 2_000 }, (_, i) => {
      const e = call(`t::r${i}`);
      const scope = p.tracer.start(e);
      scope?.end(e, { durationMs: 1 });
      return scope?.traceparent?.slice(-2);
    });
    const sampled = flags.filter((f) => f === '01').length;
    expect(flags.filter((f) => f === '00').length).toBe(2_000 - sampled);
    // Binomial(2000, 0.5): 700 to 1300 is more than 13 standard deviations either way.
    expect(sampled).toBeGreaterThan(700);
    expect(sampled).toBeLessThan(1_300);
    expect(p.store?.stats().spans).toBe(sampled);
  });

  test('with thousands of spans open, each call finds its open parent in this engine; an ended one is parsed as remote', () => {
    // The tracer keeps its open scopes in 4,096 chains by span id: 6,000 open scopes share chains, and are
    // taken out of them in a shuffled order. A parent found open is local (parentRemote false); one
    // already ended comes from its traceparent text, like any caller's (true). Both give the same ids.
    const spans: EngineSpan[] = [];
    const origin = { resource: undefined as never, serviceName: 'flint', scope: { name: 'flint', version: '0' } };
    const tracer = new EngineTracer({ ids: new PooledIdGenerator(), sample: () => true, ended: (s) => spans.push(s), origin });
    const parents = Array.from({ length: 6_000 }, (_, i) => {
      const e = call(`t::p${i}`);
      const scope = tracer.start(e);
      if (!scope?.traceparent) throw new Error('not traced');
      return { e, scope, traceparent: scope.traceparent };
    });
    const random = seeded(3);
    const order = parents.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const ended = new Set(order.slice(0, 3_000));
    for (const i of ended) parents[i]!.scope.end(parents[i]!.e, { durationMs: 1 });
    parents.forEach((p, i) => {
      const child = call(`t::c${i}`, p.traceparent);
      tracer.start(child)?.end(child, { durationMs: 1 });
    });
    const children = spans.filter((s) => s.functionId.startsWith('t::c'));
    expect(children).toHaveLength(6_000);
    children.forEach((c, i) => {
      const [, traceId, parentId] = parents[i]!.traceparent.split('-');
      expect([c.trace_id, c.parentSpanId, c.parentRemote]).toEqual([traceId, parentId, ended.has(i)]);
    });
  });
});
