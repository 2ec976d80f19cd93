/**
 * The Flow page's edge learning (src/flow-edges.ts) and graph building (src/flow-graph.ts) on
 * hand-built span trees shaped like the engine's (docs/observability.md): calls inside handlers, with
 * and without the SDK's `handle` spans, trigger firings, conditions, queue publishes and their
 * deliveries, state writes firing triggers, named-queue enqueues, log triggers, deep chains.
 */
import type { FunctionInfo, TriggerInfo } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { type TraceTreeSpan, aggregateEdges, edgesOfTrace } from '../../src/flow-edges.js';
import { buildFlowGraph, triggerLabel } from '../../src/flow-graph.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
let nextId = 1;
const T0 = 1_800_000_000_000;

/** A span of TRACE; `ms` is its start offset and duration in ms. */
function span(
  name: string,
  attrs: Record<string, string>,
  children: TraceTreeSpan[] = [],
  opts: { error?: boolean; start?: number; ms?: number } = {},
): TraceTreeSpan {
  const id = (nextId++).toString(16).padStart(16, '0');
  const start = (T0 + (opts.start ?? 0)) * 1e6;
  const node: TraceTreeSpan = {
    trace_id: TRACE,
    span_id: id,
    parent_span_id: null,
    name,
    start_time_unix_nano: start,
    end_time_unix_nano: start + (opts.ms ?? 2) * 1e6,
    status: opts.error ? 'error' : 'ok',
    attributes: Object.entries(attrs),
    service_name: 'flint',
    children,
  };
  for (const c of children) c.parent_span_id = id;
  return node;
}
const call = (fn: string, children: TraceTreeSpan[] = [], opts: { error?: boolean; ms?: number; trigger?: [string, string] } = {}) =>
  span(
    `call ${fn}`,
    { function_id: fn, 'faas.trigger': 'other', ...(opts.trigger ? { 'flint.trigger.type': opts.trigger[0], 'flint.trigger.id': opts.trigger[1] } : {}) },
    children,
    opts,
  );
const handle = (fn: string, children: TraceTreeSpan[] = []) => span(`handle ${fn}`, { function_id: fn }, children);
const firing = (
  name: string,
  type: string,
  id: string,
  fn: string,
  children: TraceTreeSpan[],
  extra: Record<string, string> = {},
  opts: { error?: boolean } = {},
) => span(name, { function_id: fn, 'flint.trigger.type': type, 'flint.trigger.id': id, ...extra }, children, opts);

const edgeList = (roots: TraceTreeSpan[]) =>
  edgesOfTrace(roots).observations.map((o) => `${o.source} -${o.kind}${o.via ? `(${o.via})` : ''}-> ${o.target}${o.error ? ' !' : ''}`);

