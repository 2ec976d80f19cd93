import { type FileHandle, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE, errnoCode, fsyncDir } from '../../../shared/files.js';
import type { AdapterLog } from '../../../shared/log.js';
import type { DeadEntry, StoredMessage } from '../memory-queue.js';
import { BodyFile } from './bodies.js';
import type { ScannedFrame } from './frame.js';
import { scanFrames } from './frame.js';
import { SNAPSHOT, SNAPSHOT_FORMAT, SNAPSHOT_TMP, listLogs, logName, unavailable } from './layout.js';

/**
 * Opening: the snapshot is loaded, then every log of its generation or later is replayed in order,
 * into an index per queue (messages in publish order, their data left in the files). A damaged frame
 * ends its file: at the end of the last log (a write torn by a crash) it is cut off with one warning,
 * so later appends are clean.
 */

/** One queue as found on disk. Maps keep insertion order: publish order, and failure order for the dead. */
export interface RecoveredQueue {
  live: Map<string, StoredMessage>;
  /** Messages that wait for a time: delayed (`retry` false) or waiting for a retry. */
  timing: Map<string, { dueAt: number; retry: boolean }>;
  dead: Map<string, DeadEntry>;
}

export interface Recovered {
  queues: Map<string, RecoveredQueue>;
  /** The generation of the log to append to, that log open for appending (damaged tail cut off) and its length. */
  generation: number;
  log: FileHandle;
  logBytes: number;
  /** Every file the index points into; `current` is the log being appended to. */
  files: BodyFile[];
  current: BodyFile;
  /** Several logs were replayed (left by crashes): compact soon. */
  compactSoon: boolean;
  /** Size of the snapshot loaded (0 without one). */
  snapshotBytes: number;
}

export async function recover(dir: string, logger: AdapterLog): Promise<Recovered> {
  await unlink(join(dir, SNAPSHOT_TMP)).catch(() => {}); // an unfinished compaction
  const queues = new Map<string, RecoveredQueue>();
  const files: BodyFile[] = [];
  let log: FileHandle | undefined;
  try {
    const snapshot = await loadSnapshot(dir, queues, files);
    const logs = await listLogs(dir);
    const live = logs.filter(([generation]) => snapshot === undefined || generation >= snapshot.generation);
    for (const [generation, name] of logs) {
      // Left behind by a crash after the snapshot replaced them.
      if (snapshot !== undefined && generation < snapshot.generation) await unlink(join(dir, name)).catch(() => {});
    }
    for (let i = 0; i < live.length - 1; i++) await replayLog(join(dir, live[i]![1]), queues, files, logger, undefined);
    const last = live[live.length - 1];
    const generation = last ? last[0] : (snapshot?.generation ?? 0);
    const path = join(dir, logName(generation));
    log = await open(path, 'a', PRIVATE_FILE_MODE);
    let logBytes = 0;
    let current: BodyFile;
    if (last) {
      ({ logBytes, file: current } = await replayLog(path, queues, files, logger, log));
    } else {
      await fsyncDir(dir);
      current = await BodyFile.open(path);
      files.push(current);
    }
    return { queues, generation, log, logBytes, files, current, compactSoon: live.length > 1, snapshotBytes: snapshot?.bytes ?? 0 };
  } catch (err) {
    await log?.close().catch(() => {});
    for (const file of files) await file.close();
    throw err;
  }
}

interface SnapshotHeader {
  generation: number;
  format: number;
  entries: number;
}

