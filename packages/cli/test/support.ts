/** Helpers for the CLI tests: run `flint`, start an engine with `flint start`, free ports. */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const bin = join(root, 'packages/cli/bin/flint.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function flint(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Starts `flint start` (or `flint` with `command: []`) in a child process and resolves with its bridge URL from the banner. */
export function startEngine(
  args: string[],
  { command = ['start'], cwd = root, env = {} }: { command?: string[]; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ child: ChildProcessWithoutNullStreams; url: string; output: () => string }> {
  const child = spawn(process.execPath, [bin, ...command, ...args], { cwd, env: { ...process.env, ...env } });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`engine did not start:\n${out}`)), 15_000);
    const check = () => {
      const match = /bridge\s+(ws:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolveStart({ child, url: match[1] as string, output: () => out });
      }
    };
    child.stdout.on('data', check);
    child.once('exit', () => reject(new Error(`engine exited:\n${out}`)));
  });
}

/** A port that was free a moment ago (bind port 0, read it, release it): nothing listens there. */
export function freePort(): Promise<number> {
  return new Promise((done, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}

export function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((done) => {
    if (child.exitCode !== null) done(child.exitCode);
    else child.once('exit', (code) => done(code));
  });
}