describe('edgesOfTrace', () => {
  it('an HTTP trigger → a → b: the trigger edge and the call edge, without handle spans', () => {
    const roots = [firing('GET /chain', 'http', 'h1', 'a', [call('a', [call('b', [], { ms: 5 })], { trigger: ['http', 'h1'], ms: 9 })])];
    expect(edgeList(roots)).toEqual(['trigger:h1 -trigger-> fn:a', 'fn:a -call-> fn:b']);
    const [toA, toB] = edgesOfTrace(roots).observations;
    expect(toA).toMatchObject({ duration_ms: 9, error: false, trace_id: TRACE, start_ms: T0 });
    expect(toB).toMatchObject({ duration_ms: 5 });
  });

  it('the same with the SDK handle spans, and a deeper chain a → b → c → d', () => {
    const roots = [
      firing('GET /chain', 'http', 'h1', 'a', [
        call('a', [handle('a', [call('b', [handle('b', [call('c', [handle('c', [call('d', [handle('d')])])])])])])], { trigger: ['http', 'h1'] }),
      ]),
    ];
    expect(edgeList(roots)).toEqual(['trigger:h1 -trigger-> fn:a', 'fn:a -call-> fn:b', 'fn:b -call-> fn:c', 'fn:c -call-> fn:d']);
  });

  it('calls made by the same handler are each an edge; a failed one is marked; self calls are left out', () => {
    const roots = [call('a', [call('b'), call('c', [], { error: true }), call('a')])];
    expect(edgeList(roots)).toEqual(['fn:a -call-> fn:b', 'fn:a -call-> fn:c !']);
  });

  it("a trigger's condition is not an edge, but its function is; calls made by the condition come from it", () => {
    const roots = [
      firing('GET /x', 'http', 'h1', 'a', [call('guard', [call('auth::check')], { trigger: ['http', 'h1'] }), call('a', [], { trigger: ['http', 'h1'] })]),
    ];
    expect(edgeList(roots)).toEqual(['fn:guard -call-> fn:auth::check', 'trigger:h1 -trigger-> fn:a']);
  });

  it('a root call (the console, a script) has no caller: only what it calls', () => {
    expect(edgeList([call('a', [call('b')])])).toEqual(['fn:a -call-> fn:b']);
  });

  it('a publish: function → topic once per publish, topic → each subscriber trigger per delivery attempt, trigger → its function', () => {
    const publish = call('flint::durable::publish', [
      firing(
        'process orders',
        'durable:subscriber',
        's1',
        'ship',
        [call('ship', [], { trigger: ['durable:subscriber', 's1'], error: true })],
        { 'messaging.destination.name': 'orders' },
        { error: true },
      ),
      firing('process orders', 'durable:subscriber', 's1', 'ship', [call('ship', [], { trigger: ['durable:subscriber', 's1'] })], {
        'messaging.destination.name': 'orders',
      }),
      firing('process orders', 'durable:subscriber', 's2', 'bill', [call('bill', [], { trigger: ['durable:subscriber', 's2'] })], {
        'messaging.destination.name': 'orders',
      }),
    ]);
    const roots = [call('checkout', [handle('checkout', [publish])])];
    expect(edgeList(roots)).toEqual([
      'fn:checkout -publish-> topic:orders',
      'topic:orders -deliver-> trigger:s1 !',
      'trigger:s1 -trigger-> fn:ship !',
      'topic:orders -deliver-> trigger:s1',
      'trigger:s1 -trigger-> fn:ship',
      'topic:orders -deliver-> trigger:s2',
      'trigger:s2 -trigger-> fn:bill',
    ]);
    // The publish function itself is not an edge target.
    expect(edgeList(roots).some((e) => e.includes('fn:flint::durable::publish'))).toBe(false);
  });

  it('a pub/sub publish made outside any function still shows the topic reaching its subscriber', () => {
    const roots = [
      call('publish', [
        firing('process news', 'subscribe', 'p1', 'read', [call('read', [], { trigger: ['subscribe', 'p1'] })], {
          'messaging.destination.name': 'news',
          'messaging.operation.type': 'process',
        }),
      ]),
    ];
    expect(edgeList(roots)).toEqual(['topic:news -deliver-> trigger:p1', 'trigger:p1 -trigger-> fn:read']);
  });

  it('a state write that fires a trigger: function → scope → trigger → function', () => {
    const roots = [
      call('carts::add', [
        call('state::get'),
        call('state::set', [
          firing('state:created carts', 'state', 'st1', 'carts::changed', [call('carts::changed', [], { trigger: ['state', 'st1'] })], {
            'flint.state.scope': 'carts',
          }),
        ]),
      ]),
    ];
    expect(edgeList(roots)).toEqual([
      'fn:carts::add -call-> fn:state::get',
      'fn:carts::add -write-> scope:carts',
      'scope:carts -deliver-> trigger:st1',
      'trigger:st1 -trigger-> fn:carts::changed',
    ]);
  });

  it("a named queue's delivery is an enqueue edge from the enqueuer to the function, via the queue", () => {
    const roots = [
      call('signup', [
        handle('signup', [
          firing('process mail', 'enqueue', 'mail', 'mail::send', [call('mail::send', [], { trigger: ['enqueue', 'mail'], ms: 40 })], {
            'messaging.destination.name': 'mail',
          }),
        ]),
      ]),
    ];
    const { observations, triggers } = edgesOfTrace(roots);
    expect(observations.map((o) => `${o.source} -${o.kind}(${o.via})-> ${o.target}`)).toEqual(['fn:signup -enqueue(mail)-> fn:mail::send']);
    expect(observations[0]?.duration_ms).toBe(40);
    // A named queue is not a trigger of the registry.
    expect(triggers).toEqual([]);
  });

  it('a log trigger fired by a line a handler wrote: function → trigger', () => {
    const roots = [call('a', [handle('a', [firing('log 9f', 'log', 'l1', 'alert', [call('alert', [], { trigger: ['log', 'l1'] })])])])];
    expect(edgeList(roots)).toEqual(['fn:a -fires-> trigger:l1', 'trigger:l1 -trigger-> fn:alert']);
    expect(edgesOfTrace(roots).triggers).toEqual([{ trigger_id: 'l1', trigger_type: 'log', function_id: 'alert', name: 'log 9f' }]);
  });

  it('walks very deep trees without recursion', () => {
    let inner = call('f5000');
    for (let i = 4999; i >= 0; i--) inner = call(`f${i}`, [inner]);
    const { observations } = edgesOfTrace([inner]);
    expect(observations).toHaveLength(5000);
    expect(observations[0]).toMatchObject({ source: 'fn:f0', target: 'fn:f1' });
  });
});

