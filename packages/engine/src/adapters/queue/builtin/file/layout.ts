import { FlintError } from '@flint/protocol';
import { logGenerations } from '../../../shared/log-generations.js';

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
export const { logName, listLogs } = logGenerations('dat');

export function unavailable(message: string, path: string): FlintError {
  return new FlintError('queue_unavailable', message, { details: { path } });
}