async function loadSnapshot(dir: string, queues: Map<string, RecoveredQueue>, files: BodyFile[]): Promise<{ generation: number; bytes: number } | undefined> {
  const path = join(dir, SNAPSHOT);
  let file: BodyFile;
  try {
    file = await BodyFile.open(path);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  files.push(file);
  let header: SnapshotHeader | undefined;
  let trailer: number | undefined;
  let loaded = 0;
  let stray = false;
  const { goodEnd, size } = await scanFrames(file.handle, (frame) => {
    const t = frame.meta.t;
    if (!header) {
      if (t === 'h') header = frame.meta as unknown as SnapshotHeader;
      else stray = true;
    } else if (trailer !== undefined) stray = true;
    else if (t === 'e') trailer = Number(frame.meta.entries);
    else if ((t === 'p' || t === 'k') && apply(queues, frame, file)) loaded++;
    else stray = true;
  });
  const fatal = (why: string) =>
    unavailable(
      `queue snapshot ${path} is damaged (${why}); the queues cannot be opened safely — restore the folder from a backup, or move the snapshot away to start from the logs alone`,
      path,
    );
  if (!header) throw fatal('no valid header');
  if (header.format !== SNAPSHOT_FORMAT) throw fatal(`format ${header.format} is not supported by this version`);
  if (goodEnd < size) throw fatal(`a damaged record at byte ${goodEnd}`);
  if (trailer === undefined || stray || trailer !== loaded || header.entries !== loaded) throw fatal('it does not end with its trailer');
  return { generation: Number(header.generation), bytes: size };
}

/** Applies a log's records. The active log (`active`: its handle open for appending) gets its damaged tail cut off. */
async function replayLog(
  path: string,
  queues: Map<string, RecoveredQueue>,
  files: BodyFile[],
  logger: AdapterLog,
  active: FileHandle | undefined,
): Promise<{ logBytes: number; file: BodyFile }> {
  const file = await BodyFile.open(path);
  files.push(file);
  let unknown = 0;
  const { goodEnd, size } = await scanFrames(file.handle, (frame) => {
    if (!apply(queues, frame, file)) unknown++;
  });
  if (unknown > 0) logger.warn(`queue log ${path}: skipped ${unknown} record(s) of an unknown kind (written by a newer version?)`);
  if (goodEnd < size) {
    logger.warn(
      `queue log ${path}: ${active ? 'cut off' : 'ignored'} ${size - goodEnd} bytes of an incomplete or damaged last record at byte ${goodEnd} (a write torn by a crash; acknowledged messages are not affected)`,
    );
    if (active) {
      await active.truncate(goodEnd);
      await active.sync();
    }
  }
  return { logBytes: goodEnd, file };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Applies one record to the index; false when it is not one this version knows. */
function apply(queues: Map<string, RecoveredQueue>, frame: ScannedFrame, file: BodyFile): boolean {
  const m = frame.meta;
  const name = str(m.q);
  const id = str(m.id);
  if (name === undefined || id === undefined) return false;
  let q = queues.get(name);
  if (!q) {
    q = { live: new Map(), timing: new Map(), dead: new Map() };
    queues.set(name, q);
  }
  switch (m.t) {
    case 'p':
    case 'k': {
      // A record the snapshot already holds may come again in the first log after it: the message keeps its place.
      const msg = q.live.get(id) ?? q.dead.get(id)?.msg ?? messageOf(m, id);
      msg.body = file;
      msg.bodyAt = frame.bodyAt;
      msg.bodyLength = frame.bodyLength;
      msg.attempts = num(m.a) ?? 0;
      if (m.t === 'k') {
        q.dead.set(id, { msg, error: str(m.e) ?? '', attempts: msg.attempts, failedAt: num(m.f) ?? 0 });
        return true;
      }
      if (!q.dead.has(id)) q.live.set(id, msg);
      setTiming(q, id, num(m.due), m.r === 1);
      return true;
    }
    case 'd': {
      const msg = q.live.get(id);
      if (msg) msg.attempts = num(m.a) ?? msg.attempts;
      q.timing.delete(id); // it was delivered: whatever it waited for is over
      return true;
    }
    case 'r': {
      const msg = q.live.get(id);
      if (msg) {
        msg.attempts = num(m.a) ?? msg.attempts;
        setTiming(q, id, num(m.due), true);
      }
      return true;
    }
    case 'a':
      q.live.delete(id);
      q.timing.delete(id);
      return true;
    case 'x': {
      const msg = q.live.get(id) ?? q.dead.get(id)?.msg;
      if (!msg) return true;
      q.live.delete(id);
      q.timing.delete(id);
      q.dead.delete(id); // died again (after a redrive): newest failure last
      const attempts = num(m.a) ?? msg.attempts;
      q.dead.set(id, { msg, error: str(m.e) ?? '', attempts, failedAt: num(m.f) ?? 0 });
      return true;
    }
    case 'v': {
      const entry = q.dead.get(id);
      if (!entry) return true; // the snapshot has it back already
      q.dead.delete(id);
      entry.msg.attempts = 0;
      q.live.delete(id);
      q.live.set(id, entry.msg); // last: a redrive appends
      q.timing.delete(id);
      return true;
    }
    case 'c':
      q.dead.delete(id);
      return true;
    default:
      return false;
  }
}

function setTiming(q: RecoveredQueue, id: string, dueAt: number | undefined, retry: boolean): void {
  if (dueAt === undefined && !retry) q.timing.delete(id);
  else q.timing.set(id, { dueAt: dueAt ?? 0, retry });
}

function messageOf(m: Record<string, unknown>, id: string): StoredMessage {
  // Every field set, in one order: a million of these share one shape.
  return {
    id,
    seq: 0,
    data: undefined,
    attempts: 0,
    publishedAt: num(m.at) ?? 0,
    group: str(m.g),
    traceparent: str(m.tp),
    baggage: str(m.bg),
    functionId: str(m.fn),
    body: undefined,
    bodyAt: 0,
    bodyLength: 0,
  };
}
