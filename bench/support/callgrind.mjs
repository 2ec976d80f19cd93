// Runs a bench child under valgrind's callgrind and reads the user-space instructions it executes
// between two points (callgrind_control --zero, then --dump), for bench/instructions.
//
// Instruction counts hardly depend on what else the machine is doing (bench/README.md, instruction
// counts), so a before/after comparison of one change needs a single run. What they leave out: the
// kernel's work in system calls, and waiting.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startChild } from './proc.mjs';

const run = promisify(execFile);

/** Why callgrind cannot be used here (valgrind or callgrind_control missing), or undefined when it can. */
export async function callgrindMissing() {
  for (const tool of ['valgrind', 'callgrind_control']) {
    try {
      await run(tool, ['--version']);
    } catch (err) {
      return err?.code === 'ENOENT' ? `${tool} is not installed (Debian: apt-get install valgrind)` : `${tool} --version failed: ${err.message}`;
    }
  }
  return undefined;
}

/**
 * A folder for the dumps of every child started with `startUnderCallgrind`, removed by `dispose()`.
 */
export async function callgrindSession() {
  const dir = await mkdtemp(join(tmpdir(), 'flint-callgrind-'));
  return {
    dir,
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * startChild (proc.mjs) with the child's node under callgrind. V8 runs with `--single-threaded`, so that
 * its compilers and garbage collector work on the main thread, and with `--predictable-gc-schedule`, so
 * that collections come at points set by the allocations rather than by idle time and timers: counts
 * then repeat from run to run (without it, the windows of one HTTP engine ranged over ±20%). Start-up
 * under valgrind takes tens of seconds, hence the long time allowed for the ready line.
 */
export function startUnderCallgrind(session, file, { name, args = [], env = {} } = {}) {
  return startChild(file, {
    name,
    args,
    env,
    execPath: 'valgrind',
    execArgv: [
      '--tool=callgrind',
      '--quiet',
      // V8 writes machine code into its heap: have valgrind notice code that changes there.
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(session.dir, 'callgrind.%p')}`,
      process.execPath,
      '--single-threaded',
      '--predictable-gc-schedule',
    ],
    timeoutMs: 300_000,
  });
}

/** Sets the child's counters to zero. */
export async function zeroCounts(handle) {
  await run('callgrind_control', ['--zero', String(handle.child.pid)]);
}

/** Dumps the child's counters and returns the instructions counted since the last zero or dump. */
export async function dumpCounts(session, handle) {
  const pid = handle.child.pid;
  await run('callgrind_control', ['--dump', String(pid)]);
  const prefix = `callgrind.${pid}.`;
  const parts = (await readdir(session.dir)).filter((f) => f.startsWith(prefix)).map((f) => Number(f.slice(prefix.length)));
  if (parts.length === 0) throw new Error(`${handle.name}: callgrind wrote no dump`);
  const text = await readFile(join(session.dir, `${prefix}${Math.max(...parts)}`), 'utf8');
  const match = /^(?:summary|totals): (\d+)/m.exec(text);
  if (!match) throw new Error(`${handle.name}: no instruction total in callgrind's dump`);
  return Number(match[1]);
}
