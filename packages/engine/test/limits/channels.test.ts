/**
 * `channels.max_per_worker`: a worker's `engine::channels::create` past the cap fails with
 * too_many_channels, and its channels stop counting as they are removed (read to the end, reader
 * closed, or expired).
 */
import type { Engine } from '@flint/engine';
import { EngineFunctions } from '@flint/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { type TestWorker, startTestEngine, startWorker } from '../support/harness.js';
import { rejectsWith, waitFor, within } from '../support/util.js';

afterEach(cleanup);

const CAP = 3;

async function capped(extra: Record<string, unknown> = {}): Promise<{ engine: Engine; worker: TestWorker }> {
  const engine = await startTestEngine({ channels: { max_per_worker: CAP, ...extra } });
  const worker = await startWorker('flint', engine);
  return { engine, worker };
}

async function fill(worker: TestWorker) {
  return Promise.all(Array.from({ length: CAP }, () => worker.createChannel()));
}

describe('channels.max_per_worker', () => {
  it("refuses a worker's channel past the cap with too_many_channels; other workers and the engine itself are not affected", async () => {
    const { engine, worker } = await capped();
    await fill(worker);
    const error = await rejectsWith(worker.createChannel(), 'too_many_channels');
    expect(error.message).toBe(`Worker has ${CAP} open channels (limit ${CAP})`);
    expect(engine.stats().channels).toBe(CAP);

    const other = await startWorker('flint', engine);
    await other.createChannel();
    await engine.invoke(EngineFunctions.CREATE_CHANNEL, {});
    expect(engine.stats().channels).toBe(CAP + 2);
  });

  it('frees a slot when one of its channels has been read to the end', async () => {
    const { engine, worker } = await capped();
    const [first] = await fill(worker);
    await rejectsWith(worker.createChannel(), 'too_many_channels');
    const read = first?.reader.readAll() as Promise<Buffer>;
    first?.writer.stream.end(Buffer.from('done'));
    expect((await within(read, 3000, 'reading the channel')).toString()).toBe('done');
    await waitFor(() => engine.stats().channels === CAP - 1, 2000, 'the channel to be removed');
    await worker.createChannel();
    await rejectsWith(worker.createChannel(), 'too_many_channels');
  });

  it('frees the slots of channels that expire unconnected (channels.ttl_ms)', async () => {
    const { engine, worker } = await capped({ ttl_ms: 200 });
    await fill(worker);
    await rejectsWith(worker.createChannel(), 'too_many_channels');
    await waitFor(() => engine.stats().channels === 0, 3000, 'the channels to expire');
    await fill(worker);
  });
});