describe('aggregateEdges', () => {
  it('sums calls, errors and time per edge, keeping the newest trace and the newest failed trace', () => {
    const o = (trace: string, start: number, error: boolean, ms: number) => ({
      kind: 'call' as const,
      source: 'fn:a',
      target: 'fn:b',
      trace_id: trace,
      start_ms: start,
      error,
      duration_ms: ms,
    });
    const totals = aggregateEdges([o('t1', 100, false, 2), o('t3', 300, false, 4), o('t2', 200, true, 6)]);
    expect([...totals.values()]).toEqual([
      {
        kind: 'call',
        source: 'fn:a',
        target: 'fn:b',
        calls: 3,
        errors: 1,
        totalMs: 12,
        lastSeenMs: 300,
        lastTraceId: 't3',
        lastErrorMs: 200,
        lastErrorTraceId: 't2',
      },
    ]);
  });
});

const fn = (id: string, worker = true, metadata: Record<string, unknown> | null = null): FunctionInfo => ({
  function_id: id,
  description: null,
  request_format: null,
  response_format: null,
  metadata,
  providers: worker ? [{ worker_id: 'w1', worker_name: 'w' }] : [{ module: 'flint-state' }],
});
const trig = (id: string, type: string, fnId: string, config: Record<string, unknown> = {}, metadata?: Record<string, unknown>): TriggerInfo => ({
  id,
  trigger_type: type,
  function_id: fnId,
  config,
  status: 'active',
  ...(metadata ? { metadata } : {}),
});

