import { FlintError } from '@flint/protocol';
import { logGenerations } from '../../shared/log-generations.js';

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
export const { logName, listLogs } = logGenerations('jsonl');

export function unavailable(message: string, path: string): FlintError {
  return new FlintError('store_unavailable', message, { details: { path } });
}
