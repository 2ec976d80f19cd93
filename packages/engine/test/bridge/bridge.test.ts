/**
 * The bridge protocol (reference/protocol.md §3.1): raw frames, and the same obligations seen
 * through both worker SDKs (@flint/sdk and iii-sdk@0.11.6).
 */
import type { Engine } from '@flint/engine';
import { EngineFunctions } from '@flint/protocol';
import { FlintInvocationError, type Worker as FlintWorker } from '@flint/sdk';
import { type ISdk, Logger as IiiLogger } from 'iii-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import {
  SDK_KINDS,
  type SdkKind,
  connectWorker,
  findTrigger,
  isListed,
  listFunctions,
  listWorkers,
  startTestEngine,
  startWorker,
  waitForFunction,
  whenAnnounced,
} from '../support/harness.js';
import { RawClient } from '../support/raw-client.js';
import { deferred, outcome, uid, waitFor, within } from '../support/util.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const BAGGAGE = 'tenant=acme,region=eu';

afterEach(cleanup);

describe('bridge: raw protocol frames', () => {
  let engine: Engine;

  it('sends workerregistered as the first frame, with a fresh worker id per connection', async () => {
    engine = await startTestEngine();
    const a = await RawClient.connect(engine.bridgeUrl);
    const first = await a.waitFrame(() => true);
    expect(first.type).toBe('workerregistered');
    expect(first.worker_id).toMatch(UUID_RE);
    expect(a.frames[0]).toBe(first);
    const b = await RawClient.connect(engine.bridgeUrl);
    const second = await b.waitFrame(() => true);
    expect(second.type).toBe('workerregistered');
    expect(second.worker_id).not.toBe(first.worker_id);
  });

  it('answers a JSON ping with a pong', async () => {
    engine = await startTestEngine();
    const c = await RawClient.connect(engine.bridgeUrl);
    c.send({ type: 'ping' });
    const pong = await c.waitFrame((f) => f.type === 'pong');
    expect(pong).toEqual({ type: 'pong' });
  });

  it('registers and unregisters a function (listed, then unlisted) and stores its metadata verbatim', async () => {
    engine = await startTestEngine();
    const c = await RawClient.connect(engine.bridgeUrl);
    const format = { type: 'object', properties: { a: { type: 'number' } } };
    c.send({ type: 'registerfunction', id: 'raw::fn', description: 'a raw fn', request_format: format, metadata: { owner: 'me' }, message_type: 'x' });
    await c.roundTrip();
    const listed = (await listFunctions(engine)).find((f) => f.function_id === 'raw::fn');
    expect(listed).toEqual({
      function_id: 'raw::fn',
      description: 'a raw fn',
      request_format: format,
      response_format: null,
      metadata: { owner: 'me' },
      providers: [{ worker_id: c.workerId, worker_name: null }],
    });
    c.send({ type: 'unregisterfunction', id: 'raw::fn' });
    await c.roundTrip();
    expect((await listFunctions(engine)).map((f) => f.function_id)).not.toContain('raw::fn');
  });

  it('registers and unregisters a trigger', async () => {
    engine = await startTestEngine();
    const c = await RawClient.connect(engine.bridgeUrl);
    const id = uid('trg');
    c.send({
      type: 'registertrigger',
      id,
      trigger_type: 'engine::functions-available',
      function_id: 'raw::on-fns',
      config: {},
      message_type: 'registertrigger',
    });
    const result = await c.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === id);
    expect(result.error).toBeUndefined();
    const t = await findTrigger(engine, (x) => x.id === id);
    expect(t).toMatchObject({ id, trigger_type: 'engine::functions-available', function_id: 'raw::on-fns', status: 'active' });
    c.send({ type: 'unregistertrigger', id, trigger_type: 'engine::functions-available' });
    await c.roundTrip();
    await waitFor(async () => (await findTrigger(engine, (x) => x.id === id)) === undefined, 1000, 'trigger removal');
  });

  it('accepts registerservice without closing the connection', async () => {
    engine = await startTestEngine();
    const c = await RawClient.connect(engine.bridgeUrl);
    c.send({ type: 'registerservice', id: 'svc', name: 'svc', description: 'a service' });
    await c.roundTrip();
    expect(c.isClosed).toBe(false);
    expect(c.ofType('error')).toEqual([]);
  });

  it('unregistertriggertype removes the type and does not close the connection', async () => {
    engine = await startTestEngine();
    const c = await RawClient.connect(engine.bridgeUrl);
    const type = uid('rawtype');
    c.send({ type: 'registertriggertype', id: type, description: 'raw type' });
    await c.roundTrip();
    const types1 = (await engine.invoke(EngineFunctions.LIST_TRIGGER_TYPES, {})) as { trigger_types: { id: string }[] };
    expect(types1.trigger_types.map((t) => t.id)).toContain(type);
    c.send({ type: 'unregistertriggertype', id: type, description: 'raw type' });
    await c.roundTrip();
    expect(c.isClosed).toBe(false);
    const types2 = (await engine.invoke(EngineFunctions.LIST_TRIGGER_TYPES, {})) as { trigger_types: { id: string }[] };
    expect(types2.trigger_types.map((t) => t.id)).not.toContain(type);
  });

  it('parks the triggers of a type withdrawn with unregistertriggertype and re-applies them when it is registered again', async () => {
    engine = await startTestEngine();
    const provider = await RawClient.connect(engine.bridgeUrl);
    const type = uid('withdrawn');
    provider.send({ type: 'registertriggertype', id: type, description: 'raw type' });
    await provider.roundTrip();
    const registrant = await RawClient.connect(engine.bridgeUrl);
    registrant.send({ type: 'registertrigger', id: 'trg-w', trigger_type: type, function_id: 'x::fn', config: { a: 1 } });
    const forwarded = await provider.waitFrame((f) => f.type === 'registertrigger' && f.id === 'trg-w');
    expect(forwarded).toMatchObject({ trigger_type: type, function_id: 'x::fn', config: { a: 1 } });
    provider.send({ type: 'triggerregistrationresult', id: 'trg-w', trigger_type: type, function_id: 'x::fn' });
    await waitFor(async () => (await findTrigger(engine, (t) => t.id === 'trg-w'))?.status === 'active', 1000, 'active');
    provider.send({ type: 'unregistertriggertype', id: type, description: 'raw type' });
    await provider.roundTrip();
    expect((await findTrigger(engine, (t) => t.id === 'trg-w'))?.status).toBe('parked');
    const from = provider.frames.length;
    provider.send({ type: 'registertriggertype', id: type, description: 'raw type' });
    await provider.waitFrame((f) => f.type === 'registertrigger' && f.id === 'trg-w', 2000, from);
  });

  it('accepts binary frames on /: telemetry prefixes are telemetry, other binary is decoded as JSON', async () => {
    engine = await startTestEngine();
    const c = await RawClient.connect(engine.bridgeUrl);
    const before = engine.stats().telemetryDroppedFrames;
    c.sendBinary(Buffer.from('LOGS{"resourceLogs":[]}'));
    c.sendBinary(Buffer.from(JSON.stringify({ type: 'ping' })));
    await c.waitFrame((f) => f.type === 'pong');
    expect(engine.stats().telemetryDroppedFrames).toBe(before + 1);
    expect(c.ofType('error')).toEqual([]);
  });

  it('forwards only the first of two results a buggy worker sends for one invocation', async () => {
    engine = await startTestEngine();
    const provider = await RawClient.connect(engine.bridgeUrl);
    provider.send({ type: 'registerfunction', id: 'dup::fn' });
    await provider.roundTrip();
    const caller = await RawClient.connect(engine.bridgeUrl);
    const result = caller.invoke('dup::fn', { x: 1 });
    const call = await provider.waitFrame((f) => f.type === 'invokefunction' && f.function_id === 'dup::fn');
    expect(call.invocation_id).toMatch(UUID_RE);
    expect(call.data).toEqual({ x: 1 });
    provider.send({ type: 'invocationresult', invocation_id: call.invocation_id, function_id: 'dup::fn', result: 'first' });
    provider.send({ type: 'invocationresult', invocation_id: call.invocation_id, function_id: 'dup::fn', result: 'second' });
    await provider.roundTrip(); // the engine has handled both results
    expect((await result).result).toBe('first');
    await caller.roundTrip(); // anything the engine forwarded before this pong has arrived
    expect(caller.ofType('invocationresult').map((f) => f.result)).toEqual(['first']);
  });

  it('answers function_not_found for an unknown function', async () => {
    engine = await startTestEngine();
    const c = await RawClient.connect(engine.bridgeUrl);
    const r = await c.invoke('nope::missing', { a: 1 });
    expect(r.function_id).toBe('nope::missing');
    expect(r.error?.code).toBe('function_not_found');
    expect(r.result).toBeUndefined();
  });

  it('answers an enqueue with enqueue_error when no queue module is loaded', async () => {
    engine = await startTestEngine();
    const c = await RawClient.connect(engine.bridgeUrl);
    await c.serve('raw::target', () => 'ran');
    const r = await c.invoke('raw::target', { a: 1 }, { action: { type: 'enqueue', queue: 'jobs' } });
    expect(r.error?.code).toBe('enqueue_error');
  });

  it('honours a per-call timeout_ms from the caller', async () => {
    engine = await startTestEngine();
    const provider = await RawClient.connect(engine.bridgeUrl);
    await provider.serve('raw::never', () => new Promise(() => {}));
    const caller = await RawClient.connect(engine.bridgeUrl);
    const started = Date.now();
    const r = await caller.invoke('raw::never', {}, { timeout_ms: 200 }, 3000);
    const elapsed = Date.now() - started;
    expect(r.error?.code).toBe('invocation_timeout');
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(2000);
    expect(engine.stats().pendingInvocations).toBe(0);
  });

  it('/otel accepts OTLP, MTRC and LOGS binary frames without creating a worker (counted and dropped: no module consumes them)', async () => {
    engine = await startTestEngine();
    const before = engine.stats();
    const otel = await RawClient.connect(engine.bridgeUrl, '/otel');
    otel.sendBinary(Buffer.from('OTLP{"resourceSpans":[]}'));
    otel.sendBinary(Buffer.from('MTRC{"resourceMetrics":[]}'));
    otel.sendBinary(Buffer.from('LOGS{"resourceLogs":[]}'));
    await waitFor(() => engine.stats().telemetryDroppedFrames === before.telemetryDroppedFrames + 3, 2000, 'three telemetry frames');
    expect(engine.stats().telemetryBytes).toBe(0);
    expect(engine.stats().workers).toBe(before.workers);
    expect(otel.frames).toEqual([]); // no workerregistered on /otel
    expect(await listWorkers(engine)).toEqual([]);
  });
});

