import type { FileHandle } from 'node:fs/promises';
import type { FlintError } from '@flint/protocol';
import { describeError, writeAll } from '../../shared/files.js';
import { unavailable } from './layout.js';
import { encodeLine } from './record.js';

/**
 * The log being appended to, with group commit.
 *
 * Durability: a write is applied to memory at once (so concurrent calls never interleave) and its
 * record queued; the call resolves once the batch holding the record is written and fdatasync'ed.
 * Group commit: while one batch is being written and synced, new records gather in the next batch,
 * which is flushed as soon as the first one finishes, so one fsync serves every write that arrived
 * meanwhile. A failed write or fsync makes the store refuse every later call (the log's state is
 * unknown after a failed fsync); a restart replays what reached the disk.
 */

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
   * @param betweenBatches runs after each flushed batch, before the next one is written (compaction starts there).
   */
  constructor(
    private handle: FileHandle,
    private written: number,
    private readonly dir: string,
    private readonly stats: { flushes: number; records: number },
    private readonly betweenBatches: () => Promise<void> | undefined,
  ) {}

  /** Bytes in the current log file. */
  get bytes(): number {
    return this.written;
  }

  /** Set once a write or fsync failed: the log accepts nothing more. */
  get failure(): FlintError | undefined {
    return this.failed;
  }

  /** Queues a record; resolves once it is written and fsynced. */
  append(json: string): Promise<void> {
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
          const data = Buffer.from(batch.lines.join(''), 'utf8');
          const log = this.handle;
          await writeAll(log, data);
          await log.datasync();
          this.written += data.length;
          this.stats.flushes++;
          this.stats.records += batch.lines.length;
          batch.resolve();
        } catch (err) {
          this.failed = unavailable(
            `writing the state log in ${this.dir} failed (${describeError(err)}); the store accepts no more calls — restart the engine to recover from what reached the disk`,
            this.dir,
          );
          batch.reject(this.failed);
        } finally {
          this.inFlight = null;
        }
        if (!this.failed) await this.betweenBatches();
      }
      if (this.failed && this.pending) {
        this.pending.reject(this.failed);
        this.pending = null;
      }
    } catch (err) {
      // Not expected (every step above handles its errors); never leave callers hanging.
      this.failed ??= unavailable(`the state store in ${this.dir} failed: ${describeError(err)}`, this.dir);
      this.pending?.reject(this.failed);
      this.pending = null;
    } finally {
      this.loop = null;
    }
  }
}
