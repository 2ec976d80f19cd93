/**
 * flint-queue's log while a handler fails every message (builtin in-memory backend): 40 messages, no
 * retries. Each failed attempt and each dead letter is a log line of its own for the first ten of a
 * second; the rest are counted per function in one line a second. The dead letters keep every message.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { startTestEngine, startWorker } from '../support/harness.js';
import { type LogRecord, captureLog } from '../support/log-capture.js';
import { uid, waitFor } from '../support/util.js';

afterEach(cleanup);

const MESSAGES = 40;

/** The lines matching `full` and the total the summaries matching `summary` counted. */
function tally(records: LogRecord[], full: RegExp, summary: RegExp) {
  const lines = records.filter((r) => full.test(String(r.msg)));
  const summaries = records.filter((r) => summary.test(String(r.msg)));
  return { lines, summaries, counted: summaries.reduce((n, r) => n + Number(r.count), 0) };
}

describe('flint-queue failure lines', () => {
  it('a handler failing every message: ten lines a second in full, the rest counted per function; every message dead-lettered', async () => {
    const log = captureLog('warn');
    const engine = await startTestEngine({ modules: [{ name: 'flint-queue', config: {} }] }, { logger: log.logger });
    const topic = uid('orders');
    const fn = uid('test::always-fails');
    const w = await startWorker('flint', engine);
    w.registerFunction(fn, () => {
      throw new Error('no stock');
    });
    w.registerTrigger({ type: 'durable:subscriber', function_id: fn, config: { topic, queue_config: { max_retries: 0, concurrency: 64 } } });
    await waitFor(
      async () => {
        const stats = (await engine.invoke('engine::queue::topic_stats', { topic })) as { subscribers: { function_id: string; consumers: number }[] };
        return stats.subscribers.some((s) => s.function_id === fn && s.consumers > 0);
      },
      5000,
      'the subscriber',
    );
    await Promise.all(Array.from({ length: MESSAGES }, (_, n) => w.trigger({ function_id: 'flint::durable::publish', payload: { topic, data: { n } } })));
    await waitFor(async () => ((await engine.invoke('engine::queue::dlq_messages', { topic })) as unknown[]).length === MESSAGES, 5000, 'every message dead');

    const dead = () =>
      tally(log.records, /^message \S+ moved to the dead letters after 1 attempt: /, /^\d+ more messages? moved to the dead letters in the last second \(/);
    const failed = () => tally(log.records, /^durable:subscriber trigger failed: /, /^\d+ more trigger firings? failed in the last second \(/);
    for (const [what, of] of [
      ['dead letters', dead],
      ['failed attempts', failed],
    ] as const) {
      await waitFor(() => of().lines.length + of().counted === MESSAGES, 3000, `every one of the ${what} written or counted`);
      const { lines, summaries } = of();
      // The messages may straddle two windows: each writes up to ten in full and counts the rest.
      expect(lines.length, what).toBeGreaterThanOrEqual(10);
      expect(lines.length, what).toBeLessThanOrEqual(10 * (summaries.length + 1));
      expect(summaries.length, what).toBeGreaterThanOrEqual(1);
      expect(summaries[0], what).toMatchObject({ module: 'flint-queue', functions: { [fn]: summaries[0]?.count } });
    }
    expect(dead().lines[0]).toMatchObject({ level: 50, topic, function_id: fn, attempt: 1, message_id: expect.any(String) });
    expect(dead().summaries[0]).toMatchObject({ level: 50 });
    expect(failed().summaries[0]).toMatchObject({ level: 40 });
  });
});
