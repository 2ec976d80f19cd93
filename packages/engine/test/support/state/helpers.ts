/**
 * Helpers for the state module tests (state/*.test.ts): a state-only engine, an engine in a child
 * process (crash tests), and a bounded-concurrency runner. (Log capture: ../log-capture.ts;
 * Redis availability: ../services/services.ts.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Engine, Logger } from '@flint/engine';
import { track } from '../cleanup.js';
import { startTestEngine } from '../harness.js';
import { within } from '../util.js';

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

export interface EngineProcess {
  readonly child: ChildProcess;
  readonly bridgeUrl: string;
  /** Settles when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything the process wrote on stderr so far. */
  stderr(): string;
}

/**
 * Spawns `engine-process.mjs` on `dir` and waits for its bridge URL. Rejects with the child's error
 * when start-up fails. The process is SIGKILLed by `cleanup()` if it is still running then.
 */
export async function spawnEngineProcess(dir: string, compactAfterBytes = 64 * 1024, startTimeoutMs = 15_000): Promise<EngineProcess> {
  const child = spawn(process.execPath, [ENGINE_PROCESS_SCRIPT, dir, String(compactAfterBytes)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  track(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const first = await within(
    new Promise<Record<string, unknown>>((resolve, reject) => {
      let out = '';
      const onData = (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf('\n');
        if (nl < 0) return;
        child.stdout?.off('data', onData);
        try {
          resolve(JSON.parse(out.slice(0, nl)) as Record<string, unknown>);
        } catch (err) {
          reject(err);
        }
      };
      child.stdout?.on('data', onData);
      void exited.then(({ code, signal }) => reject(new Error(`engine process exited (code ${code}, signal ${signal}) before it was ready: ${stderr}`)));
    }),
    startTimeoutMs,
    'engine process start-up',
  );
  if (typeof first.error === 'string') throw new Error(`engine process failed to start: ${first.error}`);
  return { child, bridgeUrl: String(first.bridgeUrl), exited, stderr: () => stderr };
}
