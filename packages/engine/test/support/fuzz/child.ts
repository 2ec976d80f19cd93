/**
 * The engine process the upgrade fuzz targets (engine-process.mjs: bridge + flint-stream): a crash
 * there ends that process, which the fuzz sees, reports with the process's stderr, and recovers from
 * (`ensure` starts a new one, so that fast-check can go on shrinking).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { within } from '../util.js';

const SCRIPT = fileURLToPath(new URL('./engine-process.mjs', import.meta.url));

export interface FuzzEngineProcess {
  readonly child: ChildProcess;
  readonly bridgeUrl: string;
  readonly streamUrl: string;
  /** True while the process runs. */
  alive(): boolean;
  /** Everything the process wrote on stderr so far. */
  stderr(): string;
  /** How it ended, once it has. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  stop(): Promise<void>;
}

export async function spawnFuzzEngine(): Promise<FuzzEngineProcess> {
  const child = spawn(process.execPath, [SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      ended = { code, signal };
      resolve();
    });
  });
  const first = await within(
    new Promise<Record<string, unknown>>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as Record<string, unknown>);
      });
      void exited.then(() => reject(new Error(`the fuzz engine exited before it was ready: ${stderr}`)));
    }),
    15_000,
    'the fuzz engine start-up',
  );
  if (typeof first.error === 'string') throw new Error(`the fuzz engine failed to start: ${first.error}`);
  return {
    child,
    bridgeUrl: String(first.bridgeUrl),
    streamUrl: String(first.streamUrl),
    alive: () => ended === undefined,
    stderr: () => stderr,
    exit: () => ended,
    async stop() {
      if (ended) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
