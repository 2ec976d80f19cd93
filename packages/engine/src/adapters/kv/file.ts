import { type FileHandle, open, readdir, realpath, rename, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { FlintError } from '@flint/protocol';
import { describeError, errnoCode, fsyncDir, makeDirectory, writeAll } from '../shared/files.js';
import { type HeldLock, acquireLock } from './file-lock.js';
import { decodeLine, deleteJson, encodeLine, scanLines, setJson } from './file-record.js';
import { MemoryKvStore } from './memory.js';
import type { KvEntry, KvUpdateResult, KvUpdater, KvWriteResult } from './types.js';

/**
 * `file_based`: the state lives in memory (the in-memory store's layout) and every change is appended
 * to a log in the state directory before its call resolves.
 *
 * Directory layout:
 * - `LOCK`: the engine process using the folder (see file-lock.ts).
 * - `snapshot.jsonl`: the full state as of the start of log generation G: a header line
 *   `{"o":"h","format":1,"generation":G,"entries":N}`, N set records, a trailer `{"o":"e","entries":N}`.
 * - `log-<generation>.jsonl`: the changes made after that point, one record per line. Every line is
 *   `<crc32 hex8> <json>\n` (file-record.ts).
 *
 * Durability: a write is applied to memory at once (so concurrent calls never interleave) and its
 * record queued; the call resolves once the batch holding the record is written and fdatasync'ed.
 * Group commit: while one batch is being written and synced, new records gather in the next batch,
 * which is flushed as soon as the first one finishes, so one fsync serves every write that arrived
 * meanwhile. A failed write or fsync makes the store refuse every later call (the log's state is
 * unknown after a failed fsync); a restart replays what reached the disk.
 *
 * Compaction: once the current log holds `compactAfterBytes`, a new log generation starts (between
 * two batches) and a copy of the state at that moment is written to `snapshot.jsonl.tmp` in the
 * background, fsynced, renamed over `snapshot.jsonl`, the folder fsynced, then older logs deleted.
 * Records queued at the switch are in both the copy and the new log; replaying them again is harmless
 * (each record sets or deletes a whole value). A crash at any step leaves either the old snapshot and
 * every log since, or the new snapshot and the logs since — both replay to the same state.
 *
 * Recovery: the snapshot is loaded, then every log of its generation or later is replayed in order.
 * Damaged lines are skipped, never fatal: at the end of a log (a write torn by a crash) they are cut
 * off so later appends are clean; in the middle (corruption) they are reported through `onWarning`.
 */

export interface FileKvStoreOptions {
  /** Start a new log generation and write a snapshot once the current log holds this many bytes. Default 64 MiB. */
  compactAfterBytes?: number;
  /** Non-fatal problems found while opening or compacting (damaged records, a failed compaction). Default: process.emitWarning. */
  onWarning?: (message: string) => void;
}

const SNAPSHOT = 'snapshot.jsonl';
const SNAPSHOT_TMP = 'snapshot.jsonl.tmp';
const SNAPSHOT_FORMAT = 1;
const LOG_NAME = /^log-(\d+)\.jsonl$/;
const SNAPSHOT_CHUNK_CHARS = 1024 * 1024;

function logName(generation: number): string {
  return `log-${String(generation).padStart(8, '0')}.jsonl`;
}

function unavailable(message: string, path: string): FlintError {
  return new FlintError('store_unavailable', message, { details: { path } });
}

/** The JSON text of a value and the copy the store keeps (what a restart would read back). */
function encodeValue(value: unknown): { json: string; stored: unknown } {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    throw new FlintError('invalid_payload', `the value cannot be stored as JSON: ${describeError(err)}`);
  }
  if (json === undefined) return { json: 'null', stored: null };
  const stored = typeof value === 'string' || typeof value === 'boolean' || value === null ? value : JSON.parse(json);
  return { json, stored };
}

interface Batch {
  lines: string[];
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

function createBatch(): Batch {
  let resolveBatch!: () => void;
  let rejectBatch!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolveBatch = res;
    rejectBatch = rej;
  });
  promise.catch(() => {}); // every caller awaits it; this only keeps an unawaited rejection from being reported twice
  return { lines: [], promise, resolve: resolveBatch, reject: rejectBatch };
}

/** Thrown inside a compaction when the store is closing: the snapshot is abandoned (the logs still hold everything). */
const ABORTED = Symbol('compaction aborted');

