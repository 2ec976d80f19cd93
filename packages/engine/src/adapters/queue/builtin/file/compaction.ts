import { type FileHandle, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE, describeError, fsyncDir, writeAll } from '../../../shared/files.js';
import type { GroupCommitLog } from '../../../shared/group-commit.js';
import type { AdapterLog } from '../../../shared/log.js';
import type { MemoryQueueBackend } from '../memory-backend.js';
import type { DeadEntry, StoredMessage } from '../memory-queue.js';
import { BodyFile, PENDING, pendingBody } from './bodies.js';
import { encodeFrame } from './frame.js';
import type { FileJournal } from './journal.js';
import { SNAPSHOT, SNAPSHOT_FORMAT, SNAPSHOT_TMP, listLogs, logName } from './layout.js';
import { deadPutFrame, putFrame } from './records.js';

/**
 * Compaction: once the current log is full, a new log generation starts (between two batches) and
 * the messages and dead letters of that moment, each with its data copied from where it lies, are
 * written to `snapshot.dat.tmp` in the background, fsynced, renamed over `snapshot.dat`, the folder
 * fsynced; then the index points into the new snapshot and older files are closed and deleted.
 *
 * Records queued at the switch are both in the copy and in the new log: replaying them again is
 * harmless (records.ts). A crash at any step leaves either the old snapshot and every log since, or
 * the new snapshot and the logs since: both replay to the same state.
 *
 * "Full" grows with the data: a log is compacted once it holds `compactAfterBytes` and at least as
 * much as the last snapshot, so a queue that only grows is copied O(log n) times, not once per
 * `compactAfterBytes`.
 */

/** Thrown inside a compaction when the store is closing: the snapshot is abandoned (the logs still hold everything). */
const ABORTED = Symbol('compaction aborted');
const WRITE_CHUNK = 1024 * 1024;
const READ_WINDOW = 1024 * 1024;

interface CapturedQueue {
  name: string;
  /** Messages not dead, in publish order. */
  live: StoredMessage[];
  /** Of those, the ones waiting for a time. */
  timing: Map<StoredMessage, { dueAt: number | undefined; retry: boolean }>;
  dead: DeadEntry[];
}

export interface CompactorOptions {
  dir: string;
  /** The generation of the log being appended to. */
  generation: number;
  compactAfterBytes: number;
  /** Compact with the next write (several logs were found at opening), not only once the log is full. */
  compactSoon: boolean;
  snapshotBytes: number;
  logger: AdapterLog;
  stats: { compactions: number };
  /** True once the store is closing: a snapshot being written is abandoned. */
  closing: () => boolean;
}

export class Compactor {
  private readonly dir: string;
  private generation: number;
  private nextCompactionAt: number;
  private running: Promise<void> | null = null;

  constructor(
    private readonly options: CompactorOptions,
    /** Every file the index points into (the store's set: compaction adds the snapshot and retires the rest). */
    private readonly files: Set<BodyFile>,
  ) {
    this.dir = options.dir;
    this.generation = options.generation;
    this.nextCompactionAt = options.compactSoon ? 0 : this.threshold(options.snapshotBytes);
  }

  /** Whether the log (`logBytes` long) should be compacted now: it is full and no compaction is running. */
  due(logBytes: number): boolean {
    return !this.running && logBytes >= this.nextCompactionAt;
  }

  /**
   * Switches `log` to a new generation and writes the snapshot of `backend`'s queues in the
   * background. Call it only between two batches: the state right now then covers every record of the older logs.
   */
  async start(log: GroupCommitLog, journal: FileJournal, backend: MemoryQueueBackend): Promise<void> {
    const generation = this.generation + 1;
    const path = join(this.dir, logName(generation));
    let next: FileHandle | undefined;
    let reader: BodyFile | undefined;
    try {
      next = await open(path, 'a', PRIVATE_FILE_MODE);
      reader = await BodyFile.open(path);
      await fsyncDir(this.dir);
    } catch (err) {
      await next?.close().catch(() => {});
      await reader?.close();
      this.options.logger.warn(`queue store ${this.dir}: cannot start a new log for compaction (${describeError(err)}); will retry later`);
      this.nextCompactionAt = log.bytes + this.options.compactAfterBytes;
      return;
    }
    const older = [...this.files];
    const previous = log.switchTo(next);
    journal.current = reader;
    this.files.add(reader);
    this.generation = generation;
    this.nextCompactionAt = Number.POSITIVE_INFINITY; // set again once the snapshot is written
    const copy = capture(backend);
    this.running = this.writeSnapshot(generation, copy, older).finally(() => {
      this.running = null;
    });
    await previous.close().catch(() => {});
  }

  /** Resolves once no compaction runs (a running one ends early when the store is closing). */
  async settle(): Promise<void> {
    while (this.running) await this.running;
  }

  private threshold(snapshotBytes: number): number {
    return Math.max(this.options.compactAfterBytes, snapshotBytes);
  }

