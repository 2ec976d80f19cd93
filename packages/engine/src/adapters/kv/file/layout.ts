import { readdir } from 'node:fs/promises';
import { FlintError } from '@flint/protocol';

/**
 * `file_based`: the state lives in memory (the in-memory store's layout) and every change is appended
 * to a log in the state directory before its call resolves.
 *
 * Directory layout:
 * - `LOCK`: the engine process using the folder (see ../../shared/lock.ts).
 * - `snapshot.jsonl`: the full state as of the start of log generation G: a header line
 *   `{"o":"h","format":1,"generation":G,"entries":N}`, N set records, a trailer `{"o":"e","entries":N}`.
 * - `log-<generation>.jsonl`: the changes made after that point, one record per line. Every line is
 *   `<crc32 hex8> <json>\n` (record.ts).
 *
 * How the files are written and read back: ../../shared/group-commit.ts (the log, durability), snapshot.ts
 * (compaction), recovery.ts (opening); store.ts ties them to the KvStore methods.
 */

export const SNAPSHOT = 'snapshot.jsonl';
export const SNAPSHOT_TMP = 'snapshot.jsonl.tmp';
export const SNAPSHOT_FORMAT = 1;
const LOG_NAME = /^log-(\d+)\.jsonl$/;

export function logName(generation: number): string {
  return `log-${String(generation).padStart(8, '0')}.jsonl`;
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
  return new FlintError('store_unavailable', message, { details: { path } });
}
