/**
 * flint-state on the redis adapter with two engines sharing one Redis (same redis_url and key_prefix):
 * shared data, atomic updates across engines, and where state triggers fire.
 *
 * Triggers are per engine: a `state` trigger runs for changes made through the engine it is
 * registered on (the engine that stored the change fires it); a write through another engine sharing
 * the Redis does not reach it. There is no cross-engine change feed.
 *
 * Uses the real Redis at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379), a unique key prefix per
 * test (deleted afterwards). Without Redis: skipped with a printed reason, or a failure when
 * FLINT_REQUIRE_SERVICES=1.
 */
import { randomUUID } from 'node:crypto';
import type { Engine } from '@flint/engine';
import type { StateEvent } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { type TestWorker, findTrigger, startWorker } from '../support/harness.js';
import { deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, serviceAvailable } from '../support/services/services.js';
import { startStateEngine } from '../support/state/helpers.js';
import { uid, waitFor } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('state module on Redis', await serviceAvailable('redis', REDIS_URL));

afterEach(cleanup);

// biome-ignore lint/suspicious/noExplicitAny: results are arbitrary JSON
const call = (w: TestWorker, function_id: string, payload: unknown): Promise<any> => w.trigger({ function_id, payload });

/** A fresh key prefix, whose keys are deleted by cleanup(). */
function newPrefix(): string {
  const prefix = `flint-test:state:${randomUUID()}:`;
  track(() => deleteKeysWithPrefix(REDIS_URL, prefix));
  return prefix;
}

const redisState = (key_prefix: string) => ({ adapter: { name: 'redis', config: { redis_url: REDIS_URL, key_prefix } } });

/** Two engines on the same Redis and prefix, each with a Flint worker. */
async function twoEngines(prefix = newPrefix()): Promise<{ a: Engine; b: Engine; wa: TestWorker; wb: TestWorker; prefix: string }> {
  const a = await startStateEngine(redisState(prefix));
  const b = await startStateEngine(redisState(prefix));
  expect(a.bridgeUrl).not.toBe(b.bridgeUrl);
  const wa = await startWorker('flint', a);
  const wb = await startWorker('flint', b);
  return { a, b, wa, wb, prefix };
}