  private async writeSnapshot(generation: number, copy: CapturedQueue[], older: BodyFile[]): Promise<void> {
    const tmpPath = join(this.dir, SNAPSHOT_TMP);
    const entries = copy.reduce((sum, q) => sum + q.live.length + q.dead.length, 0);
    // Where each copied message's data lands in the snapshot, in copy order (live, then dead, per queue).
    const bodyAt = new Float64Array(entries);
    const bodyLength = new Uint32Array(entries); // a frame's payload length is a u32
    let fh: FileHandle | undefined;
    let snapshot: BodyFile | undefined;
    let size = 0;
    try {
      fh = await open(tmpPath, 'w', PRIVATE_FILE_MODE);
      const out = fh;
      const reader = new WindowReader();
      let chunk: Buffer[] = [];
      let chunkBytes = 0;
      let n = 0;
      const push = async (encoded: { frame: Buffer; bodyOffset: number; bodyLength: number }) => {
        bodyAt[n] = size + encoded.bodyOffset;
        bodyLength[n] = encoded.bodyLength;
        n++;
        chunk.push(encoded.frame);
        chunkBytes += encoded.frame.length;
        size += encoded.frame.length;
        if (chunkBytes >= WRITE_CHUNK) await flush();
      };
      const flush = async () => {
        await writeAll(out, Buffer.concat(chunk, chunkBytes));
        chunk = [];
        chunkBytes = 0;
        if (this.options.closing()) throw ABORTED;
      };
      const header = encodeFrame(JSON.stringify({ t: 'h', format: SNAPSHOT_FORMAT, generation, entries })).frame;
      chunk.push(header);
      chunkBytes += header.length;
      size += header.length;
      for (const q of copy) {
        for (const msg of q.live) {
          const timing = q.timing.get(msg);
          await push(putFrame(q.name, msg, await reader.dataOf(msg), timing?.dueAt, timing?.retry));
        }
        for (const entry of q.dead) await push(deadPutFrame(q.name, entry, await reader.dataOf(entry.msg)));
      }
      const trailer = encodeFrame(JSON.stringify({ t: 'e', entries })).frame;
      chunk.push(trailer);
      chunkBytes += trailer.length;
      size += trailer.length;
      await flush();
      await fh.sync();
      await fh.close();
      fh = undefined;
      // Opened before the rename: the handle stays on this file whatever later compactions rename over it.
      snapshot = await BodyFile.open(tmpPath);
      await rename(tmpPath, join(this.dir, SNAPSHOT));
      await fsyncDir(this.dir);
    } catch (err) {
      await fh?.close().catch(() => {});
      await snapshot?.close();
      await unlink(tmpPath).catch(() => {});
      if (err !== ABORTED) this.options.logger.warn(`queue store ${this.dir}: compaction failed (${describeError(err)}); the logs still hold every change`);
      this.nextCompactionAt = this.threshold(size);
      return;
    }
    // The snapshot is in place: the index points into it, and the older files are no longer needed.
    let n = 0;
    const repoint = (msg: StoredMessage) => {
      msg.body = snapshot;
      msg.bodyAt = bodyAt[n] as number;
      msg.bodyLength = bodyLength[n] as number;
      msg.data = undefined;
      n++;
    };
    for (const q of copy) {
      for (const msg of q.live) repoint(msg);
      for (const entry of q.dead) repoint(entry.msg);
    }
    this.files.add(snapshot);
    for (const file of older) {
      this.files.delete(file);
      file.retire();
    }
    this.options.stats.compactions++;
    this.nextCompactionAt = this.threshold(size);
    try {
      for (const [gen, name] of await listLogs(this.dir)) if (gen < generation) await unlink(join(this.dir, name));
    } catch (err) {
      this.options.logger.warn(
        `queue store ${this.dir}: cannot delete old logs after compaction (${describeError(err)}); they are ignored and retried next time`,
      );
    }
  }
}

/** The queues' messages and dead letters right now (references and timings only: the data is read later). */
function capture(backend: MemoryQueueBackend): CapturedQueue[] {
  const out: CapturedQueue[] = [];
  for (const q of backend.allQueues()) {
    const live: StoredMessage[] = [];
    const timing = new Map<StoredMessage, { dueAt: number | undefined; retry: boolean }>();
    q.liveMessages((msg, dueAt, retry) => {
      live.push(msg);
      if (dueAt !== undefined || retry) timing.set(msg, { dueAt, retry });
    });
    live.sort((a, b) => a.seq - b.seq);
    const dead = q.deadList().slice();
    if (live.length > 0 || dead.length > 0) out.push({ name: q.name, live, timing, dead });
  }
  return out;
}

/** Reads messages' data for a snapshot: mostly in file order, so through a 1 MiB window rather than one read per message. */
class WindowReader {
  private file: BodyFile | undefined;
  private start = 0;
  private window: Buffer = Buffer.alloc(0);

  async dataOf(msg: StoredMessage): Promise<string | Buffer> {
    const source = msg.body;
    if (source === undefined) return JSON.stringify(msg.data) ?? 'null';
    if (source === PENDING) return pendingBody(msg);
    const file = source as BodyFile;
    const at = msg.bodyAt as number;
    const length = msg.bodyLength as number;
    if (file !== this.file || at < this.start || at + length > this.start + this.window.length) {
      this.window = await file.readWindow(at, length, Math.max(length, READ_WINDOW));
      this.file = file;
      this.start = at;
    }
    return this.window.subarray(at - this.start, at - this.start + length);
  }
}
