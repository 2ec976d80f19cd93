import { type FileHandle, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE, errnoCode, fsyncDir } from '../../shared/files.js';
import type { AdapterLog } from '../../shared/log.js';
import { SNAPSHOT, SNAPSHOT_FORMAT, SNAPSHOT_TMP, listLogs, logName, unavailable } from './layout.js';
import { decodeLine, scanLines } from './record.js';

/**
 * Recovery: the snapshot is loaded, then every log of its generation or later is replayed in order.
 * Damaged lines are skipped, never fatal: at the end of a log (a write torn by a crash) they are cut
 * off so later appends are clean; in the middle (corruption) they are reported through the logger.
 */

/** Applies one recovered change to the store's memory (a set, or a delete when `remove`). */
export type ApplyChange = (scope: string, key: string, value: unknown, remove: boolean) => void;

/** Where appending goes on after recovery. */
export interface Recovered {
  /** The generation of the log to append to. */
  generation: number;
  /** That log, open for appending (its damaged tail cut off). */
  log: FileHandle;
  /** The length of its valid part. */
  logBytes: number;
  /** Several logs were replayed (left by crashes): compact with the next write. */
  compactSoon: boolean;
}

/** Loads the state of the (locked) folder `dir` through `apply` and opens the log to append to. */
export async function recover(dir: string, apply: ApplyChange, logger: AdapterLog): Promise<Recovered> {
  await unlink(join(dir, SNAPSHOT_TMP)).catch(() => {}); // an unfinished compaction
  const snapshotGeneration = await loadSnapshot(dir, apply, logger);
  const logs = await listLogs(dir);
  const live = logs.filter(([generation]) => snapshotGeneration === undefined || generation >= snapshotGeneration);
  for (const [generation, name] of logs) {
    // Left behind by a crash after the snapshot replaced them.
    if (snapshotGeneration !== undefined && generation < snapshotGeneration) await unlink(join(dir, name)).catch(() => {});
  }
  for (let i = 0; i < live.length - 1; i++) await replayLog(join(dir, live[i]![1]), apply, logger, undefined);
  const last = live[live.length - 1];
  const generation = last ? last[0] : (snapshotGeneration ?? 0);
  const log = await open(join(dir, logName(generation)), 'a', PRIVATE_FILE_MODE);
  try {
    let logBytes = 0;
    if (last) {
      logBytes = await replayLog(join(dir, last[1]), apply, logger, log);
    } else {
      await fsyncDir(dir);
    }
    return { generation, log, logBytes, compactSoon: live.length > 1 };
  } catch (err) {
    await log.close().catch(() => {});
    throw err;
  }
}

/** Loads snapshot.jsonl if there is one; returns its generation. */
async function loadSnapshot(dir: string, apply: ApplyChange, logger: AdapterLog): Promise<number | undefined> {
  const path = join(dir, SNAPSHOT);
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  let header: { generation: number; entries: number; format: number } | undefined;
  let trailer: number | undefined;
  let loaded = 0;
  let damaged = 0;
  let firstDamage = -1;
  try {
    await scanLines(fh, (line, offset, terminated) => {
      const record = terminated ? decodeLine(line) : undefined;
      if (!header && record?.o === 'h') header = record;
      else if (header && trailer === undefined && record?.o === 's') {
        apply(record.s, record.k, record.v, false);
        loaded++;
      } else if (header && trailer === undefined && record?.o === 'e') trailer = record.entries;
      else {
        damaged++;
        if (firstDamage < 0) firstDamage = offset;
      }
    });
  } finally {
    await fh.close();
  }
  const fatal = (why: string) =>
    unavailable(
      `state snapshot ${path} is damaged (${why}); the store cannot be opened safely — restore the folder from a backup, or move the snapshot away to start from the logs alone`,
      path,
    );
  if (!header) throw fatal('no valid header line');
  if (header.format !== SNAPSHOT_FORMAT) throw fatal(`format ${header.format} is not supported by this version`);
  if (trailer === undefined) throw fatal('it ends before its last line');
  if (damaged > 0 || loaded !== header.entries) {
    logger.warn(`state snapshot ${path}: skipped ${damaged} damaged line(s) (first at byte ${firstDamage}); loaded ${loaded} of ${header.entries} entries`);
  }
  return header.generation;
}

/**
 * Applies a log's records; returns the length of its valid part. The active log (`active`: its handle
 * open for appending) gets its damaged tail cut off.
 */
async function replayLog(path: string, apply: ApplyChange, logger: AdapterLog, active: FileHandle | undefined): Promise<number> {
  const fh = await open(path, 'r');
  let goodEnd = 0;
  const damaged: Array<{ offset: number; length: number }> = [];
  let size: number;
  try {
    size = await scanLines(fh, (line, offset, terminated) => {
      const record = terminated ? decodeLine(line) : undefined;
      if (record?.o === 's') apply(record.s, record.k, record.v, false);
      else if (record?.o === 'd') apply(record.s, record.k, null, true);
      else {
        damaged.push({ offset, length: line.length + (terminated ? 1 : 0) });
        return;
      }
      goodEnd = offset + line.length + 1;
    });
  } finally {
    await fh.close();
  }
  const middle = damaged.filter((d) => d.offset < goodEnd);
  if (middle.length > 0) {
    const bytes = middle.reduce((sum, d) => sum + d.length, 0);
    logger.warn(
      `state log ${path}: skipped ${middle.length} damaged record(s) (${bytes} bytes, first at byte ${middle[0]!.offset}); the records after them were applied`,
    );
  }
  if (goodEnd < size) {
    logger.warn(
      `state log ${path}: ${active ? 'cut off' : 'ignored'} ${size - goodEnd} bytes of an incomplete or damaged last record at byte ${goodEnd} (a write torn by a crash; acknowledged writes are not affected)`,
    );
    if (active) {
      await active.truncate(goodEnd);
      await active.sync();
    }
  }
  return active ? goodEnd : size;
}
