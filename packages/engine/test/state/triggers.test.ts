/**
 * `state` triggers: created/updated/deleted events with exact payloads, scope/key filters, condition
 * functions, failure isolation (logged, never failing the write), several triggers per change,
 * unregistering — delivered to @flint/sdk and iii-sdk@0.11.6 workers.
 *
 * "Nothing fired" is asserted without sleeping: the engine dispatches a change's triggers in order
 * over one connection, so once a later event (a sentinel) has arrived, an earlier one that was going
 * to arrive would have arrived first.
 */
import type { Engine } from '@flint/engine';
import { type Worker as FlintWorker, type StateEvent, TriggerRegistrationError } from '@flint/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, type TestWorker, findTrigger, listTriggers, startWorker } from '../support/harness.js';
import { type LogCapture, captureLog } from '../support/log-capture.js';
import { startStateEngine } from '../support/state/helpers.js';
import { deferred, uid, waitFor } from '../support/util.js';

afterEach(cleanup);

interface Listener {
  fnId: string;
  events: StateEvent[];
  trigger: { unregister(): void };
}

/** Registers a function recording its events and a `state` trigger on it; waits until the trigger is in place. */
async function listen(engine: Engine, worker: TestWorker, config: Record<string, unknown>, onEvent?: (e: StateEvent) => unknown): Promise<Listener> {
  const fnId = uid('on-state');
  const events: StateEvent[] = [];
  worker.registerFunction(fnId, async (e: StateEvent) => {
    events.push(e);
    return onEvent ? await onEvent(e) : null;
  });
  const trigger = worker.registerTrigger({ type: 'state', function_id: fnId, config });
  await waitFor(() => findTrigger(engine, (t) => t.function_id === fnId), 2000, `the state trigger on ${fnId}`);
  return { fnId, events, trigger };
}

const ev = (event_type: StateEvent['event_type'], scope: string, key: string, old_value: unknown, new_value: unknown): StateEvent => ({
  type: 'state',
  event_type,
  scope,
  key,
  old_value,
  new_value,
});

