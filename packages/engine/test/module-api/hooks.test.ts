/**
 * Module API: `ctx.addInvocationHooks` sees every invocation (worker → worker, module calls, HTTP
 * requests) and every trigger firing (HTTP routes, state triggers skipped by their condition), with
 * caller, trigger and trace context; removing the hooks stops the events.
 */
import type { Engine, InvocationEnd, InvocationEvent } from '@flint/engine';
import { FlintError } from '@flint/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { listWorkers, startWorker } from '../support/harness.js';
import { outcome, waitFor } from '../support/util.js';
import { HTTP, fakeModule, listenerUrl, startWithModules, traceparent } from './fake-module.js';

interface Seen {
  phase: 'start' | 'end' | 'error';
  event: InvocationEvent;
  end?: InvocationEnd;
}

let engine: Engine;
let seen: Seen[];
let changes: unknown[];
let removeHooks: () => void;
let invokeFromModule: (functionId: string, data: unknown) => Promise<unknown>;

beforeEach(async () => {
  seen = [];
  changes = [];
  const def = fakeModule('test-fake', {
    start: (ctx) => {
      removeHooks = ctx.addInvocationHooks({
        onStart: (event) => void seen.push({ phase: 'start', event }),
        onEnd: (event, end) => void seen.push({ phase: 'end', event, end }),
        onError: (event, end) => void seen.push({ phase: 'error', event, end }),
      });
      invokeFromModule = (id, data) => ctx.invoke(id, data);
      ctx.registerFunction({ id: 'fake::page' }, () => ({ status_code: 200, body: { ok: true } }));
      ctx.registerFunction({ id: 'fake::cond' }, () => false);
      ctx.registerFunction({ id: 'fake::on-change' }, (data) => void changes.push(data));
      ctx.registerTrigger({ id: 'page-route', type: 'http', function_id: 'fake::page', config: { api_path: '/page', http_method: 'GET' } });
      ctx.registerTrigger({ id: 'state-skip', type: 'state', function_id: 'fake::on-change', config: { scope: 'skip', condition_function_id: 'fake::cond' } });
      ctx.registerTrigger({ id: 'state-run', type: 'state', function_id: 'fake::on-change', config: { scope: 'run' } });
    },
  });
  engine = await startWithModules([def], [HTTP, { name: 'flint-state' }, { name: 'test-fake' }]);
});
afterEach(cleanup);

const of = (functionId: string, kind: InvocationEvent['kind'] = 'invocation') => seen.filter((s) => s.event.functionId === functionId && s.event.kind === kind);

/** Two flint workers: `b` serves b::double and b::fail, `a` serves a::call (calls b's function named in its input). */
async function twoWorkers() {
  await startWorker('flint', engine, (w) => {
    w.registerFunction('b::double', (data: { n: number }) => data.n * 2);
    w.registerFunction('b::fail', () => {
      throw new FlintError('app_refused', 'b says no');
    });
  });
  const a = await startWorker('flint', engine, (w) => {
    w.registerFunction('a::call', (data: { target: string; n: number }) => w.trigger({ function_id: data.target, payload: { n: data.n } }));
  });
  const aId = (await listWorkers(engine)).find((w) => w.name === a.name)?.id;
  expect(aId).toBeTypeOf('string');
  return { aId: aId as string };
}

