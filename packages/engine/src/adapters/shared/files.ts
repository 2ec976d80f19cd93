import { type FileHandle, mkdir, open, realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/** File helpers for the adapters that keep their data in a folder (the `file_based` KvStore and those to come). */

/**
 * Modes of what an adapter creates: its data folder is private to the engine's user (other users of a
 * shared machine cannot list or read the data), and so are its files. Existing folders keep their mode.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** The `code` of a Node system error (`ENOENT`, `EEXIST`, …), or undefined for anything else. */
export function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** The message of an error, or the text of anything else thrown, for error messages and warnings. */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Makes a directory entry (a created, renamed or deleted file) durable. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch (err) {
    // Some platforms cannot fsync a directory (Windows, some network file systems): nothing more to do there.
    const code = errnoCode(err);
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EBADF' && code !== 'ENOTSUP') throw err;
  } finally {
    await fh?.close().catch(() => {});
  }
}

/**
 * `mkdir -p`, one level at a time. Node's own recursive mkdir retries forever where the kernel answers
 * ENOENT to creating a directory whose parent exists (e.g. under /proc): start-up must fail, not hang.
 * A path that exists and is not a directory rejects with an error whose code is `EEXIST`. `dir` itself,
 * when created, gets `mode` (missing parents the usual mode).
 */
export async function makeDirectory(dir: string, mode?: number): Promise<void> {
  const missing: string[] = [];
  for (let current = dir; ; ) {
    try {
      await stat(current);
      break;
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
      missing.push(current);
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  for (const path of missing.reverse()) {
    try {
      await mkdir(path, path === dir ? { mode } : undefined);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err; // created meanwhile by someone else: fine if it is a directory
    }
  }
  if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'EEXIST' });
}

/**
 * Creates a store's folder private to the engine user (PRIVATE_DIR_MODE, when it creates it) and returns
 * its real path; rejects with an Error whose message says why, ready to follow `cannot create … ${dir}: `.
 */
export async function makePrivateDirectory(dir: string): Promise<string> {
  try {
    await makeDirectory(dir, PRIVATE_DIR_MODE);
    return await realpath(dir);
  } catch (err) {
    throw new Error(errnoCode(err) === 'EEXIST' ? 'the path exists and is not a directory' : describeError(err));
  }
}

/** Writes all of `data` at the file's current position (a single `write` may write less). */
export async function writeAll(fh: FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await fh.write(data, offset, data.length - offset, null);
    offset += bytesWritten;
  }
}