describe.each(SDK_KINDS)('bridge with a %s worker', (kind: SdkKind) => {
  let engine: Engine;

  it('registers and unregisters a function', async () => {
    engine = await startTestEngine();
    const w = await startWorker(kind, engine);
    const ref = w.registerFunction('sdk::fn', (d) => d, { description: 'desc', metadata: { k: 1 } });
    await waitForFunction(engine, 'sdk::fn');
    expect((await listFunctions(engine)).find((f) => f.function_id === 'sdk::fn')).toMatchObject({ description: 'desc', metadata: { k: 1 } });
    ref.unregister();
    await waitForFunction(engine, 'sdk::fn', false);
  });

  it('registers and unregisters a trigger', async () => {
    engine = await startTestEngine();
    const w = await startWorker(kind, engine, (x) => x.registerFunction('sdk::on-fns', () => null));
    const t = w.registerTrigger({ type: 'engine::functions-available', function_id: 'sdk::on-fns', config: {} });
    const found = await waitFor(() => findTrigger(engine, (x) => x.function_id === 'sdk::on-fns'), 2000, 'trigger listed');
    expect(found).toMatchObject({ trigger_type: 'engine::functions-available', status: 'active' });
    expect(found.id).toMatch(UUID_RE);
    t.unregister();
    await waitFor(async () => (await findTrigger(engine, (x) => x.function_id === 'sdk::on-fns')) === undefined, 2000, 'trigger removed');
  });

  it('forwards triggers of a worker-provided type to the provider and reports its rejection', async () => {
    engine = await startTestEngine();
    const type = uid('custom');
    const seen: { id: string; function_id: string; config: unknown }[] = [];
    await startWorker(kind, engine, (p) =>
      p.registerTriggerType(
        { id: type, description: 'custom type' },
        {
          registerTrigger: (t) => {
            seen.push({ id: t.id, function_id: t.function_id, config: t.config });
            if ((t.config as { reject?: boolean }).reject) throw new Error('config rejected by provider');
          },
          unregisterTrigger: () => {},
        },
      ),
    );
    const registrant = await RawClient.connect(engine.bridgeUrl);
    registrant.send({ type: 'registertrigger', id: 'trg-ok', trigger_type: type, function_id: 'x::target', config: { every: 5 } });
    const ok = await registrant.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === 'trg-ok');
    expect(ok.error).toBeUndefined();
    expect(seen).toEqual([{ id: 'trg-ok', function_id: 'x::target', config: { every: 5 } }]);
    expect(await findTrigger(engine, (t) => t.id === 'trg-ok')).toMatchObject({ status: 'active', trigger_type: type });

    registrant.send({ type: 'registertrigger', id: 'trg-bad', trigger_type: type, function_id: 'x::target', config: { reject: true } });
    const bad = await registrant.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === 'trg-bad');
    expect(bad.error).toMatchObject({ code: 'trigger_registration_failed', message: expect.stringContaining('config rejected by provider') });
    expect(await findTrigger(engine, (t) => t.id === 'trg-bad')).toBeUndefined();

    // A Flint SDK registrant sees the rejection on `ready`.
    const flint = connectWorker('flint', engine.bridgeUrl).native as FlintWorker;
    const rejected = flint.registerTrigger({ type, function_id: 'x::target', config: { reject: true } });
    const r = await outcome(within(rejected.ready, 3000, 'ready'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('trigger_registration_failed');
    const accepted = flint.registerTrigger({ type, function_id: 'x::target', config: { n: 1 } });
    expect(await within(accepted.ready, 3000, 'ready')).toEqual({ parked: false });
  });

  it('calls a function on another worker synchronously and returns its result', async () => {
    engine = await startTestEngine();
    await startWorker(kind, engine, (w) => w.registerFunction('math::add', (d: { a: number; b: number }) => ({ sum: d.a + d.b })));
    for (const callerKind of SDK_KINDS) {
      const caller = await startWorker(callerKind, engine);
      expect(await caller.trigger({ function_id: 'math::add', payload: { a: 2, b: 40 } })).toEqual({ sum: 42 });
    }
  });

  it('gives invocation_failed with the handler message when the handler throws', async () => {
    engine = await startTestEngine();
    await startWorker(kind, engine, (w) =>
      w.registerFunction('boom::fn', () => {
        throw new Error('kaboom 42');
      }),
    );
    const raw = await RawClient.connect(engine.bridgeUrl);
    const r = await raw.invoke('boom::fn', {});
    expect(r.error).toMatchObject({ code: 'invocation_failed', message: 'kaboom 42' });
    const caller = await startWorker(kind, engine);
    const o = await outcome(caller.trigger({ function_id: 'boom::fn', payload: {} }));
    expect(o.ok).toBe(false);
    if (!o.ok) {
      expect(o.error.code).toBe('invocation_failed');
      expect(o.error.message).toContain('kaboom 42');
    }
  });

  it('returns at once from a void invocation while the handler runs', async () => {
    engine = await startTestEngine();
    const gate = deferred();
    const received: unknown[] = [];
    const finished: unknown[] = [];
    await startWorker(kind, engine, (w) =>
      w.registerFunction('side::effect', async (d: unknown) => {
        received.push(d);
        await gate.promise;
        finished.push(d);
        return 'ignored';
      }),
    );
    const caller = await startWorker(kind, engine);
    const value = await within(caller.trigger({ function_id: 'side::effect', payload: { n: 7 }, action: { type: 'void' } }), 1000, 'void trigger');
    expect(value).toBeUndefined();
    await waitFor(() => received.length === 1, 2000, 'the handler to run');
    expect(received[0]).toEqual({ n: 7 });
    expect(finished).toEqual([]);
    gate.resolve();
    await waitFor(() => finished.length === 1, 2000, 'the handler to finish');
  });

  it('answers enqueue with enqueue_error (no queue module)', async () => {
    engine = await startTestEngine();
    await startWorker(kind, engine, (w) => w.registerFunction('q::fn', () => 'x'));
    const caller = await startWorker(kind, engine);
    const o = await outcome(caller.trigger({ function_id: 'q::fn', payload: {}, action: { type: 'enqueue', queue: 'jobs' } }));
    expect(o.ok).toBe(false);
    if (!o.ok) expect(o.error.code).toBe('enqueue_error');
  });

  it('sends exactly one invocationresult per sync call, also after an engine time-out', async () => {
    engine = await startTestEngine();
    const gate = deferred();
    let lateDone = false;
    await startWorker(kind, engine, (w) => {
      w.registerFunction('echo::fn', (d: unknown) => ({ echoed: d }));
      w.registerFunction('fail::fn', () => {
        throw new Error('nope');
      });
      w.registerFunction('late::fn', async () => {
        await gate.promise;
        lateDone = true;
        return 'too late';
      });
    });
    const raw = await RawClient.connect(engine.bridgeUrl);
    const calls = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => raw.invoke('echo::fn', { i })),
      raw.invoke('fail::fn', {}),
      raw.invoke('nope::unknown', {}),
    ]);
    expect(calls.slice(0, 20).map((r) => r.result)).toEqual(Array.from({ length: 20 }, (_, i) => ({ echoed: { i } })));
    const timedOut = await raw.invoke('late::fn', {}, { timeout_ms: 100 });
    expect(timedOut.error?.code).toBe('invocation_timeout');
    gate.resolve();
    await waitFor(() => lateDone, 2000, 'the late handler to return');
    // The late result travels the same worker socket before this call's result: once this arrives, a duplicate would have too.
    const sentinel = await raw.invoke('echo::fn', 'last');
    expect(sentinel.result).toEqual({ echoed: 'last' });
    const results = raw.ofType('invocationresult');
    const perId = new Map<string, number>();
    for (const r of results) perId.set(r.invocation_id, (perId.get(r.invocation_id) ?? 0) + 1);
    expect(results.length).toBe(20 + 2 + 1 + 1);
    expect([...perId.values()].every((n) => n === 1)).toBe(true);
  });

  it('fails an in-flight call with invocation_stopped when the executing worker disconnects', async () => {
    engine = await startTestEngine();
    const started = deferred();
    const callee = await startWorker(kind, engine, (w) =>
      w.registerFunction('hang::fn', () => {
        started.resolve();
        return new Promise(() => {});
      }),
    );
    const raw = await RawClient.connect(engine.bridgeUrl);
    const pending = raw.invoke('hang::fn', {}, {}, 3000);
    await within(started.promise, 2000, 'handler start');
    await callee.shutdown();
    const r = await pending;
    expect(r.error?.code).toBe('invocation_stopped');
  });

  it('passes null to the handler when the frame has no data field', async () => {
    engine = await startTestEngine();
    const received: unknown[] = [];
    await startWorker(kind, engine, (w) =>
      w.registerFunction('null::fn', (d: unknown) => {
        received.push(d);
        return { got: d === null ? 'null' : typeof d };
      }),
    );
    const raw = await RawClient.connect(engine.bridgeUrl);
    const r = await raw.invoke('null::fn'); // no `data` key at all
    expect(r.error).toBeUndefined();
    expect(r.result).toEqual({ got: 'null' });
    expect(received).toEqual([null]);
  });

  it('leaves `result` out of the answer when the handler answers null or nothing (as upstream does)', async () => {
    engine = await startTestEngine();
    await startWorker(kind, engine, (w) => {
      w.registerFunction('answers::null', () => null);
      w.registerFunction('answers::nothing', () => undefined);
      w.registerFunction('answers::zero', () => 0);
    });
    const raw = await RawClient.connect(engine.bridgeUrl);
    for (const id of ['answers::null', 'answers::nothing']) {
      const r = await raw.invoke(id);
      expect(r.error).toBeUndefined();
      expect(Object.keys(r)).not.toContain('result');
    }
    expect((await raw.invoke('answers::zero')).result).toBe(0);
    // Each SDK's caller: iii-sdk gets undefined, @flint/sdk null (as documented).
    const caller = await startWorker(kind, engine);
    const missing = kind === 'iii' ? undefined : null;
    expect(await caller.trigger({ function_id: 'answers::null', payload: {} })).toBe(missing);
    expect(await caller.trigger({ function_id: 'answers::nothing', payload: {} })).toBe(missing);
  });

  it('carries traceparent and baggage to the handler and back on the result', async () => {
    engine = await startTestEngine();
    const seen: { traceparent?: string; baggage?: string }[] = [];
    await startWorker(kind, engine, (w) =>
      w.registerFunction('trace::fn', (_d: unknown, ctx) => {
        seen.push({ traceparent: ctx?.traceparent, baggage: ctx?.baggage });
        return 'ok';
      }),
    );
    const raw = await RawClient.connect(engine.bridgeUrl);
    const r = await raw.invoke('trace::fn', {}, { traceparent: TRACEPARENT, baggage: BAGGAGE });
    expect(r.result).toBe('ok');
    expect(r.traceparent).toBe(TRACEPARENT);
    expect(r.baggage).toBe(BAGGAGE);
    expect(seen).toHaveLength(1);
    // iii-sdk handlers do not see the raw context (only through OTel); Flint's HandlerContext carries it.
    if (kind === 'flint') expect(seen[0]).toEqual({ traceparent: TRACEPARENT, baggage: BAGGAGE });
  });

  it('fails a slow call with invocation_timeout after the configured invocation_timeout_ms', async () => {
    engine = await startTestEngine({ invocation_timeout_ms: 300 });
    const gate = deferred();
    await startWorker(kind, engine, (w) => w.registerFunction('slow::fn', () => gate.promise.then(() => 'done')));
    const caller = await startWorker(kind, engine);
    const startedAt = Date.now();
    const o = await outcome(caller.trigger({ function_id: 'slow::fn', payload: {} }));
    const elapsed = Date.now() - startedAt;
    gate.resolve();
    expect(o.ok).toBe(false);
    if (!o.ok) expect(o.error.code).toBe('invocation_timeout');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3000);
  });
});