describe('invocation hooks', () => {
  it('see a worker → worker invocation with the calling worker as caller and its trace context', async () => {
    const { aId } = await twoWorkers();
    const tp = traceparent();
    expect(await engine.invoke('a::call', { target: 'b::double', n: 21 }, { traceparent: tp, baggage: 'user=1' })).toBe(42);

    const inner = of('b::double');
    expect(inner.map((s) => s.phase)).toEqual(['start', 'end']);
    // Worker a's call carries the same trace, under a's own span for its invocation (@flint/sdk records one).
    const sameTrace = expect.stringMatching(new RegExp(`^00-${tp.split('-')[1]}-[0-9a-f]{16}-01$`));
    expect(inner[0]?.event).toMatchObject({
      kind: 'invocation',
      functionId: 'b::double',
      trigger: undefined,
      caller: aId,
      traceparent: sameTrace,
      baggage: 'user=1',
      startedAt: expect.any(Number),
      workerName: expect.any(String),
    });
    expect(inner[1]?.event).toBe(inner[0]?.event);
    expect(inner[1]?.end?.error).toBeUndefined();
    expect(inner[1]?.end?.durationMs).toBeGreaterThanOrEqual(0);
    // The outer call came from the embedding engine.invoke: no caller.
    const outer = of('a::call');
    expect(outer.map((s) => [s.phase, s.event.caller, s.event.traceparent])).toEqual([
      ['start', undefined, tp],
      ['end', undefined, tp],
    ]);
    // The outer call started before and ended after the inner one.
    expect(seen.filter((s) => !s.event.functionId.startsWith('engine::')).map((s) => `${s.phase} ${s.event.functionId}`)).toEqual([
      'start a::call',
      'start b::double',
      'end b::double',
      'end a::call',
    ]);
  });

  it('report a failed invocation through onError with its code, and name a module caller', async () => {
    await twoWorkers();
    const result = await outcome(invokeFromModule('b::fail', {}));
    expect(result).toEqual({ ok: false, error: { code: 'app_refused', message: 'b says no' } });
    const failed = of('b::fail');
    expect(failed.map((s) => s.phase)).toEqual(['start', 'error']);
    expect(failed[0]?.event.caller).toBe('test-fake');
    expect(failed[1]?.end?.error).toMatchObject({ code: 'app_refused', message: 'b says no' });
    // A call to nothing at all fails too, with its own code.
    await outcome(invokeFromModule('nobody::home', {}));
    expect(of('nobody::home').map((s) => [s.phase, s.end?.error?.code])).toEqual([
      ['start', undefined],
      ['error', 'function_not_found'],
    ]);
  });

  it("see an HTTP request's trigger firing and its invocation, both carrying the http trigger", async () => {
    const res = await fetch(`${listenerUrl(engine, 'http')}/page`);
    expect(await res.json()).toEqual({ ok: true });
    await waitFor(() => of('fake::page', 'trigger').length === 2, 1000, 'the firing to end');
    const origin = { id: 'page-route', type: 'http' };
    expect(of('fake::page', 'trigger').map((s) => [s.phase, s.event.trigger, s.event.caller, s.end?.skipped, s.end?.error])).toEqual([
      ['start', origin, 'flint-http', undefined, undefined],
      ['end', origin, 'flint-http', undefined, undefined],
    ]);
    expect(of('fake::page').map((s) => [s.phase, s.event.trigger, s.event.caller])).toEqual([
      ['start', origin, 'flint-http'],
      ['end', origin, 'flint-http'],
    ]);
  });

  it('end a state trigger firing skipped by its condition with skipped: true (and a passing one without)', async () => {
    await engine.invoke('state::set', { scope: 'skip', key: 'k', value: 1 });
    await engine.invoke('state::set', { scope: 'run', key: 'k', value: 2 });
    await waitFor(() => of('fake::on-change', 'trigger').filter((s) => s.phase === 'end').length === 2, 1000, 'both firings to end');
    const ends = of('fake::on-change', 'trigger').filter((s) => s.phase === 'end');
    expect(ends.map((s) => [s.event.trigger?.id, s.event.trigger?.type, s.event.caller, s.end?.skipped === true])).toEqual([
      ['state-skip', 'state', 'flint-state', true],
      ['state-run', 'state', 'flint-state', false],
    ]);
    // The condition ran as an invocation made for the trigger; the skipped trigger's function never ran.
    expect(of('fake::cond').map((s) => [s.phase, s.event.trigger?.id, s.event.trigger?.type, s.event.caller])).toEqual([
      ['start', 'state-skip', 'state', 'flint-state'],
      ['end', 'state-skip', 'state', 'flint-state'],
    ]);
    expect(of('fake::on-change').map((s) => [s.phase, s.event.trigger?.id])).toEqual([
      ['start', 'state-run'],
      ['end', 'state-run'],
    ]);
    expect(changes).toEqual([expect.objectContaining({ scope: 'run', key: 'k', new_value: 2 })]);
  });

  // KNOWN SRC BUG (reported, not fixed here): runCondition (src/lib/triggers.ts) passes the whole firing trigger as
  // InvokeOptions.trigger, so a condition's invocation event carries function_id, condition_function_id, scope, key…
  // instead of the TriggerOrigin {id, type} the function's own invocation carries. Remove `.fails` once fixed.
  it("a condition's invocation carries only the trigger origin {id, type}", async () => {
    await engine.invoke('state::set', { scope: 'skip', key: 'k', value: 1 });
    await waitFor(() => of('fake::cond').length === 2, 1000, 'the condition to run');
    expect(of('fake::cond')[0]?.event.trigger).toEqual({ id: 'state-skip', type: 'state' });
  });

  it('stop seeing events once removed', async () => {
    await engine.invoke('fake::cond', {});
    expect(of('fake::cond')).toHaveLength(2);
    removeHooks();
    await engine.invoke('fake::cond', {});
    await fetch(`${listenerUrl(engine, 'http')}/page`);
    await engine.invoke('state::set', { scope: 'skip', key: 'k', value: 3 });
    expect(seen).toHaveLength(2);
  });
});
