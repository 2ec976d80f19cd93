/**
 * Void (fire-and-forget) calls from a worker: they never hold a slot of the caller's
 * `max_invocations_per_worker` cap (so a caller's void calls to a slow function cannot get its real
 * calls refused), invocation hooks still see each one start and end with its answer, and those the
 * engine refuses (the caller at its cap, no provider) are never silent: counted in
 * `engine.stats().droppedVoidCalls` and logged at warn, one line and then one summary per second.
 */
import type { InvocationEnd, InvocationEvent } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeModule, startWithModules } from '../module-api/fake-module.js';
import { cleanup } from '../support/cleanup.js';
import { LEVEL, captureLog } from '../support/log-capture.js';
import { type Frame, RawClient } from '../support/raw-client.js';
import { sleep, waitFor } from '../support/util.js';

afterEach(cleanup);

const CAP = 5;

/** An engine with a small cap, the log captured, a hook module; a raw worker serving `slow::held` (answered on demand) and `fast::echo`. */
async function setup() {
  const { logger, records: logs } = captureLog('info');
  const hooks: { phase: 'start' | 'end' | 'error'; event: InvocationEvent; end?: InvocationEnd }[] = [];
  const def = fakeModule('test-hooks', {
    start: (ctx) => {
      ctx.addInvocationHooks({
        onStart: (event) => void hooks.push({ phase: 'start', event }),
        onEnd: (event, end) => void hooks.push({ phase: 'end', event, end }),
        onError: (event, end) => void hooks.push({ phase: 'error', event, end }),
      });
    },
  });
  const engine = await startWithModules([def], [{ name: 'test-hooks' }], { max_invocations_per_worker: CAP }, { logger });
  const provider = await RawClient.connect(engine.bridgeUrl);
  await provider.registered();
  const held: Frame[] = [];
  provider.onFrame = (frame) => {
    if (frame.type === 'invokefunction' && frame.function_id === 'slow::held') held.push(frame);
  };
  provider.send({ type: 'registerfunction', id: 'slow::held' });
  await provider.serve('fast::echo', (data) => data);
  const answerHeld = () => {
    for (const frame of held.splice(0))
      provider.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, result: 'late' });
  };
  const caller = await RawClient.connect(engine.bridgeUrl);
  await caller.registered();
  return { engine, logs, hooks, held, answerHeld, caller };
}

const voidCall = (caller: RawClient, functionId: string, n: number) =>
  caller.send({ type: 'invokefunction', function_id: functionId, data: { n }, action: { type: 'void' } });

describe('void calls and the caller cap', () => {
  it('do not hold a slot of the cap: more void calls than the cap all run, and the caller can still make calls', async () => {
    const { engine, held, answerHeld, hooks, caller } = await setup();
    for (let n = 0; n < 4 * CAP; n++) voidCall(caller, 'slow::held', n);
    await waitFor(
      () => held.length === 4 * CAP,
      3000,
      () => `${4 * CAP} void calls to reach the provider (got ${held.length})`,
    );
    // None of them is answered yet, and a sync call still goes through.
    const answer = await caller.invoke('fast::echo', { ok: 1 });
    expect(answer).toMatchObject({ result: { ok: 1 } });
    expect(answer.error).toBeUndefined();
    expect(engine.stats().droppedVoidCalls).toBe(0);
    // Hooks see every void call start at once, and end only when its (discarded) answer arrives.
    const voidEvents = () => hooks.filter((h) => h.event.functionId === 'slow::held');
    expect(voidEvents().filter((h) => h.phase === 'start')).toHaveLength(4 * CAP);
    expect(voidEvents().filter((h) => h.phase !== 'start')).toHaveLength(0);
    answerHeld();
    await waitFor(() => voidEvents().filter((h) => h.phase === 'end').length === 4 * CAP, 3000, 'every void call to end in the hooks');
    expect(voidEvents().every((h) => h.event.caller === caller.workerId)).toBe(true);
    expect(engine.stats().pendingInvocations).toBe(0);
  });

  it('refused void calls are counted and logged at warn: one line, then one summary per second', async () => {
    const { engine, logs, held, answerHeld, caller } = await setup();
    // The caller fills its cap with sync calls the provider does not answer yet.
    const syncs = Array.from({ length: CAP }, (_, n) => caller.invoke('slow::held', { n }, {}, 10_000));
    await waitFor(() => held.length === CAP, 3000, 'the sync calls to reach the provider');
    const refused = 2000;
    for (let n = 0; n < refused; n++) voidCall(caller, 'slow::held', n);
    // Another worker's void calls to a function nobody provides are refused too.
    const other = await RawClient.connect(engine.bridgeUrl);
    for (let n = 0; n < 10; n++) voidCall(other, 'nobody::home', n);
    await caller.roundTrip();
    await other.roundTrip();
    expect(engine.stats().droppedVoidCalls).toBe(refused + 10);
    expect(held).toHaveLength(CAP); // none of them reached the provider

    const dropLines = () => logs.filter((l) => /void calls? (to \S+ )?dropped/.test(String(l.msg)));
    const first = await waitFor(() => dropLines()[0], 1000, 'the first drop to be logged');
    expect(first).toMatchObject({ level: LEVEL.warn, function_id: 'slow::held', code: 'too_many_invocations', caller: caller.workerId });
    expect(first.msg).toContain(`void call to slow::held dropped: `);
    const summary = await waitFor(() => dropLines()[1], 3000, 'the summary line');
    expect(summary).toMatchObject({
      level: LEVEL.warn,
      count: refused + 9,
      calls: { 'slow::held [too_many_invocations]': refused - 1, 'nobody::home [function_not_found]': 10 },
    });
    expect(summary.msg).toBe(
      `${(refused + 9).toLocaleString('en-US')} more void calls dropped in the last second (slow::held [too_many_invocations]: 1,999, nobody::home [function_not_found]: 10)`,
    );
    // Nothing more is written once the burst is over.
    await sleep(1500);
    expect(dropLines()).toHaveLength(2);

    // The cap frees up as the sync calls are answered; void calls then run again.
    answerHeld();
    for (const sync of syncs) expect(await sync).toMatchObject({ result: 'late' });
    voidCall(caller, 'slow::held', -1);
    await waitFor(() => held.length === 1, 3000, 'the void call to reach the provider');
    expect(engine.stats().droppedVoidCalls).toBe(refused + 10);
  });
});
