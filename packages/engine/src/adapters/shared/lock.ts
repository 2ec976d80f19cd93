import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { FlintError } from '@flint/protocol';
import { PRIVATE_FILE_MODE, describeError, errnoCode } from './files.js';

/**
 * The `LOCK` file of a folder a file-based adapter keeps its data in (the `kv` state directory, the
 * `builtin` queue directory): one engine process at a time. The file holds
 * `{pid, hostname, started, proc_start, nonce}`; a lock whose process is gone (or a zombie, or its pid
 * now another process's) is stale and taken over.
 * Within one process a registry of locked folders (shared by every copy of this module through
 * globalThis) stops two stores from opening the same folder.
 */

interface LockInfo {
  pid: number;
  hostname: string;
  started: string;
  /** Linux only: the process's start time in clock ticks since boot (/proc/<pid>/stat), to tell a reused pid. */
  proc_start?: string;
  nonce: string;
}

const REGISTRY_KEY = Symbol.for('flint.kv.file.lockedDirs');
const registry = globalThis as { [REGISTRY_KEY]?: Set<string> };
const lockedHere: Set<string> = registry[REGISTRY_KEY] ?? new Set<string>();
registry[REGISTRY_KEY] = lockedHere;

/** How refusals are worded: the error code and what the folder is called (`state directory`). */
export interface LockWording {
  code: 'store_unavailable' | 'queue_unavailable';
  folder: string;
}

const STATE_DIRECTORY: LockWording = { code: 'store_unavailable', folder: 'state directory' };

export interface HeldLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * From /proc/<pid>/stat: the process's state (field 3: R, S, D, Z for a zombie, …) and its start
 * time (field 22, clock ticks since boot); undefined where there is no /proc (or no such process).
 */
function procStat(pid: number): { state: string; start: string | undefined } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) is in parentheses and may contain spaces: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', start: fields[19] };
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote `info` is still running: true, false, or undefined (cannot tell: another host). */
function holderAlive(info: LockInfo): boolean | undefined {
  if (info.hostname !== hostname()) return undefined;
  // Our own pid but not in this process's registry: a previous incarnation that had the same pid (e.g. pid 1 in a container).
  if (info.pid === process.pid) return false;
  try {
    process.kill(info.pid, 0);
  } catch (err) {
    if (errnoCode(err) === 'ESRCH') return false;
    // EPERM: it exists but belongs to someone else.
  }
  const stat = procStat(info.pid);
  // A zombie (killed, not yet reaped by its parent) still answers kill(pid, 0) but holds nothing.
  if (stat?.state === 'Z' || stat?.state === 'X') return false;
  if (info.proc_start !== undefined && stat?.start !== undefined && stat.start !== info.proc_start) return false; // the pid was reused
  return true;
}

function parseLock(text: string): LockInfo | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockInfo>;
    if (typeof value.pid === 'number' && Number.isSafeInteger(value.pid) && value.pid > 0 && typeof value.hostname === 'string') {
      return { started: '', nonce: '', ...value } as LockInfo;
    }
  } catch {}
  return undefined;
}

function lockedError(dir: string, info: LockInfo | undefined, lockPath: string, w: LockWording): FlintError {
  if (!info) {
    return new FlintError(w.code, `${w.folder} ${dir} is locked (${lockPath} exists but cannot be read; if no engine is using the folder, delete it)`);
  }
  const where = info.hostname === hostname() ? '' : ` on host ${info.hostname}`;
  const hint = info.hostname === hostname() ? '' : `; if no engine is running there, delete ${lockPath}`;
  return new FlintError(w.code, `${w.folder} ${dir} is locked by process ${info.pid}${where} (another engine is using it${hint})`, {
    details: { path: dir, pid: info.pid, hostname: info.hostname },
  });
}

/**
 * Locks `dir` (which must exist; `realDir` is its real path, the registry key) for this process or
 * rejects with a `store_unavailable` (or `wording.code`) FlintError naming the folder and the holder's pid.
 */