describe.skipIf(!runRedis)('flint-state on a shared Redis (two engines)', () => {
  it('a write through engine A is read, listed, updated and deleted through engine B', async () => {
    const { wa, wb } = await twoEngines();
    const scope = uid('users');
    expect(await call(wa, 'state::set', { scope, key: 'ada', value: { name: 'Ada' } })).toEqual({ old_value: null, new_value: { name: 'Ada' } });
    expect(await call(wb, 'state::get', { scope, key: 'ada' })).toEqual({ name: 'Ada' });
    expect(await call(wb, 'state::set', { scope, key: 'ada', value: { name: 'Ada L.' } })).toEqual({
      old_value: { name: 'Ada' },
      new_value: { name: 'Ada L.' },
    });
    expect(await call(wa, 'state::update', { scope, key: 'ada', ops: [{ type: 'increment', path: 'n', by: 1 }] })).toEqual({
      old_value: { name: 'Ada L.' },
      new_value: { name: 'Ada L.', n: 1 },
    });
    await call(wa, 'state::set', { scope, key: 'nul', value: null });
    expect(await call(wb, 'state::set', { scope, key: 'nul', value: 1 })).toEqual({ old_value: null, new_value: 1 });
    expect(((await call(wb, 'state::list', { scope })) as unknown[]).length).toBe(2);
    expect(await call(wb, 'state::list_groups', {})).toEqual({ groups: [scope] });
    expect(await call(wb, 'state::delete', { scope, key: 'ada' })).toEqual({ old_value: { name: 'Ada L.', n: 1 } });
    expect(await call(wa, 'state::get', { scope, key: 'ada' })).toBeNull();
    expect(await call(wa, 'state::delete', { scope, key: 'ada' })).toEqual({ old_value: null });
    expect(await call(wa, 'state::delete', { scope, key: 'nul' })).toEqual({ old_value: 1 });
    expect(await call(wb, 'state::list_groups', {})).toEqual({ groups: [] });
  });

  it('scopes and keys with glob characters, separators and unicode stay apart (list, list_groups)', async () => {
    const { wa, wb } = await twoEngines();
    const scopes = ['x*', 'x?y', 'x[ab]', 'x\\y', 'x:y', 'x', 'ünï ✓'];
    for (const [i, scope] of scopes.entries()) {
      await call(wa, 'state::set', { scope, key: `k*${i}`, value: i });
      await call(wa, 'state::set', { scope, key: 'line\nbreak', value: `${scope}!` });
    }
    expect(await call(wb, 'state::list_groups', {})).toEqual({ groups: [...scopes].sort() });
    for (const [i, scope] of scopes.entries()) {
      const values = (await call(wb, 'state::list', { scope })) as unknown[];
      expect(values.sort()).toEqual([i, `${scope}!`].sort());
      expect(await call(wb, 'state::get', { scope, key: 'line\nbreak' })).toBe(`${scope}!`);
    }
  });

  it('engines with different key prefixes do not see each other; data outlives an engine', async () => {
    const p1 = newPrefix();
    const p2 = newPrefix();
    const e1 = await startStateEngine(redisState(p1));
    const e2 = await startStateEngine(redisState(p2));
    const w1 = await startWorker('flint', e1);
    const w2 = await startWorker('flint', e2);
    await call(w1, 'state::set', { scope: 's', key: 'k', value: 'one' });
    expect(await call(w2, 'state::get', { scope: 's', key: 'k' })).toBeNull();
    expect(await call(w2, 'state::list_groups', {})).toEqual({ groups: [] });

    await w1.shutdown();
    await e1.stop();
    const e1again = await startStateEngine(redisState(p1));
    const w1again = await startWorker('flint', e1again);
    expect(await call(w1again, 'state::get', { scope: 's', key: 'k' })).toBe('one');
  });

  it('update is atomic across engines: 100 + 100 concurrent increments end at 200', async () => {
    const { wa, wb } = await twoEngines();
    const scope = uid('counters');
    const inc = (w: TestWorker) => call(w, 'state::update', { scope, key: 'c', ops: [{ type: 'increment', path: 'n', by: 1 }] });
    const results = (await Promise.all(Array.from({ length: 200 }, (_, i) => inc(i % 2 === 0 ? wa : wb)))) as {
      old_value: unknown;
      new_value: { n: number };
    }[];
    expect(await call(wa, 'state::get', { scope, key: 'c' })).toEqual({ n: 200 });
    expect(await call(wb, 'state::get', { scope, key: 'c' })).toEqual({ n: 200 });
    // Each increment saw a distinct value: no lost update, no double count.
    expect(results.map((r) => r.new_value.n).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(results.filter((r) => r.old_value === null)).toHaveLength(1);
  });

  it('state triggers are per engine: a trigger on B fires for writes through B, not for writes through A', async () => {
    const { a, b, wa, wb } = await twoEngines();
    const scope = uid('watched');
    const onB: StateEvent[] = [];
    const onA: StateEvent[] = [];
    const listener = await startWorker('flint', b, (w) => {
      w.registerFunction('watch::b', (e: StateEvent) => void onB.push(e));
      w.registerTrigger({ type: 'state', function_id: 'watch::b', config: { scope } });
    });
    const listenerA = await startWorker('flint', a, (w) => {
      w.registerFunction('watch::a', (e: StateEvent) => void onA.push(e));
      w.registerTrigger({ type: 'state', function_id: 'watch::a', config: { scope } });
    });
    await waitFor(() => findTrigger(b, (t) => t.function_id === 'watch::b'));
    await waitFor(() => findTrigger(a, (t) => t.function_id === 'watch::a'));

    await call(wa, 'state::set', { scope, key: 'via-a', value: 1 });
    await call(wb, 'state::set', { scope, key: 'via-b', value: 2 });
    await call(wb, 'state::set', { scope, key: 'via-a', value: 3 }); // an update of A's key, made through B
    await waitFor(() => onB.length === 2 && onA.length === 1, 2000, 'the events on both engines');
    // A change through A could only reach B through some cross-engine channel, which would not be ordered
    // with B's own events: give it a moment to (wrongly) arrive. This wait is inherent to proving absence.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(onB).toEqual([
      { type: 'state', event_type: 'state:created', scope, key: 'via-b', old_value: null, new_value: 2 },
      { type: 'state', event_type: 'state:updated', scope, key: 'via-a', old_value: 1, new_value: 3 },
    ]);
    expect(onA).toEqual([{ type: 'state', event_type: 'state:created', scope, key: 'via-a', old_value: null, new_value: 1 }]);
    await listener.shutdown();
    await listenerA.shutdown();
  });
});