export class FileKvStore extends MemoryKvStore {
  override readonly kind: string = 'file_based';
  /** Group-commit counters: batches written and fsynced, and the records they held. */
  readonly stats = { flushes: 0, records: 0, compactions: 0 };

  private readonly compactAfterBytes: number;
  private readonly warn: (message: string) => void;
  private lock: HeldLock | undefined;
  private log: FileHandle | undefined;
  private generation = 0;
  private logBytes = 0;
  private nextCompactionAt: number;

  /** Records gathering for the next flush; null when none. */
  private pending: Batch | null = null;
  /** The batch being written and synced; null when none. */
  private inFlight: Batch | null = null;
  /** The flush loop while it runs. */
  private loop: Promise<void> | null = null;
  private compaction: Promise<void> | null = null;
  private failure: FlintError | undefined;
  private closing = false;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly dir: string,
    options: FileKvStoreOptions,
  ) {
    super();
    this.compactAfterBytes = options.compactAfterBytes ?? 64 * 1024 * 1024;
    this.nextCompactionAt = this.compactAfterBytes;
    this.warn = options.onWarning ?? ((message) => process.emitWarning(message, { code: 'FLINT_KV_FILE' }));
  }

  /** Opens (creating it if needed) and locks a state directory, then loads its state. */
  static async open(dir: string, options: FileKvStoreOptions = {}): Promise<FileKvStore> {
    const store = new FileKvStore(resolve(dir), options);
    await store.start();
    return store;
  }

  // --- KvStore -------------------------------------------------------------------------------------

  override async get(scope: string, key: string): Promise<KvEntry> {
    this.check();
    return super.get(scope, key);
  }

  override async list(scope: string): Promise<unknown[]> {
    this.check();
    return super.list(scope);
  }

  override async listGroups(): Promise<string[]> {
    this.check();
    return super.listGroups();
  }

  override async set(scope: string, key: string, value: unknown): Promise<KvWriteResult> {
    this.check();
    const { json, stored } = encodeValue(value);
    const result = this.apply(scope, key, stored, false);
    await this.append(setJson(scope, key, json));
    return result;
  }

  override async delete(scope: string, key: string): Promise<KvWriteResult> {
    this.check();
    const result = this.apply(scope, key, null, true);
    // Nothing to write for a missing key, but the answer rests on earlier writes: wait until they are durable.
    await (result.existed ? this.append(deleteJson(scope, key)) : this.durable());
    return result;
  }

  override async update<R>(scope: string, key: string, updater: KvUpdater<R>): Promise<KvUpdateResult<R>> {
    this.check();
    // Read, compute and apply without yielding, so concurrent updates of one key never interleave.
    const map = this.scopes.get(scope);
    const current: KvEntry = map?.has(key) ? { exists: true, value: map.get(key) } : { exists: false, value: null };
    const { value, extra } = updater(current);
    const { json, stored } = encodeValue(value);
    const write = this.apply(scope, key, stored, false);
    await this.append(setJson(scope, key, json));
    return { ...write, new_value: stored, extra };
  }

  /** Flushes what is queued, abandons a running compaction, closes the log and releases the lock. */
  override close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  // --- write path ----------------------------------------------------------------------------------

  private check(): void {
    if (this.failure) throw this.failure;
    if (this.closing) throw unavailable(`the state store in ${this.dir} is closed`, this.dir);
  }

  /** Queues a record; resolves once it is written and fsynced. */
  private append(json: string): Promise<void> {
    let batch = this.pending;
    if (!batch) {
      batch = createBatch();
      this.pending = batch;
      this.loop ??= this.run();
    }
    batch.lines.push(encodeLine(json));
    return batch.promise;
  }

  /** Resolves once everything queued so far is durable. */
  private durable(): Promise<void> {
    return (this.pending ?? this.inFlight)?.promise ?? Promise.resolve();
  }

  /** The flush loop: one batch at a time, until nothing is queued. */
  private async run(): Promise<void> {
    // Start after the current turn's microtasks, so writes issued together share the first batch.
    await Promise.resolve();
    try {
      while (this.pending && !this.failure) {
        const batch = this.pending;
        this.pending = null;
        this.inFlight = batch;
        try {
          const data = Buffer.from(batch.lines.join(''), 'utf8');
          const log = this.log!;
          await writeAll(log, data);
          await log.datasync();
          this.logBytes += data.length;
          this.stats.flushes++;
          this.stats.records += batch.lines.length;
          batch.resolve();
        } catch (err) {
          this.failure = unavailable(
            `writing the state log in ${this.dir} failed (${describeError(err)}); the store accepts no more calls — restart the engine to recover from what reached the disk`,
            this.dir,
          );
          batch.reject(this.failure);
        } finally {
          this.inFlight = null;
        }
        if (!this.failure && !this.closing && !this.compaction && this.logBytes >= this.nextCompactionAt) await this.startCompaction();
      }
      if (this.failure && this.pending) {
        this.pending.reject(this.failure);
        this.pending = null;
      }
    } catch (err) {
      // Not expected (every step above handles its errors); never leave callers hanging.
      this.failure ??= unavailable(`the state store in ${this.dir} failed: ${describeError(err)}`, this.dir);
      this.pending?.reject(this.failure);
      this.pending = null;
    } finally {
      this.loop = null;
    }
  }

  // --- compaction ----------------------------------------------------------------------------------

  /** Switches to a new log generation (between two batches) and writes the snapshot in the background. */
  private async startCompaction(): Promise<void> {
    const generation = this.generation + 1;
    let next: FileHandle | undefined;
    try {
      next = await open(join(this.dir, logName(generation)), 'a');
      await fsyncDir(this.dir);
    } catch (err) {
      await next?.close().catch(() => {});
      this.warn(`state store ${this.dir}: cannot start a new log for compaction (${describeError(err)}); will retry later`);
      this.nextCompactionAt = this.logBytes + this.compactAfterBytes;
      return;
    }
    const previous = this.log!;
    this.log = next;
    this.generation = generation;
    this.logBytes = 0;
    this.nextCompactionAt = this.compactAfterBytes;
    // The state right now covers every record of the older logs (they were applied before being written).
    const copy = [...this.scopes].map(([scope, map]) => [scope, [...map]] as const);
    this.compaction = this.writeSnapshot(generation, copy).finally(() => {
      this.compaction = null;
    });
    await previous.close().catch(() => {});
  }

  private async writeSnapshot(generation: number, copy: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, unknown]>]>): Promise<void> {
    const tmpPath = join(this.dir, SNAPSHOT_TMP);
    let fh: FileHandle | undefined;
    try {
      fh = await open(tmpPath, 'w');
      const entries = copy.reduce((sum, [, pairs]) => sum + pairs.length, 0);
      let chunk = encodeLine(JSON.stringify({ o: 'h', format: SNAPSHOT_FORMAT, generation, entries }));
      for (const [scope, pairs] of copy) {
        for (const [key, value] of pairs) {
          chunk += encodeLine(setJson(scope, key, JSON.stringify(value) ?? 'null'));
          if (chunk.length >= SNAPSHOT_CHUNK_CHARS) {
            await writeAll(fh, Buffer.from(chunk, 'utf8'));
            chunk = '';
            if (this.closing) throw ABORTED;
          }
        }
      }
      chunk += encodeLine(JSON.stringify({ o: 'e', entries }));
      await writeAll(fh, Buffer.from(chunk, 'utf8'));
      await fh.sync();
      await fh.close();
      fh = undefined;
      await rename(tmpPath, join(this.dir, SNAPSHOT));
      await fsyncDir(this.dir);
      this.stats.compactions++;
    } catch (err) {
      await fh?.close().catch(() => {});
      await unlink(tmpPath).catch(() => {});
      if (err !== ABORTED) this.warn(`state store ${this.dir}: compaction failed (${describeError(err)}); the logs still hold every change`);
      return;
    }
    // The snapshot is in place: logs before its generation are no longer needed.
    try {
      for (const [older, name] of await this.listLogs()) if (older < generation) await unlink(join(this.dir, name));
    } catch (err) {
      this.warn(`state store ${this.dir}: cannot delete old logs after compaction (${describeError(err)}); they are ignored and retried next time`);
    }
  }

  // --- opening -------------------------------------------------------------------------------------

  private async start(): Promise<void> {
    const dir = this.dir;
    let realDir: string;
    try {
      await makeDirectory(dir);
      realDir = await realpath(dir);
    } catch (err) {
      const why = errnoCode(err) === 'EEXIST' ? 'the path exists and is not a directory' : describeError(err);
      throw unavailable(`cannot create state directory ${dir}: ${why}`, dir);
    }
    this.lock = await acquireLock(dir, realDir);
    try {
      await this.load();
    } catch (err) {
      await this.log?.close().catch(() => {});
      await this.lock.release();
      if (err instanceof FlintError) throw err;
      throw unavailable(`cannot open the state in ${dir}: ${describeError(err)}`, dir);
    }
  }

  /** Log generations found in the folder, ascending. */
  private async listLogs(): Promise<Array<[number, string]>> {
    const logs: Array<[number, string]> = [];
    for (const name of await readdir(this.dir)) {
      const match = LOG_NAME.exec(name);
      if (match) logs.push([Number(match[1]), name]);
    }
    return logs.sort((a, b) => a[0] - b[0]);
  }

  private async load(): Promise<void> {
    await unlink(join(this.dir, SNAPSHOT_TMP)).catch(() => {}); // an unfinished compaction
    const snapshotGeneration = await this.loadSnapshot();
    const logs = await this.listLogs();
    const live = logs.filter(([generation]) => snapshotGeneration === undefined || generation >= snapshotGeneration);
    for (const [generation, name] of logs) {
      // Left behind by a crash after the snapshot replaced them.
      if (snapshotGeneration !== undefined && generation < snapshotGeneration) await unlink(join(this.dir, name)).catch(() => {});
    }
    for (let i = 0; i < live.length - 1; i++) await this.replayLog(live[i]![1], false);
    const last = live[live.length - 1];
    this.generation = last ? last[0] : (snapshotGeneration ?? 0);
    const path = join(this.dir, logName(this.generation));
    this.log = await open(path, 'a');
    if (last) {
      this.logBytes = await this.replayLog(last[1], true);
    } else {
      await fsyncDir(this.dir);
    }
    // A log already over the limit (e.g. several left by crashes) is compacted with the next write.
    this.nextCompactionAt = live.length > 1 ? 0 : this.compactAfterBytes;
  }

  /** Loads snapshot.jsonl if there is one; returns its generation. */
  private async loadSnapshot(): Promise<number | undefined> {
    const path = join(this.dir, SNAPSHOT);
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
          this.apply(record.s, record.k, record.v, false);
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
      this.warn(`state snapshot ${path}: skipped ${damaged} damaged line(s) (first at byte ${firstDamage}); loaded ${loaded} of ${header.entries} entries`);
    }
    return header.generation;
  }

  /** Applies a log's records; returns the length of its valid part. The active log's damaged tail is cut off. */
  private async replayLog(name: string, active: boolean): Promise<number> {
    const path = join(this.dir, name);
    const fh = await open(path, 'r');
    let goodEnd = 0;
    const damaged: Array<{ offset: number; length: number }> = [];
    let size: number;
    try {
      size = await scanLines(fh, (line, offset, terminated) => {
        const record = terminated ? decodeLine(line) : undefined;
        if (record?.o === 's') this.apply(record.s, record.k, record.v, false);
        else if (record?.o === 'd') this.apply(record.s, record.k, null, true);
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
      this.warn(
        `state log ${path}: skipped ${middle.length} damaged record(s) (${bytes} bytes, first at byte ${middle[0]!.offset}); the records after them were applied`,
      );
    }
    if (goodEnd < size) {
      this.warn(
        `state log ${path}: ${active ? 'cut off' : 'ignored'} ${size - goodEnd} bytes of an incomplete or damaged last record at byte ${goodEnd} (a write torn by a crash; acknowledged writes are not affected)`,
      );
      if (active) {
        await this.log!.truncate(goodEnd);
        await this.log!.sync();
      }
    }
    return active ? goodEnd : size;
  }

  // --- closing -------------------------------------------------------------------------------------

  private async shutdown(): Promise<void> {
    this.closing = true;
    while (this.loop) await this.loop;
    while (this.compaction) await this.compaction;
    await this.log?.close().catch(() => {});
    this.log = undefined;
    await this.lock?.release();
  }
}

/** Opens a `file_based` store in `dir` (an absolute path, or relative to the working directory). */
export function openFileKvStore(dir: string, options: FileKvStoreOptions = {}): Promise<FileKvStore> {
  return FileKvStore.open(dir, options);
}
