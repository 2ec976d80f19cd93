import { readdir } from 'node:fs/promises';
import { FlintError } from '@flint/protocol';

/**
 * The folder of a `file_based` builtin queue store:
 * - `LOCK`: the engine process using the folder (adapters/shared/lock.ts).
 * - `snapshot.dat`: every message and dead letter as of the start of log generation G (compaction.ts):
 *   a header frame `{t:'h', format, generation: G, live, dead}`, one frame per message (its data as
 *   the body), a trailer `{t:'e', entries}`.
 * - `log-<generation>.dat`: the changes made after that point, one frame per change (records.ts).
 * Every file is a sequence of checksummed frames (frame.ts). Messages' data stay in these files: the
 * engine keeps an index in memory and reads a message's data by offset when it is delivered.
 */

export const SNAPSHOT = 'snapshot.dat';
export const SNAPSHOT_TMP = 'snapshot.dat.tmp';
export const SNAPSHOT_FORMAT = 1;
const LOG_NAME = /^log-(\d+)\.dat$/;

export function logName(generation: number): string {
  return `log-${String(generation).padStart(8, '0')}.dat`;
}

/** Log generations found in the folder, ascending. */
export async function listLogs(dir: string): Promise<Array<[number, string]>> {
  const logs: Array<[number, string]> = [];
  for (const name of await readdir(dir)) {
    const match = LOG_NAME.exec(name);
    if (match) logs.push([Number(match[1]), name]);
  }
  return logs.sort((a, b) => a[0] - b[0]);
}

export function unavailable(message: string, path: string): FlintError {
  return new FlintError('queue_unavailable', message, { details: { path } });
}