describe.each(SDK_KINDS)('state triggers delivered to a %s worker', (kind: SdkKind) => {
  let engine: Engine;
  let log: LogCapture;
  let handlers: TestWorker; // the SDK under test: receives events
  let writer: TestWorker; // makes the changes
  // biome-ignore lint/suspicious/noExplicitAny: results are arbitrary JSON
  const call = (function_id: string, payload: unknown): Promise<any> => writer.trigger({ function_id, payload });
  const set = (scope: string, key: string, value: unknown) => call('state::set', { scope, key, value });

  beforeEach(async () => {
    log = captureLog('warn');
    engine = await startStateEngine({}, { logger: log.logger });
    handlers = await startWorker(kind, engine);
    writer = await startWorker('flint', engine);
  });

  it('set, update and delete fire created / updated / deleted with exact payloads; deleting a missing key fires nothing', async () => {
    const scope = uid('users');
    const l = await listen(engine, handlers, { scope });

    await set(scope, 'ada', { name: 'Ada' });
    await set(scope, 'ada', { name: 'Ada L.' });
    await call('state::update', { scope, key: 'ada', ops: [{ type: 'increment', path: 'logins', by: 1 }] });
    await call('state::update', { scope, key: 'bob', ops: [{ type: 'set', path: 'n', value: 1 }] });
    await call('state::update', { scope, key: 'bob', ops: [{ type: 'increment', path: 'n', by: 'x' }] }); // all ops fail: still an update
    await call('state::delete', { scope, key: 'ada' });
    expect(await call('state::delete', { scope, key: 'ada' })).toEqual({ old_value: null }); // missing now: no event
    expect(await call('state::delete', { scope, key: 'never-was' })).toEqual({ old_value: null });
    await set(scope, 'sentinel', 1);

    await waitFor(() => l.events.some((e) => e.key === 'sentinel'), 2000, 'the sentinel event');
    expect(l.events).toEqual([
      ev('state:created', scope, 'ada', null, { name: 'Ada' }),
      ev('state:updated', scope, 'ada', { name: 'Ada' }, { name: 'Ada L.' }),
      ev('state:updated', scope, 'ada', { name: 'Ada L.' }, { name: 'Ada L.', logins: 1 }),
      ev('state:created', scope, 'bob', null, { n: 1 }),
      ev('state:updated', scope, 'bob', { n: 1 }, { n: 1 }),
      ev('state:deleted', scope, 'ada', { name: 'Ada L.', logins: 1 }, null),
      ev('state:created', scope, 'sentinel', null, 1),
    ]);
  });

  it('writes made inside the engine (engine.invoke, no worker) fire triggers too', async () => {
    const scope = uid('internal');
    const l = await listen(engine, handlers, { scope });
    await engine.invoke('state::set', { scope, key: 'k', value: [1] });
    await waitFor(() => l.events.length === 1, 2000, 'the event');
    expect(l.events[0]).toEqual(ev('state:created', scope, 'k', null, [1]));
  });

  it('filters: scope, key (within a scope and across scopes) and no filter (every scope)', async () => {
    const s1 = uid('s1');
    const s2 = uid('s2');
    const byScope = await listen(engine, handlers, { scope: s1 });
    const byScopeKey = await listen(engine, handlers, { scope: s1, key: 'k1' });
    const byKey = await listen(engine, handlers, { key: 'k1' });
    const all = await listen(engine, handlers, {});

    await set(s2, 'k2', 'a');
    await set(s2, 'k1', 'b');
    await set(s1, 'k2', 'c');
    await set(s1, 'k1', 'd');
    await set(s1, 'end', 'z'); // sentinel for everything but the key filters
    await set(s2, 'k1', 'z'); // sentinel for the key filters (an update now)

    await waitFor(() => all.events.length === 6 && byKey.events.length === 3 && byScope.events.length === 3 && byScopeKey.events.length === 1, 2000, 'events');
    const keys = (l: Listener) => l.events.map((e) => `${e.scope === s1 ? 's1' : 's2'}/${e.key}=${String(e.new_value)}`);
    expect(keys(all)).toEqual(['s2/k2=a', 's2/k1=b', 's1/k2=c', 's1/k1=d', 's1/end=z', 's2/k1=z']);
    expect(keys(byScope)).toEqual(['s1/k2=c', 's1/k1=d', 's1/end=z']);
    expect(keys(byScopeKey)).toEqual(['s1/k1=d']);
    expect(keys(byKey)).toEqual(['s2/k1=b', 's1/k1=d', 's2/k1=z']);
  });

  it('condition: receives the event; false skips the handler; true and non-false values proceed; a throwing condition skips and is logged', async () => {
    const scope = uid('cond');
    const condId = uid('cond-fn');
    const seenByCondition: StateEvent[] = [];
    handlers.registerFunction(condId, (e: StateEvent) => {
      seenByCondition.push(e);
      const v = e.new_value as { verdict?: unknown } | null;
      if (v?.verdict === 'throw') throw new Error('condition exploded');
      return v?.verdict;
    });
    const l = await listen(engine, handlers, { scope, condition_function_id: condId });

    const cases: [string, unknown][] = [
      ['yes', true],
      ['no', false],
      ['boom', 'throw'],
      ['zero', 0],
      ['text', 'hello'],
      ['nothing', null],
    ];
    for (const [key, verdict] of cases) {
      // A condition failure never fails the write.
      expect(await set(scope, key, { verdict })).toEqual({ old_value: null, new_value: { verdict } });
      await waitFor(() => seenByCondition.some((e) => e.key === key), 2000, `the condition to see ${key}`);
    }
    await set(scope, 'sentinel', { verdict: true });
    await waitFor(() => l.events.some((e) => e.key === 'sentinel'), 2000, 'the sentinel event');

    expect(seenByCondition.map((e) => e.key)).toEqual([...cases.map(([k]) => k), 'sentinel']);
    expect(seenByCondition[0]).toEqual(ev('state:created', scope, 'yes', null, { verdict: true }));
    expect(l.events.map((e) => e.key)).toEqual(['yes', 'zero', 'text', 'nothing', 'sentinel']);
    expect(l.events[0]).toEqual(ev('state:created', scope, 'yes', null, { verdict: true }));

    const warning = await waitFor(() => log.records.find((line) => line.level === 40 && String(line.msg).includes('condition exploded')), 2000, 'a warning');
    expect(warning).toMatchObject({ module: 'flint-state', scope, key: 'boom', event_type: 'state:created' });
  });

  it('a condition function that does not exist skips the handler and is logged; the write succeeds', async () => {
    const scope = uid('nocond');
    const guarded = await listen(engine, handlers, { scope, condition_function_id: 'no::such::condition' });
    const plain = await listen(engine, handlers, { scope });
    expect(await set(scope, 'k', 1)).toEqual({ old_value: null, new_value: 1 });
    await set(scope, 'sentinel', 2);
    await waitFor(() => plain.events.length === 2, 2000, 'the plain trigger events');
    expect(guarded.events).toEqual([]);
    await waitFor(() => log.records.some((line) => line.level === 40 && line.function_id === guarded.fnId), 2000, 'a warning');
  });

  it('refused writes (bad input, too large) fire nothing', async () => {
    const small = await startStateEngine({ max_value_bytes: 64 });
    const h = await startWorker(kind, small);
    const w = await startWorker('flint', small);
    const scope = uid('refused');
    const l = await listen(small, h, { scope });
    await w.trigger({ function_id: 'state::set', payload: { scope, key: 'k', value: 'x' } });
    for (const payload of [
      { function_id: 'state::set', payload: { scope, key: 'k', value: 'y'.repeat(100) } },
      { function_id: 'state::update', payload: { scope, key: 'k', ops: [{ type: 'append', path: '', value: 'z'.repeat(100) }] } },
      { function_id: 'state::update', payload: { scope, key: 'k', ops: [{ type: 'nope' }] } },
      { function_id: 'state::set', payload: { scope, key: '', value: 1 } },
    ]) {
      const error = await w.trigger(payload).then(
        () => undefined,
        (err: { code?: string }) => err.code,
      );
      expect(error, JSON.stringify(payload).slice(0, 80)).toBe('invalid_payload');
    }
    await w.trigger({ function_id: 'state::set', payload: { scope, key: 'k', value: 'end' } });
    await waitFor(() => l.events.length === 2, 2000, 'the two accepted changes');
    expect(l.events.map((e) => [e.event_type, e.new_value])).toEqual([
      ['state:created', 'x'],
      ['state:updated', 'end'],
    ]);
  });

  it('a handler that throws never fails the write, is logged as a warning, and later events still arrive', async () => {
    const scope = uid('throws');
    const l = await listen(engine, handlers, { scope }, (e) => {
      if (e.key === 'bad') throw new Error('handler exploded');
      return null;
    });
    expect(await set(scope, 'bad', 1)).toEqual({ old_value: null, new_value: 1 });
    expect(await call('state::get', { scope, key: 'bad' })).toBe(1);
    const warning = await waitFor(() => log.records.find((line) => line.level === 40 && String(line.msg).includes('handler exploded')), 2000, 'a warning');
    expect(warning).toMatchObject({ module: 'flint-state', function_id: l.fnId, scope, key: 'bad', event_type: 'state:created' });
    expect(String(warning.msg)).toMatch(/state trigger failed/);

    await set(scope, 'good', 2);
    await waitFor(() => l.events.some((e) => e.key === 'good'), 2000, 'the next event');
  });

  /** `writes` writes under a new scope whose state trigger always fails; resolves once every event was delivered. */
  async function failingWrites(writes: number): Promise<{ scope: string; l: Listener }> {
    const scope = uid('flood');
    const l = await listen(engine, handlers, { scope }, () => {
      throw new Error('handler exploded');
    });
    await Promise.all(Array.from({ length: writes }, (_, i) => set(scope, `k${i}`, i)));
    await waitFor(() => l.events.length === writes, 5000, 'every event delivered');
    return { scope, l };
  }

  it('a burst of failing firings writes ten lines in full, then one line a second counting the rest per function', async () => {
    const writes = 60;
    const { scope, l } = await failingWrites(writes);
    const full = () => log.records.filter((r) => String(r.msg).includes('state trigger failed'));
    const summaries = () => log.records.filter((r) => String(r.msg).includes('more trigger firing'));
    await waitFor(() => full().length + summaries().reduce((n, r) => n + Number(r.count), 0) === writes, 4000, 'every failure written or counted');
    // The writes may straddle two windows: each writes up to ten in full and counts the rest.
    expect(full().length).toBeGreaterThanOrEqual(10);
    expect(full().length).toBeLessThanOrEqual(10 * (summaries().length + 1));
    expect(summaries().length).toBeGreaterThanOrEqual(1);
    expect(full()[0]).toMatchObject({ level: 40, trigger_type: 'state', function_id: l.fnId, scope });
    const summary = summaries()[0];
    expect(summary).toMatchObject({ level: 40, module: 'flint-state', functions: { [l.fnId]: summary?.count } });
    expect(String(summary?.msg)).toMatch(new RegExp(`^\\d+ more trigger firings? failed in the last second \\(${l.fnId}: \\d+\\)$`));
  });

  it('failures still being counted when the engine stops are written as their summary line at the stop', async () => {
    const writes = 30;
    await failingWrites(writes);
    const failedLines = () => log.records.filter((r) => String(r.msg).includes('state trigger failed')).length;
    await waitFor(() => failedLines() >= 10, 2000, 'the lines written in full');
    // Well within the second the counted failures wait for: the stop writes them.
    await engine.stop();
    const counted = log.records.filter((r) => String(r.msg).includes('more trigger firing')).reduce((n, r) => n + Number(r.count), 0);
    expect(failedLines() + counted).toBe(writes);
  });

  it('the write answers without waiting for a slow handler', async () => {
    const scope = uid('slow');
    const gate = deferred();
    const l = await listen(engine, handlers, { scope }, () => gate.promise);
    expect(await set(scope, 'k', 1)).toEqual({ old_value: null, new_value: 1 });
    expect(await set(scope, 'k', 2)).toEqual({ old_value: 1, new_value: 2 });
    await waitFor(() => l.events.length >= 1, 2000, 'the handler to be running');
    gate.resolve();
    await waitFor(() => l.events.length === 2, 2000, 'both events');
  });

  it('several triggers on one change each run once (two on the same function, one on another)', async () => {
    const scope = uid('multi');
    const a = await listen(engine, handlers, { scope });
    const second = handlers.registerTrigger({ type: 'state', function_id: a.fnId, config: { scope } });
    await waitFor(async () => (await listTriggers(engine, true)).filter((t) => t.function_id === a.fnId).length === 2, 2000, 'the second trigger');
    const b = await listen(engine, handlers, { scope });

    await set(scope, 'k', 1);
    await waitFor(() => a.events.length === 2 && b.events.length === 1, 2000, 'the first change');
    await set(scope, 'k', 2);
    await waitFor(() => a.events.length >= 4 && b.events.length >= 2, 2000, 'the second change');
    expect(a.events.map((e) => e.new_value)).toEqual([1, 1, 2, 2]);
    expect(b.events.map((e) => e.new_value)).toEqual([1, 2]);
    second.unregister();
  });

  it('unregister stops events at once', async () => {
    const scope = uid('unreg');
    const gone = await listen(engine, handlers, { scope });
    const stays = await listen(engine, handlers, { scope });
    await set(scope, 'k', 1);
    await waitFor(() => gone.events.length === 1 && stays.events.length === 1, 2000, 'the first events');

    gone.trigger.unregister();
    await waitFor(async () => !(await findTrigger(engine, (t) => t.function_id === gone.fnId)), 2000, 'the trigger to be gone');
    await set(scope, 'k', 2);
    await call('state::delete', { scope, key: 'k' });
    await waitFor(() => stays.events.length === 3, 2000, 'the later events');
    expect(gone.events).toHaveLength(1);
  });

  it('triggers of a worker that disconnects are removed and writes keep working', async () => {
    const scope = uid('gone');
    const l = await listen(engine, handlers, { scope });
    await handlers.shutdown();
    await waitFor(async () => !(await findTrigger(engine, (t) => t.function_id === l.fnId)), 2000, 'the trigger to be removed');
    expect(await set(scope, 'k', 1)).toEqual({ old_value: null, new_value: 1 });
    expect(await call('state::get', { scope, key: 'k' })).toBe(1);
    expect(l.events).toEqual([]);
  });
});

