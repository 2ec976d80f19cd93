/**
 * Helpers for the state module tests (state/*.test.ts): a state-only engine, an engine in a child
 * process (crash tests), and a bounded-concurrency runner. (Log capture: ../log-capture.ts;
 * Redis availability: ../services/services.ts.)
 */
import { fileURLToPath } from 'node:url';
import type { Engine, Logger } from '@flint/engine';
import { type EngineProcess, spawnEngineScript } from '../child-engine.js';
import { startTestEngine } from '../harness.js';

export type { EngineProcess };

/** Starts an in-process engine whose only module is flint-state with `stateConfig`. */
export function startStateEngine(stateConfig: Record<string, unknown> = {}, options: { logger?: Logger } = {}): Promise<Engine> {
  return startTestEngine({ modules: [{ name: 'flint-state', config: stateConfig }] }, options);
}

/** Runs `fn(0..count-1)` with at most `concurrency` calls in flight; never rejects (fn handles its errors). */
export async function runPool(count: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

// ---------------------------------------------------------------------------------------------
// An engine in a child process
// ---------------------------------------------------------------------------------------------

export const ENGINE_PROCESS_SCRIPT = fileURLToPath(new URL('./engine-process.mjs', import.meta.url));

/** Spawns `engine-process.mjs` on `dir` (file_based state) and waits for its bridge URL (see spawnEngineScript). */
export function spawnEngineProcess(dir: string, compactAfterBytes = 64 * 1024, startTimeoutMs = 15_000): Promise<EngineProcess> {
  return spawnEngineScript(ENGINE_PROCESS_SCRIPT, [dir, String(compactAfterBytes)], startTimeoutMs);
}