describe('buildFlowGraph', () => {
  it('joins the registry and the learned edges, leaving out internal and module-only functions', () => {
    const learned = aggregateEdges(
      edgesOfTrace([
        firing('POST /orders', 'http', 'h1', 'orders::create', [
          call('orders::create', [call('stock::reserve'), call('state::get'), call('engine::log::info'), call('gone::fn')], { trigger: ['http', 'h1'] }),
        ]),
        firing('engine::functions-available x', 'engine::functions-available', 'int1', 'flint-console.ab::changed', [
          call('flint-console.ab::changed', [], { trigger: ['engine::functions-available', 'int1'] }),
        ]),
      ]).observations,
    ).values();
    const { nodes, edges } = buildFlowGraph({
      functions: [fn('orders::create'), fn('stock::reserve'), fn('lonely'), fn('state::get', false), fn('flint-console.ab::changed', true, { internal: true })],
      triggers: [
        trig('h1', 'http', 'orders::create', { api_path: 'orders', http_method: 'post' }),
        trig('q1', 'durable:subscriber', 'stock::reserve', { topic: 'orders' }),
        trig('int1', 'engine::functions-available', 'flint-console.ab::changed', {}, { internal: true }),
      ],
      learned,
      sightings: [],
      stats: { 'orders::create': { total: 10, success: 9, error: 1, rate: 2 } },
    });
    expect(nodes.map((n) => n.id)).toEqual(['fn:gone::fn', 'fn:lonely', 'fn:orders::create', 'fn:stock::reserve', 'topic:orders', 'trigger:h1', 'trigger:q1']);
    expect(nodes.find((n) => n.id === 'fn:gone::fn')).toMatchObject({ missing: true, stats: { total: 0 } });
    expect(nodes.find((n) => n.id === 'fn:orders::create')?.stats).toEqual({ total: 10, success: 9, error: 1, rate: 2 });
    expect(nodes.find((n) => n.id === 'trigger:h1')).toMatchObject({ label: 'POST /orders', trigger_type: 'http', status: 'active' });
    expect(edges.map((e) => `${e.id} ${e.registered ? 'R' : 'L'}${e.calls}`)).toEqual([
      'fn:orders::create|call|fn:gone::fn L1',
      'fn:orders::create|call|fn:stock::reserve L1',
      'topic:orders|deliver|trigger:q1 R0',
      'trigger:h1|trigger|fn:orders::create R1',
      'trigger:q1|trigger|fn:stock::reserve R0',
    ]);
    expect(edges.find((e) => e.kind === 'trigger' && e.calls === 1)).toMatchObject({ avg_ms: 2, last_trace_id: TRACE });
  });

  it('shows a trigger seen in traces but no longer registered, named after its span', () => {
    const learned = aggregateEdges(
      edgesOfTrace([firing('cron 0 7 * * *', 'cron', 'old', 'report', [call('report', [], { trigger: ['cron', 'old'] })])]).observations,
    );
    const sightings = edgesOfTrace([firing('cron 0 7 * * *', 'cron', 'old', 'report', [])]).triggers;
    const { nodes } = buildFlowGraph({ functions: [fn('report')], triggers: [], learned: learned.values(), sightings });
    expect(nodes.find((n) => n.id === 'trigger:old')).toMatchObject({ kind: 'trigger', label: 'cron 0 7 * * *', trigger_type: 'cron', missing: true });
    // Without metrics, nodes carry no stats.
    expect(nodes.find((n) => n.id === 'fn:report')?.stats).toBeUndefined();
  });

  it('labels triggers by what they listen to', () => {
    expect(triggerLabel({ id: '1', trigger_type: 'http', config: { api_path: '/users/:id/', http_method: 'delete' } })).toBe('DELETE /users/:id');
    expect(triggerLabel({ id: '1', trigger_type: 'cron', config: { expression: '*/5 * * * *' } })).toBe('cron */5 * * * *');
    expect(triggerLabel({ id: '1', trigger_type: 'durable:subscriber', config: { topic: 'orders' } })).toBe('queue orders');
    expect(triggerLabel({ id: '1', trigger_type: 'subscribe', config: { topic: 'news' } })).toBe('subscribe news');
    expect(triggerLabel({ id: '1', trigger_type: 'state', config: { scope: 'carts', key: 'k' } })).toBe('state carts/k');
    expect(triggerLabel({ id: '1', trigger_type: 'state', config: {} })).toBe('state *');
    expect(triggerLabel({ id: '1', trigger_type: 'stream', config: { stream_name: 'chat' } })).toBe('stream chat');
    expect(triggerLabel({ id: '1', trigger_type: 'billing::due', config: null })).toBe('billing::due');
  });
});
