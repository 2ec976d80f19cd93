/**
 * flint-cron catch-up across an engine restart: the job's last slot is kept in a file_based store (a temp
 * folder), the engine is stopped for about 3 s, then a new engine on the same folder gets the same trigger
 * again. `latest` fires the most recent missed slot, `all` the last `catch_up_max` missed slots oldest
 * first, `none` nothing; then the regular slots follow without a gap. The trigger comes back half a
 * second before a slot and the caught-up runs take 800 ms together, so that slot comes while the catch-up
 * is under way (it must neither overtake the missed slots nor be lost). The `latest` case runs with an iii-sdk
 * worker and checks the payload of the caught-up slot.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { type SdkKind, type TestWorker, startTestEngine, startWorker } from '../support/harness.js';
import { sleep, uid, waitFor } from '../support/util.js';

const DOWN_MS = 3000;
/** How long the caught-up runs (of slots before the trigger came back) take together. */
const CATCH_UP_MS = 800;

interface CronPayload {
  trigger: { id: string; type: string; expression: string; timezone: string };
  job_id: string;
  scheduled_time: string;
  actual_time: string;
  manual: boolean;
}

interface Firing {
  slot: number;
  payload: CronPayload;
}

let dir: string | undefined;

afterEach(async () => {
  await cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const sleepUntil = (at: number): Promise<void> => sleep(Math.max(0, at - Date.now()));

/**
 * Runs the trigger `* * * * * *` with `trigger` config on an engine until it has fired, stops the engine,
 * waits DOWN_MS, starts another engine on the same store and registers the trigger again at about .500 of
 * a second. Resolves once the second engine has fired `caughtUp` slots from before that and two more.
 */
async function restartWith(kind: SdkKind, trigger: Record<string, unknown>, caughtUp: number) {
  dir = await mkdtemp(join(tmpdir(), 'flint-cron-catch-up-'));
  const modules = [{ name: 'flint-cron', config: { store: { name: 'kv', config: { store_method: 'file_based', file_path: dir } } } }];
  const fn = uid('cron::catch-up');
  // Until the restart no slot counts as caught up.
  let registeredAfter = Number.NEGATIVE_INFINITY;
  const register = (firings: Firing[]) => (w: TestWorker) => {
    w.registerFunction(fn, async (data: CronPayload) => {
      const slot = Date.parse(data.scheduled_time);
      firings.push({ slot, payload: data });
      if (slot <= registeredAfter) await sleep(CATCH_UP_MS / Math.max(1, caughtUp));
      return null;
    });
    w.registerTrigger({ type: 'cron', function_id: fn, config: { expression: '* * * * * *', ...trigger } });
  };

  const before: Firing[] = [];
  const first = await startTestEngine({ modules });
  const early = await startWorker(kind, first, register(before));
  await waitFor(() => before.length >= 1, 3000, 'a firing before the restart');
  await early.shutdown();
  // The file store locks its folder: the first engine lets go of it before the second opens it.
  await first.stop();
  const stoppedAt = Date.now();
  await sleep(DOWN_MS);

  const after: Firing[] = [];
  const second = await startTestEngine({ modules });
  let at = Math.floor(Date.now() / 1000) * 1000 + 500;
  if (at < Date.now() + 50) at += 1000;
  await sleepUntil(at);
  registeredAfter = Date.now();
  await startWorker(kind, second, register(after));
  await waitFor(() => after.length >= caughtUp + 2, 5000, `${caughtUp + 2} firings after the restart`);
  return { before, after, stoppedAt, registeredAfter, lastBefore: Math.max(...before.map((f) => f.slot)) };
}

/** The slots of `firings` in the order they came are consecutive seconds (no gap, nothing twice). */
function expectConsecutive(firings: Firing[]): void {
  const slots = firings.map((f) => f.slot);
  const first = slots[0] as number;
  expect(slots.map((s) => new Date(s).toISOString())).toEqual(slots.map((_, i) => new Date(first + i * 1000).toISOString()));
}

describe('flint-cron catch-up after a restart (file_based store)', () => {
  it("catch_up: 'latest' (iii-sdk worker) fires the most recent missed slot once, then the regular slots", { timeout: 30_000 }, async () => {
    const { before, after, stoppedAt, registeredAfter, lastBefore } = await restartWith('iii', { catch_up: 'latest' }, 1);
    const caught = after.filter((f) => f.slot <= registeredAfter);
    expect(caught).toHaveLength(1);
    const missed = after[0] as Firing;
    // The latest slot that came while no engine had the trigger (the next one is a regular slot); the one
    // before it was missed too, and is not fired.
    expect(missed.slot).toBeGreaterThan(registeredAfter - 1000);
    expect(missed.slot - 1000).toBeGreaterThan(stoppedAt);
    expect(missed.slot - 1000).toBeGreaterThan(lastBefore);
    expectConsecutive(after);

    expect(missed.payload).toMatchObject({
      trigger: { type: 'cron', expression: '* * * * * *', timezone: 'UTC' },
      job_id: before[0]?.payload.job_id,
      manual: false,
    });
    expect(typeof missed.payload.trigger.id).toBe('string');
    expect(missed.payload.scheduled_time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000\+00:00$/);
    expect(Date.parse(missed.payload.actual_time)).toBeGreaterThanOrEqual(registeredAfter);
  });

  it("catch_up: 'all' with catch_up_max: 2 fires the last two missed slots oldest first, then the regular slots", { timeout: 30_000 }, async () => {
    const { after, stoppedAt, registeredAfter, lastBefore } = await restartWith('flint', { catch_up: 'all', catch_up_max: 2 }, 2);
    expect(after.filter((f) => f.slot <= registeredAfter)).toHaveLength(2);
    const [older, newer] = after as [Firing, Firing];
    expect(newer.slot - older.slot).toBe(1000);
    expect(newer.slot).toBeGreaterThan(registeredAfter - 1000);
    // More than two slots were missed: the one before these two is not fired.
    expect(older.slot - 1000).toBeGreaterThan(stoppedAt);
    expect(older.slot - 1000).toBeGreaterThan(lastBefore);
    expectConsecutive(after);
    expect(after.every((f) => f.payload.manual === false)).toBe(true);
  });

  it("catch_up: 'none' fires no missed slot: the first firing is the first slot after the trigger is back", { timeout: 30_000 }, async () => {
    const { after, registeredAfter } = await restartWith('flint', { catch_up: 'none' }, 0);
    expect((after[0] as Firing).slot).toBeGreaterThan(registeredAfter);
    expect((after[0] as Firing).slot).toBeLessThanOrEqual(registeredAfter + 1000);
    expectConsecutive(after);
  });
});
