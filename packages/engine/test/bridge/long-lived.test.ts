/**
 * Calls and channels that outlive many later ones: the engine keeps its per-call and per-channel
 * bookkeeping in a ring of 16,384 slots (indexed by sequence number) and moves an entry that is
 * still there when its slot comes round again to an overflow map. These run past that point.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { deferred } from '../support/util.js';

/** More than the 16,384 ring slots, in batches of 500. */
const LATER = 17_000;

afterEach(cleanup);

describe('long-lived calls and channels', () => {
  it('a call answered after 17,000 later calls still gets its own result, and the later ones theirs', async () => {
    const engine = await startTestEngine();
    const gate = deferred<string>();
    const provider = await startWorker('flint', engine, (w) => {
      w.registerFunction('slow::one', () => gate.promise);
      w.registerFunction('fast::echo', (n: number) => n * 2);
    });
    const caller = await startWorker('flint', engine);
    const slow = caller.trigger({ function_id: 'slow::one', payload: null });
    for (let start = 0; start < LATER; start += 500) {
      const batch = Array.from({ length: 500 }, (_, i) => caller.trigger({ function_id: 'fast::echo', payload: start + i }));
      expect(await Promise.all(batch)).toEqual(Array.from({ length: 500 }, (_, i) => (start + i) * 2));
    }
    expect(engine.stats().pendingInvocations).toBe(1);
    gate.resolve('finally');
    expect(await slow).toBe('finally');
    expect(engine.stats().pendingInvocations).toBe(0);
    await provider.shutdown();
  }, 60_000);

  it('a channel stays reachable after 17,000 later channels were created and closed', async () => {
    // One worker makes them all: lift its channel cap (channels.max_per_worker) out of the way.
    const engine = await startTestEngine({ channels: { max_per_worker: LATER + 1 } });
    const worker = await startWorker('flint', engine);
    const old = await worker.createChannel();
    for (let start = 0; start < LATER; start += 500) {
      const batch = await Promise.all(Array.from({ length: 500 }, () => worker.trigger({ function_id: 'engine::channels::create', payload: {} })));
      expect(batch).toHaveLength(500);
    }
    // Nobody took the later channels' ends: they stay open until their time-to-live. The old one still works.
    expect(engine.stats().channels).toBe(LATER + 1);
    const received = old.reader.readAll();
    old.writer.stream.end(Buffer.from('still here'));
    expect((await received).toString()).toBe('still here');
  }, 60_000);
});
