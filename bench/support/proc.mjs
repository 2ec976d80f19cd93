// Child-process helpers shared by the benches: start a node child, wait for its JSON "ready" line,
// talk to it over IPC, stop it.
import { fork } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * Forks `file` with an IPC channel. Resolves with `{ child, info }` once the child prints a JSON line
 * with `ready: true` on stdout (`info` is that object); rejects with the child's `error` when it prints
 * `ready: false` instead. Other stdout lines are forwarded to stderr so that a bench's own stdout stays
 * a table plus one final JSON line. `execPath`: the program that runs the child (default: this node;
 * callgrind.mjs passes valgrind, with node and its flags in `execArgv`).
 */
export function startChild(file, { name, args = [], execArgv = [], env = {}, timeoutMs = 20_000, execPath } = {}) {
  const label = name ?? file;
  const child = fork(file, args, {
    execArgv,
    ...(execPath ? { execPath } : {}),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const rl = createInterface({ input: child.stdout });
  return new Promise((resolve, reject) => {
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label}: no ready line within ${timeoutMs} ms`));
    }, timeoutMs);
    let refusal;
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(new Error(refusal ? `${label}: ${refusal}` : `${label} exited (${code ?? signal}) before it was ready`));
    };
    child.once('exit', onExit);
    rl.on('line', (line) => {
      if (!ready) {
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          msg = undefined;
        }
        if (msg?.ready === true) {
          ready = true;
          clearTimeout(timer);
          child.off('exit', onExit);
          resolve({ child, info: msg, name: label });
          return;
        }
        if (msg?.ready === false && typeof msg.error === 'string') {
          refusal = msg.error; // the child exits next: onExit rejects with it
          return;
        }
      }
      process.stderr.write(`[${label}] ${line}\n`);
    });
  });
}

let nextRequestId = 0;

/** Sends `{ ...message, rid }` over IPC and resolves with the child's reply carrying the same `rid`. */
export function request(child, message, timeoutMs = 30_000) {
  const rid = ++nextRequestId;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`no IPC reply to ${message.type} within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (reply) => {
      if (reply?.rid !== rid) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      if (reply.error) reject(new Error(reply.error));
      else resolve(reply);
    };
    child.on('message', onMessage);
    child.send({ ...message, rid });
  });
}

/** Waits for the next IPC message of `type` from the child. */
export function nextMessage(child, type, timeoutMs = 120_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`no "${type}" message within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (msg) => {
      if (msg?.type !== type) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(msg);
    };
    child.on('message', onMessage);
  });
}

/** SIGTERM (children stop gracefully, which also lets --cpu-prof write its profile), SIGKILL after `graceMs`. */
export function stopChild(handle, graceMs = 5000) {
  const child = handle?.child ?? handle;
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Node flags for a child: `--expose-gc`, plus `--cpu-prof` into `$BENCH_CPU_PROF/<role>` when that env var
 * is set, plus V8's garbage-collection trace (`--trace-gc-nvp`, one line per collection on the child's
 * stdout, which startChild passes on to stderr under the child's name) with `BENCH_TRACE_GC=1`.
 */
export function childExecArgv(role, { exposeGc = false } = {}) {
  const argv = [];
  if (exposeGc) argv.push('--expose-gc');
  const dir = process.env.BENCH_CPU_PROF;
  if (dir) argv.push('--cpu-prof', `--cpu-prof-dir=${dir}/${role}`);
  if (process.env.BENCH_TRACE_GC === '1') argv.push('--trace-gc-nvp');
  return argv;
}

/**
 * Child side: answers `{ type: 'mem' }` with process.memoryUsage() (after global.gc() when exposed) and
 * `{ type: 'cpu' }` with the CPU time used so far (user + system, ms),
 * runs `onStop` on SIGTERM or when the parent goes away, then exits.
 */
export function serveChild(onStop = async () => {}, handlers = {}) {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await onStop();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  process.on('message', async (msg) => {
    if (!msg || typeof msg !== 'object') return;
    try {
      if (msg.type === 'mem') {
        if (typeof global.gc === 'function') {
          global.gc();
          await new Promise((r) => setTimeout(r, 50));
          global.gc();
        }
        process.send({ rid: msg.rid, gc: typeof global.gc === 'function', ...process.memoryUsage() });
      } else if (msg.type === 'cpu') {
        const { user, system } = process.cpuUsage();
        process.send({ rid: msg.rid, cpuMs: (user + system) / 1000 });
      } else if (handlers[msg.type]) {
        process.send({ rid: msg.rid, ...(await handlers[msg.type](msg)) });
      }
    } catch (err) {
      process.send({ rid: msg.rid, error: err instanceof Error ? err.message : String(err) });
    }
  });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
