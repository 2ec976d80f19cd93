/**
 * Module API: `ctx.traceInvocations` opens a scope for every invocation and trigger firing; the scope's
 * context is what the call carries on (a worker's handler sees it, an in-process handler too), a
 * firing's calls carry the firing's own (firing.trace), every scope is ended once with the outcome,
 * one module traces at a time, and a tracer that throws leaves calls untraced but working.
 */
import type { Engine, InvocationEnd, InvocationEvent, ModuleContext } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startWorker } from '../support/harness.js';
import { waitFor } from '../support/util.js';
import { HTTP, contextModule, fakeModule, listenerUrl, startWithModules } from './fake-module.js';

afterEach(cleanup);

interface Opened {
  event: InvocationEvent;
  traceparent: string;
  ended?: InvocationEnd;
}

/** A tracer that gives each scope a traceparent naming it by a counter. */
function countingTracer(opened: Opened[]) {
  return {
    start(event: InvocationEvent) {
      const n = (opened.length + 1).toString(16).padStart(16, '0');
      const entry: Opened = { event, traceparent: `00-${'a'.repeat(32)}-${n}-01` };
      opened.push(entry);
      return {
        traceparent: entry.traceparent,
        baggage: event.baggage,
        end: (_event: InvocationEvent, end: InvocationEnd) => {
          if (entry.ended) throw new Error('ended twice');
          entry.ended = end;
        },
      };
    },
  };
}

describe('ctx.traceInvocations', () => {
  it("carries the scope's context to the provider and gives firings their own for their calls", async () => {
    const opened: Opened[] = [];
    const seenByWorker: (string | undefined)[] = [];
    const def = fakeModule('test-tracer', {
      start: (ctx) => {
        ctx.traceInvocations(countingTracer(opened));
        ctx.registerFunction({ id: 'fake::inner' }, (_data, call) => call.traceparent);
      },
    });
    const engine: Engine = await startWithModules([def], [HTTP, { name: 'test-tracer' }]);
    await startWorker('flint', engine, (w) => {
      w.registerFunction('w::page', (_input, ctx) => {
        seenByWorker.push(ctx?.traceparent);
        return { status_code: 200, body: 'ok' };
      });
      w.registerTrigger({ type: 'http', function_id: 'w::page', config: { api_path: '/p', http_method: 'GET' } });
    });
    // An in-process handler sees its own scope's context.
    const inner = (await engine.invoke('fake::inner', {})) as string;
    expect(inner).toBe(opened.find((o) => o.event.functionId === 'fake::inner')?.traceparent);

    opened.length = 0;
    const res = await fetch(`${listenerUrl(engine, 'http')}/p`);
    expect(res.status).toBe(200);
    const firing = opened.find((o) => o.event.kind === 'trigger');
    const call = opened.find((o) => o.event.kind === 'invocation' && o.event.functionId === 'w::page');
    expect(firing?.event).toMatchObject({ name: 'GET /p', attributes: { 'http.route': '/p', 'http.request.method': 'GET' } });
    // The handler's invocation started under the firing's scope, and the worker got the invocation's.
    expect(call?.event.traceparent).toBe(firing?.traceparent);
    expect(call?.event.workerName).toEqual(expect.any(String));
    expect(seenByWorker[0]?.split('-')[1]).toBe('a'.repeat(32));
    expect(call?.ended?.error).toBeUndefined();
    // The firing ends once the answer is out.
    await waitFor(() => firing?.ended !== undefined);
    expect(firing?.ended?.attributes).toMatchObject({ 'http.response.status_code': 200 });
  });

  it('one module traces at a time; a tracer that throws leaves calls working, untraced', async () => {
    const first = contextModule('test-first');
    const second = contextModule('test-second');
    const engine = await startWithModules([first.def, second.def], [{ name: 'test-first' }, { name: 'test-second' }]);
    const remove = first.ctx().traceInvocations({
      start: () => {
        throw new Error('tracer broke');
      },
    });
    expect(() => second.ctx().traceInvocations({ start: () => undefined })).toThrow(/another module already does/);
    const ctx: ModuleContext = second.ctx();
    ctx.registerFunction({ id: 'fake::echo' }, (data) => data);
    expect(await engine.invoke('fake::echo', { a: 1 })).toEqual({ a: 1 });
    remove();
    // Released: the other module may trace now.
    expect(() => second.ctx().traceInvocations({ start: () => undefined })).not.toThrow();
  });
});
