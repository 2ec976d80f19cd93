import type { FileHandle } from 'node:fs/promises';
import type { FlintError } from '@flint/protocol';
import { writeAll } from './files.js';

/**
 * An append-only log file with group commit, shared by the file-based adapters (the `kv` state log,
 * the `builtin` queue log).
 *
 * Durability: the caller applies a change to memory at once (so concurrent calls never interleave)
 * and queues its record here; `append` resolves once the batch holding the record is written and
 * fdatasync'ed. Group commit: while one batch is being written and synced, new records gather in the
 * next batch, which is flushed as soon as the first one finishes, so one fsync serves every write
 * that arrived meanwhile. A failed write or fsync makes the log refuse every later call (the file's
 * state is unknown after a failed fsync); a restart replays what reached the disk.
 */

/** Called once a record is written and synced, with the byte offset where it starts in the file. */
export type OnWritten = (offset: number) => void;

interface Batch {
  records: Buffer[];
  bytes: number;
  /** Records that want to know where they landed: [offset in the batch, callback]. */
  written: Array<[number, OnWritten]>;
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
  return { records: [], bytes: 0, written: [], promise, resolve: resolveBatch, reject: rejectBatch };
}

export interface GroupCommitOptions {
  /** The error every call gets once a write or fsync failed (or something unexpected happened). */
  failure: (err: unknown) => FlintError;
  /** Counters: batches written and fsynced, and the records they held. */
  stats: { flushes: number; records: number };
  /** Runs after each flushed batch, before the next one is written (compaction starts there). */
  betweenBatches: () => Promise<void> | undefined;
}

export class GroupCommitLog {
  /** Records gathering for the next flush; null when none. */
  private pending: Batch | null = null;
  /** The batch being written and synced; null when none. */
  private inFlight: Batch | null = null;
  /** The flush loop while it runs. */
  private loop: Promise<void> | null = null;
  private failed: FlintError | undefined;

  /**
   * @param handle the current log file, open for appending.
   * @param written the length of its valid part.
   */
  constructor(
    private handle: FileHandle,
    private written: number,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Bytes in the current log file. */
  get bytes(): number {
    return this.written;
  }

  /** Set once a write or fsync failed: the log accepts nothing more. */
  get failure(): FlintError | undefined {
    return this.failed;
  }

  /** Queues a record; resolves once it is written and fsynced (`onWritten` is told where it landed first). */
  append(record: Buffer, onWritten?: OnWritten): Promise<void> {
    let batch = this.pending;
    if (!batch) {
      batch = createBatch();
      this.pending = batch;
      this.loop ??= this.run();
    }
    if (onWritten) batch.written.push([batch.bytes, onWritten]);
    batch.records.push(record);
    batch.bytes += record.length;
    return batch.promise;
  }

  /** Resolves once everything queued so far is durable. */
  durable(): Promise<void> {
    return (this.pending ?? this.inFlight)?.promise ?? Promise.resolve();
  }

  /** Appends from now on to `next` (a new, empty log file); returns the previous file. Only between two batches. */
  switchTo(next: FileHandle): FileHandle {
    const previous = this.handle;
    this.handle = next;
    this.written = 0;
    return previous;
  }

  /** Waits for the flush loop to finish what is queued, then closes the file. */
  async close(): Promise<void> {
    while (this.loop) await this.loop;
    await this.handle.close().catch(() => {});
  }

  /** The flush loop: one batch at a time, until nothing is queued. */
  private async run(): Promise<void> {
    // Start after the current turn's microtasks, so writes issued together share the first batch.
    await Promise.resolve();
    try {
      while (this.pending && !this.failed) {
        const batch = this.pending;
        this.pending = null;
        this.inFlight = batch;
        try {
          const data = batch.records.length === 1 ? (batch.records[0] as Buffer) : Buffer.concat(batch.records, batch.bytes);
          const log = this.handle;
          const base = this.written;
          await writeAll(log, data);
          await log.datasync();
          this.written += data.length;
          this.options.stats.flushes++;
          this.options.stats.records += batch.records.length;
          for (const [at, onWritten] of batch.written) onWritten(base + at);
          batch.resolve();
        } catch (err) {
          this.failed = this.options.failure(err);
          batch.reject(this.failed);
        } finally {
          this.inFlight = null;
        }
        if (!this.failed) await this.options.betweenBatches();
      }
      if (this.failed && this.pending) {
        this.pending.reject(this.failed);
        this.pending = null;
      }
    } catch (err) {
      // Not expected (every step above handles its errors); never leave callers hanging.
      this.failed ??= this.options.failure(err);
      this.pending?.reject(this.failed);
      this.pending = null;
    } finally {
      this.loop = null;
    }
  }
}
