import { type FileHandle, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE, describeError, fsyncDir, writeAll } from '../../shared/files.js';
import type { GroupCommitLog } from '../../shared/group-commit.js';
import type { AdapterLog } from '../../shared/log.js';
import { SNAPSHOT, SNAPSHOT_FORMAT, SNAPSHOT_TMP, listLogs, logName } from './layout.js';
import { encodeLine, setJson } from './record.js';

/**
 * Compaction: once the current log holds `compactAfterBytes`, a new log generation starts (between
 * two batches) and a copy of the state at that moment is written to `snapshot.jsonl.tmp` in the
 * background, fsynced, renamed over `snapshot.jsonl`, the folder fsynced, then older logs deleted.
 * Records queued at the switch are in both the copy and the new log; replaying them again is harmless
 * (each record sets or deletes a whole value). A crash at any step leaves either the old snapshot and
 * every log since, or the new snapshot and the logs since — both replay to the same state.
 */

const SNAPSHOT_CHUNK_CHARS = 1024 * 1024;

/** Thrown inside a compaction when the store is closing: the snapshot is abandoned (the logs still hold everything). */
const ABORTED = Symbol('compaction aborted');

type StateCopy = ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, unknown]>]>;

export interface CompactorOptions {
  dir: string;
  /** The generation of the log being appended to. */
  generation: number;
  compactAfterBytes: number;
  /** Compact with the next write (several logs were found at opening), not only once the log is full. */
  compactSoon: boolean;
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

  constructor(private readonly options: CompactorOptions) {
    this.dir = options.dir;
    this.generation = options.generation;
    // A log already over the limit (e.g. several left by crashes) is compacted with the next write.
    this.nextCompactionAt = options.compactSoon ? 0 : options.compactAfterBytes;
  }

  /** Whether the log (`logBytes` long) should be compacted now: it is full and no compaction is running. */
  due(logBytes: number): boolean {
    return !this.running && logBytes >= this.nextCompactionAt;
  }

  /**
   * Switches `log` to a new generation and writes the snapshot of `scopes` in the background. Call it only
   * between two batches: the state right now then covers every record of the older logs.
   */
  async start(log: GroupCommitLog, scopes: ReadonlyMap<string, ReadonlyMap<string, unknown>>): Promise<void> {
    const generation = this.generation + 1;
    let next: FileHandle | undefined;
    try {
      next = await open(join(this.dir, logName(generation)), 'a', PRIVATE_FILE_MODE);
      await fsyncDir(this.dir);
    } catch (err) {
      await next?.close().catch(() => {});
      this.options.logger.warn(`state store ${this.dir}: cannot start a new log for compaction (${describeError(err)}); will retry later`);
      this.nextCompactionAt = log.bytes + this.options.compactAfterBytes;
      return;
    }
    const previous = log.switchTo(next);
    this.generation = generation;
    this.nextCompactionAt = this.options.compactAfterBytes;
    // The state right now covers every record of the older logs (they were applied before being written).
    const copy = [...scopes].map(([scope, map]) => [scope, [...map]] as const);
    this.running = this.writeSnapshot(generation, copy).finally(() => {
      this.running = null;
    });
    await previous.close().catch(() => {});
  }

  /** Resolves once no compaction runs (a running one ends early when the store is closing). */
  async settle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async writeSnapshot(generation: number, copy: StateCopy): Promise<void> {
    const tmpPath = join(this.dir, SNAPSHOT_TMP);
    let fh: FileHandle | undefined;
    try {
      fh = await open(tmpPath, 'w', PRIVATE_FILE_MODE);
      const entries = copy.reduce((sum, [, pairs]) => sum + pairs.length, 0);
      let chunk = encodeLine(JSON.stringify({ o: 'h', format: SNAPSHOT_FORMAT, generation, entries }));
      for (const [scope, pairs] of copy) {
        for (const [key, value] of pairs) {
          chunk += encodeLine(setJson(scope, key, JSON.stringify(value) ?? 'null'));
          if (chunk.length >= SNAPSHOT_CHUNK_CHARS) {
            await writeAll(fh, Buffer.from(chunk, 'utf8'));
            chunk = '';
            if (this.options.closing()) throw ABORTED;
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
      this.options.stats.compactions++;
    } catch (err) {
      await fh?.close().catch(() => {});
      await unlink(tmpPath).catch(() => {});
      if (err !== ABORTED) this.options.logger.warn(`state store ${this.dir}: compaction failed (${describeError(err)}); the logs still hold every change`);
      return;
    }
    // The snapshot is in place: logs before its generation are no longer needed.
    try {
      for (const [older, name] of await listLogs(this.dir)) if (older < generation) await unlink(join(this.dir, name));
    } catch (err) {
      this.options.logger.warn(
        `state store ${this.dir}: cannot delete old logs after compaction (${describeError(err)}); they are ignored and retried next time`,
      );
    }
  }
}
