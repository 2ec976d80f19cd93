/**
 * flint-cron on two engines sharing one Redis (the redis lock and the redis kv store), each engine in its
 * own process with a worker (in this process) registering the same function and trigger: every slot is
 * fired once across the two, and when one engine is killed (SIGKILL) the other fires every later slot.
 *
 * Uses the real Redis at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379) with a unique lock prefix
 * and store key prefix per test (every key under them deleted afterwards). Without Redis: skipped with a
 * printed reason, or a failure when FLINT_REQUIRE_SERVICES=1.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type EngineProcess, spawnEngineScript } from '../support/child-engine.js';
import { cleanup } from '../support/cleanup.js';
import { connectWorker } from '../support/harness.js';
import { deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, serviceAvailable } from '../support/services/services.js';
import { sleep, uid, waitFor } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('Redis cron cluster tests', await serviceAvailable('redis', REDIS_URL));
const SCRIPT = fileURLToPath(new URL('../support/module-engine-process.mjs', import.meta.url));

/** One call of the cron function: which engine's worker got it, and its payload. */
interface Firing {
  engine: string;
  slot: number;
  job_id: string;
  manual: boolean;
}

/** Sleeps until the wall clock reaches `at` (ms since the epoch). */
const sleepUntil = (at: number): Promise<void> => sleep(Math.max(0, at - Date.now()));

/** The slots `from`, `from + 1 s`, …, `to`. */
const secondsBetween = (from: number, to: number): number[] => Array.from({ length: (to - from) / 1000 + 1 }, (_, i) => from + i * 1000);

/** The slots in `expected` not fired exactly once, with how often each was fired (empty when all were fired once). */
function notOnce(firings: Firing[], expected: number[]): { slot: string; fired: number }[] {
  return expected.map((slot) => ({ slot: new Date(slot).toISOString(), fired: firings.filter((f) => f.slot === slot).length })).filter((s) => s.fired !== 1);
}

describe.skipIf(!runRedis)('flint-cron: two engines on one Redis (redis lock and store)', () => {
  const prefixes: string[] = [];

  afterEach(async () => {
    await cleanup();
    for (const prefix of prefixes.splice(0)) await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  /** The flint-cron config of both engines: the redis lock and store under a prefix of this test's own. */
  const sharedRedis = (): Record<string, unknown> => {
    const prefix = `flint-test:${randomUUID()}:`;
    prefixes.push(prefix);
    return {
      adapter: { name: 'redis', config: { redis_url: REDIS_URL, prefix: `${prefix}lock:` } },
      store: { name: 'redis', config: { redis_url: REDIS_URL, key_prefix: `${prefix}state:` } },
    };
  };

  /**
   * Connects a worker to `proc` registering `fn` with a trigger `* * * * * *` whose calls go to `firings`;
   * resolves with the job id the engine lists for it once registered.
   */
  async function cronWorker(proc: EngineProcess, engine: string, fn: string, firings: Firing[]): Promise<string> {
    const w = connectWorker('flint', proc.bridgeUrl, { reconnect: { maxRetries: 0 } });
    w.registerFunction(fn, (data: { scheduled_time: string; job_id: string; manual: boolean }) => {
      firings.push({ engine, slot: Date.parse(data.scheduled_time), job_id: data.job_id, manual: data.manual });
      return null;
    });
    w.registerTrigger({ type: 'cron', function_id: fn, config: { expression: '* * * * * *' } });
    const listed = await waitFor(
      async () => {
        const { triggers } = (await w.trigger({ function_id: 'engine::cron::list', payload: {} })) as { triggers: { function_id: string; job_id: string }[] };
        return triggers.find((t) => t.function_id === fn);
      },
      5000,
      `the trigger on engine ${engine}`,
    );
    return listed.job_id;
  }

  async function startPair(fn: string, firings: Firing[]): Promise<Record<'a' | 'b', EngineProcess>> {
    const config = JSON.stringify(sharedRedis());
    const [a, b] = await Promise.all([spawnEngineScript(SCRIPT, ['flint-cron', config]), spawnEngineScript(SCRIPT, ['flint-cron', config])]);
    const [jobA, jobB] = await Promise.all([cronWorker(a, 'a', fn, firings), cronWorker(b, 'b', fn, firings)]);
    // The same function and config on both engines: one job, whose slots the two share.
    expect(jobA).toBe(jobB);
    return { a, b };
  }

  it('fires each of 30 consecutive slots exactly once across both engines', { timeout: 60_000 }, async () => {
    const fn = uid('cron::cluster');
    const firings: Firing[] = [];
    await startPair(fn, firings);
    // The window starts a whole second after both triggers are registered.
    const first = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    const last = first + 29_000;
    await sleepUntil(last + 800);

    const expected = secondsBetween(first, last);
    expect(notOnce(firings, expected)).toEqual([]);
    // Nothing fired twice outside the window either, and every call is a scheduled one of the one job.
    const slots = firings.map((f) => f.slot);
    expect(new Set(slots).size).toBe(slots.length);
    expect(new Set(firings.map((f) => f.job_id)).size).toBe(1);
    expect(firings.every((f) => f.manual === false)).toBe(true);
  });

  it('after one engine is killed (SIGKILL) the other fires every later slot, none twice', { timeout: 30_000 }, async () => {
    const fn = uid('cron::failover');
    const firings: Firing[] = [];
    const procs = await startPair(fn, firings);
    const registered = Date.now();
    await waitFor(() => firings.filter((f) => f.slot > registered).length >= 3, 6000, 'three firings');
    // Kill between two slots (no run under way), the engine that fired the latest slot, so the other has to take over.
    await sleepUntil(Math.floor(Date.now() / 1000) * 1000 + 400);
    const latest = firings.reduce((x, y) => (y.slot > x.slot ? y : x));
    const victim = latest.engine as 'a' | 'b';
    const survivor = victim === 'a' ? 'b' : 'a';
    const killedAt = Date.now();
    procs[victim].child.kill('SIGKILL');
    expect((await procs[victim].exited).signal).toBe('SIGKILL');

    const first = Math.ceil(killedAt / 1000) * 1000;
    const last = first + 6000;
    await sleepUntil(last + 800);
    const after = firings.filter((f) => f.slot >= first);
    expect(notOnce(after, secondsBetween(first, last))).toEqual([]);
    expect(after.every((f) => f.engine === survivor)).toBe(true);
    const slots = firings.map((f) => f.slot);
    expect(new Set(slots).size).toBe(slots.length);
  });
});
