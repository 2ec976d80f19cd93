/**
 * An engine in a child process, for crash tests (SIGKILL is the crash; SIGTERM a graceful stop).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { track } from './cleanup.js';
import { within } from './util.js';

export interface EngineProcess {
  readonly child: ChildProcess;
  readonly bridgeUrl: string;
  /** Settles when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything the process wrote on stderr so far. */
  stderr(): string;
}

/**
 * Spawns an engine script (`node script ...args`) that prints one JSON line `{bridgeUrl}` once serving
 * (or `{error}` and exits), and waits for that line. Rejects with the child's error when start-up
 * fails. The process is SIGKILLed by `cleanup()` if it is still running then.
 */
export async function spawnEngineScript(script: string, args: string[], startTimeoutMs = 15_000): Promise<EngineProcess> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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
