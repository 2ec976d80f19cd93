/**
 * Module API: the queue role. Without a module providing it, `ctx.enqueue` and a worker's
 * `TriggerAction.Enqueue` call fail with `enqueue_error`; with `ctx.provideEnqueue(handler)` both
 * reach the handler (queue, function id, payload, trace) and the worker gets `{messageReceiptId}`.
 */
import { type EnqueueHandler, type ModuleContext, createEngine } from '@flint/engine';
import { FlintError } from '@flint/protocol';
import { TriggerAction } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { SDK_KINDS, startWorker } from '../support/harness.js';
import { outcome } from '../support/util.js';
import { contextModule, fakeModule, startWithModules, traceparent } from './fake-module.js';

afterEach(cleanup);

interface Enqueued {
  queue: string;
  functionId: string;
  data: unknown;
  trace: { traceparent?: string; baggage?: string };
}

/** A module taking the queue role; its handler records each call and answers `receipt-<n>` (or throws for queue `broken`). */
function queueModule(seen: Enqueued[], name = 'test-queue') {
  let ctx: ModuleContext | undefined;
  const handler: EnqueueHandler = async (queue, functionId, data, trace) => {
    if (queue === 'broken') throw new Error('the queue is on fire');
    seen.push({ queue, functionId, data, trace });
    return `receipt-${seen.length}`;
  };
  const def = fakeModule(name, {
    start: (c) => {
      ctx = c;
      c.provideEnqueue(handler);
    },
  });
  return { def, ctx: () => ctx as ModuleContext };
}

describe('without a queue provider', () => {
  it('ctx.enqueue rejects with enqueue_error', async () => {
    const fake = contextModule();
    await startWithModules([fake.def], [{ name: 'test-fake' }]);
    const error = await fake
      .ctx()
      .enqueue('jobs', 'app::job', { n: 1 })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(FlintError);
    expect((error as FlintError).code).toBe('enqueue_error');
  });

  it.each(SDK_KINDS)('a %s worker TriggerAction.Enqueue call gets enqueue_error', async (kind) => {
    const engine = await startWithModules([], []);
    const worker = await startWorker(kind, engine);
    const result = await outcome(worker.trigger({ function_id: 'app::job', payload: { n: 1 }, action: { type: 'enqueue', queue: 'jobs' }, timeoutMs: 3000 }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe('enqueue_error');
  });
});

describe('with ctx.provideEnqueue', () => {
  it("ctx.enqueue from another module reaches the handler with queue, function id, payload and trace, and resolves with the handler's receipt", async () => {
    const seen: Enqueued[] = [];
    const queue = queueModule(seen);
    const fake = contextModule();
    await startWithModules([queue.def, fake.def], [{ name: 'test-queue' }, { name: 'test-fake' }]);
    const tp = traceparent();
    expect(await fake.ctx().enqueue('jobs', 'app::job', { n: 1 }, { traceparent: tp, baggage: 'k=v' })).toBe('receipt-1');
    expect(await fake.ctx().enqueue('other', 'app::job2', [1, 2])).toBe('receipt-2');
    expect(seen).toEqual([
      { queue: 'jobs', functionId: 'app::job', data: { n: 1 }, trace: { traceparent: tp, baggage: 'k=v' } },
      { queue: 'other', functionId: 'app::job2', data: [1, 2], trace: {} },
    ]);
  });

  it('a handler failure becomes enqueue_error carrying its message', async () => {
    const seen: Enqueued[] = [];
    const queue = queueModule(seen);
    await startWithModules([queue.def], [{ name: 'test-queue' }]);
    const result = await outcome(queue.ctx().enqueue('broken', 'app::job', {}));
    expect(result).toEqual({ ok: false, error: { code: 'enqueue_error', message: 'the queue is on fire' } });
  });

  it.each(SDK_KINDS)('a %s worker TriggerAction.Enqueue call reaches the handler and gets {messageReceiptId}', async (kind) => {
    const seen: Enqueued[] = [];
    const queue = queueModule(seen);
    const engine = await startWithModules([queue.def], [{ name: 'test-queue' }]);
    const worker = await startWorker(kind, engine);
    const result = await worker.trigger({ function_id: 'app::job', payload: { from: kind }, action: { type: 'enqueue', queue: 'jobs' }, timeoutMs: 3000 });
    expect(result).toEqual({ messageReceiptId: 'receipt-1' });
    expect(seen).toEqual([{ queue: 'jobs', functionId: 'app::job', data: { from: kind }, trace: { traceparent: undefined, baggage: undefined } }]);
  });

  it("passes the worker's traceparent (a flint worker enqueueing inside an invocation carrying one)", async () => {
    const seen: Enqueued[] = [];
    const queue = queueModule(seen);
    const engine = await startWithModules([queue.def], [{ name: 'test-queue' }]);
    await startWorker('flint', engine, (w) => {
      w.registerFunction('w::kick', (data: { n: number }) =>
        w.trigger({ function_id: 'app::job', payload: { n: data.n }, action: TriggerAction.Enqueue({ queue: 'jobs' }) }),
      );
    });
    const tp = traceparent();
    expect(await engine.invoke('w::kick', { n: 7 }, { traceparent: tp })).toEqual({ messageReceiptId: 'receipt-1' });
    // The same trace, under the worker's own span for w::kick (@flint/sdk records one).
    const sameTrace = expect.stringMatching(new RegExp(`^00-${tp.split('-')[1]}-[0-9a-f]{16}-01$`));
    expect(seen).toEqual([{ queue: 'jobs', functionId: 'app::job', data: { n: 7 }, trace: { traceparent: sameTrace, baggage: undefined } }]);
  });

  it('a second module claiming the queue role makes start-up fail, naming both modules; the engine is stopped', async () => {
    const first = queueModule([], 'test-queue');
    const second = queueModule([], 'test-queue-2');
    const engine = createEngine({
      modules: [first.def, second.def],
      config: { bridge: { port: 0 }, log: { level: 'silent' }, modules: [{ name: 'test-queue' }, { name: 'test-queue-2' }] },
    });
    track(() => engine.stop());
    const result = await outcome(engine.start());
    expect(result).toEqual({
      ok: false,
      error: { code: 'internal_error', message: 'module test-queue-2 cannot take the queue role: module test-queue already has it' },
    });
    // The engine shut down: its bridge no longer accepts connections.
    const res = await fetch(engine.bridgeUrl.replace('ws:', 'http:')).then(
      () => 'answered',
      (err: { cause?: { code?: string } }) => err.cause?.code,
    );
    expect(res).toBe('ECONNREFUSED');
  });
});