describe('bridge with the Flint SDK only', () => {
  let engine: Engine;

  it('forwards the trace context of the current invocation on a nested trigger()', async () => {
    engine = await startTestEngine();
    const inner: { traceparent?: string; baggage?: string }[] = [];
    await startWorker('flint', engine, (w) =>
      w.registerFunction('hop::inner', (_d: unknown, ctx) => {
        inner.push({ traceparent: ctx?.traceparent, baggage: ctx?.baggage });
        return 'inner-ok';
      }),
    );
    const outerWorker = await startWorker('flint', engine);
    outerWorker.registerFunction('hop::outer', async () => ({ inner: await outerWorker.trigger({ function_id: 'hop::inner', payload: {} }) }));
    await waitForFunction(engine, 'hop::outer');
    const raw = await RawClient.connect(engine.bridgeUrl);
    const r = await raw.invoke('hop::outer', {}, { traceparent: TRACEPARENT, baggage: BAGGAGE });
    expect(r.result).toEqual({ inner: 'inner-ok' });
    expect(inner).toEqual([{ traceparent: TRACEPARENT, baggage: BAGGAGE }]);
    expect(r.traceparent).toBe(TRACEPARENT);
    expect(r.baggage).toBe(BAGGAGE);
  });

  it('delivers function ids and trace context that need escaping in JSON exactly as they were sent', async () => {
    engine = await startTestEngine();
    const id = 'esc::"quoted"\\back😀é';
    // Not W3C: without a tracer the engine passes the caller's context on as it is.
    const traceparent = 'tp "with" \\ and \u0001 and \ud800 alone';
    const baggage = 'k="v\\"\n';
    const seen: { function_id?: string; traceparent?: string; baggage?: string }[] = [];
    await startWorker('flint', engine, (w) =>
      w.registerFunction(id, (_d: unknown, ctx) => {
        seen.push({ function_id: ctx?.function_id, traceparent: ctx?.traceparent, baggage: ctx?.baggage });
        return 'ok';
      }),
    );
    const raw = await RawClient.connect(engine.bridgeUrl);
    const r = await raw.invoke(id, {}, { traceparent, baggage });
    expect(r.result).toBe('ok');
    expect(seen).toEqual([{ function_id: id, traceparent, baggage }]);
  });

  it('has the engine honour the per-call timeoutMs of trigger()', async () => {
    engine = await startTestEngine(); // engine default time-out 30 s
    const gate = deferred();
    await startWorker('flint', engine, (w) => w.registerFunction('slow::flint', () => gate.promise.then(() => 'done')));
    const caller = await startWorker('flint', engine);
    const o = await outcome(caller.trigger({ function_id: 'slow::flint', payload: {}, timeoutMs: 300 }));
    expect(o.ok).toBe(false);
    if (!o.ok) {
      expect(o.error.code).toBe('invocation_timeout');
    }
    // The engine expired its own leg too (it got timeout_ms), rather than waiting for its 30 s default.
    await waitFor(() => engine.stats().pendingInvocations === 0, 1000, 'the engine to expire the call');
    gate.resolve();
  });

  it('surfaces engine errors as FlintInvocationError with a code', async () => {
    engine = await startTestEngine();
    const caller = await startWorker('flint', engine);
    const err = await caller.trigger({ function_id: 'missing::fn', payload: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FlintInvocationError);
    expect((err as FlintInvocationError).code).toBe('function_not_found');
  });
});

describe('bridge with iii-sdk only', () => {
  let engine: Engine;

  it('accepts registerservice from iii-sdk and keeps the worker working', async () => {
    engine = await startTestEngine();
    const w = await startWorker('iii', engine, (x) => {
      (x.native as ISdk).registerService({ id: 'svc::one', description: 'a service' });
      x.registerFunction('svc::one::fn', () => 'svc-ok');
    });
    const caller = await startWorker('iii', engine);
    expect(await caller.trigger({ function_id: 'svc::one::fn', payload: {} })).toBe('svc-ok');
    expect(isListed(engine, 'svc::one::fn')).toBe(true);
    expect(w.kind).toBe('iii');
  });

  // Last in the file: OTel in iii-sdk is process-global.
  it('with OTel enabled, sends telemetry to /otel without a phantom worker', async () => {
    engine = await startTestEngine();
    const before = engine.stats().telemetryDroppedFrames;
    const w = connectWorker('iii', engine.bridgeUrl, { otel: true });
    w.registerFunction('otel::fn', () => 'ok');
    const row = await whenAnnounced(engine, w);
    new IiiLogger().info('hello from the otel test', { n: 1 });
    await waitFor(() => engine.stats().telemetryDroppedFrames > before, 3000, 'a telemetry frame');
    expect(await w.trigger({ function_id: 'otel::fn', payload: {} })).toBe('ok');
    expect(engine.stats().telemetryBytes).toBe(0); // no module consumes telemetry: nothing is kept
    const workers = await listWorkers(engine);
    expect(workers.map((x) => x.id)).toEqual([row.id]);
    // A phantom /otel "worker" would be hidden from the listing (no metadata) but counted here.
    expect(engine.stats().workers).toBe(1);
    await w.shutdown();
    await waitFor(() => engine.stats().workers === 0, 2000, 'the iii worker to leave');
  });
});