export async function acquireLock(dir: string, realDir: string, wording: LockWording = STATE_DIRECTORY): Promise<HeldLock> {
  if (lockedHere.has(realDir)) {
    throw new FlintError(wording.code, `${wording.folder} ${dir} is locked by process ${process.pid} (another store in this engine process is using it)`, {
      details: { path: dir, pid: process.pid },
    });
  }
  lockedHere.add(realDir);
  try {
    return await lockFile(dir, realDir, wording);
  } catch (err) {
    lockedHere.delete(realDir);
    throw err;
  }
}

async function lockFile(dir: string, realDir: string, w: LockWording): Promise<HeldLock> {
  const lockPath = join(dir, 'LOCK');
  const info: LockInfo = { pid: process.pid, hostname: hostname(), started: new Date().toISOString(), nonce: randomUUID() };
  const start = procStat(process.pid)?.start;
  if (start !== undefined) info.proc_start = start;
  const text = `${JSON.stringify(info)}\n`;
  const tmpPath = join(dir, `LOCK.${process.pid}.${info.nonce}.tmp`);
  const fail = (err: unknown) => new FlintError(w.code, `cannot write the lock file in ${w.folder} ${dir}: ${describeError(err)}`, { details: { path: dir } });

  // Written to a temporary file first and linked into place, so LOCK never exists half-written.
  try {
    const fh = await open(tmpPath, 'wx', PRIVATE_FILE_MODE);
    try {
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw fail(err);
  }
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await createLock(tmpPath, lockPath, text)) return held(lockPath, info.nonce, realDir);
      let current: string;
      try {
        current = await readFile(lockPath, 'utf8');
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') continue; // released meanwhile: try again
        throw fail(err);
      }
      const holder = parseLock(current);
      if (!holder || holderAlive(holder) !== false) throw lockedError(dir, holder, lockPath, w);
      await removeStale(lockPath, current, `${lockPath}.stale-${info.nonce}`);
    }
    throw new FlintError(w.code, `${w.folder} ${dir} is locked: ${lockPath} kept changing while it was being taken (is another engine starting?)`, {
      details: { path: dir },
    });
  } catch (err) {
    throw err instanceof FlintError ? err : fail(err);
  } finally {
    await unlink(tmpPath).catch(() => {});
  }
}

/** Creates LOCK atomically from the prepared file; false when it already exists. */
async function createLock(tmpPath: string, lockPath: string, text: string): Promise<boolean> {
  try {
    await link(tmpPath, lockPath);
    return true;
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
  }
  // A file system without hard links: exclusive create (a crash between create and write leaves an unreadable LOCK).
  try {
    await writeFile(lockPath, text, { flag: 'wx', mode: PRIVATE_FILE_MODE });
    return true;
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') return false;
    throw err;
  }
}

/**
 * Removes a stale LOCK whose content was `staleText`. It is renamed aside first (atomic): when two
 * engines take over the same stale lock at once, the one that finds a fresh lock in its hands (the
 * other engine's) puts it back instead of deleting it.
 */
async function removeStale(lockPath: string, staleText: string, asidePath: string): Promise<void> {
  try {
    await rename(lockPath, asidePath);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return;
    throw err;
  }
  const moved = await readFile(asidePath, 'utf8').catch(() => staleText);
  if (moved !== staleText) await link(asidePath, lockPath).catch(() => {});
  await unlink(asidePath).catch(() => {});
}

function held(lockPath: string, nonce: string, realDir: string): HeldLock {
  let released = false;
  return {
    path: lockPath,
    async release() {
      if (released) return;
      released = true;
      try {
        const current = parseLock(await readFile(lockPath, 'utf8'));
        if (current?.nonce === nonce) await unlink(lockPath);
      } catch {
        // Already gone, or unreadable: nothing of ours to remove.
      } finally {
        lockedHere.delete(realDir);
      }
    },
  };
}