describe('@flint/sdk specifics', () => {
  it('worker.state.onChange with a key filter; unregister() removes the function and the trigger', async () => {
    const engine = await startStateEngine();
    const w = await startWorker('flint', engine);
    const state = (w.native as FlintWorker).state;
    const scope = uid('users');
    const events: StateEvent<{ n: number }>[] = [];
    const scopeEvents: StateEvent[] = [];
    const sub = state.onChange<{ n: number }>(scope, (e) => void events.push(e), { key: 'ada' });
    const all = state.onChange(scope, (e) => void scopeEvents.push(e));
    expect(await sub.trigger.ready).toEqual({ parked: false });
    await all.trigger.ready;

    await state.set(scope, 'bob', { n: 1 });
    await state.set(scope, 'ada', { n: 1 });
    await state.update(scope, 'ada', [{ type: 'increment', path: 'n', by: 1 }]);
    await state.delete(scope, 'ada');
    await state.set(scope, 'end', { n: 0 });
    await waitFor(() => scopeEvents.length === 5, 2000, 'the scope events');
    expect(events).toEqual([
      ev('state:created', scope, 'ada', null, { n: 1 }),
      ev('state:updated', scope, 'ada', { n: 1 }, { n: 2 }),
      ev('state:deleted', scope, 'ada', { n: 2 }, null),
    ]);
    expect(sub.fn.id).toMatch(/^on-state-change::/);

    sub.unregister();
    await waitFor(
      async () => !(await findTrigger(engine, (t) => t.function_id === sub.fn.id)) && !engine.listFunctions().some((f) => f.function_id === sub.fn.id),
    );
    await state.set(scope, 'ada', { n: 9 });
    await waitFor(() => scopeEvents.length === 6, 2000, 'the next scope event');
    expect(events).toHaveLength(3);
    all.unregister();
  });

  it('a trigger with a bad config is refused and reported to the Flint SDK', async () => {
    const engine = await startStateEngine();
    const w = await startWorker('flint', engine);
    const native = w.native as FlintWorker;
    native.registerFunction('noop::fn', () => null);
    for (const config of [{ scope: 5 }, { key: ['k'] }, { condition_function_id: {} }, 'scope']) {
      const t = native.registerTrigger({ type: 'state', function_id: 'noop::fn', config });
      const error = await t.ready.then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error, JSON.stringify(config)).toBeInstanceOf(TriggerRegistrationError);
      expect((error as Error).message).toMatch(/scope|key|condition_function_id|config/);
    }
    expect(await findTrigger(engine, (t) => t.function_id === 'noop::fn')).toBeUndefined();
  });
});
