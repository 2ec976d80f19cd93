// What bench/queue and bench/instructions share about flint-queue: waiting until the engine consumes.
import { sleep } from './proc.mjs';

/** Polls the topic's stats until the engine consumes for `functionId` (its trigger is bound on the backend). */
export async function waitConsuming(worker, topic, functionId, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const stats = await worker.queue.stats(topic);
    if (stats.subscribers?.some((s) => s.function_id === functionId && s.consumers > 0)) return;
    await sleep(20);
  }
  throw new Error(`the engine did not consume for ${functionId} on ${topic} within ${timeoutMs} ms`);
}
