import { resolve } from 'node:path';
import { FlintError } from '@flint/protocol';
import { describeError, makePrivateDirectory } from '../../../shared/files.js';
import { GroupCommitLog } from '../../../shared/group-commit.js';
import { type HeldLock, acquireLock } from '../../../shared/lock.js';
import type { AdapterLog } from '../../../shared/log.js';
import type { DeadLetter, NewMessage, WaitingMessage } from '../../types.js';
import { MemoryQueueBackend } from '../memory-backend.js';
import { nextSeq } from '../memory-queue.js';
import type { BodyFile } from './bodies.js';
import { Compactor } from './compaction.js';
import { FileJournal } from './journal.js';
import { unavailable } from './layout.js';
import { type Recovered, recover } from './recovery.js';

/**
 * `file_based`: the in_memory queues with every change appended to a log in a folder (layout.ts) and
 * the messages' data left on disk: memory holds an index (ids, attempts, times, where the data lies),
 * the data is read back when a message is delivered or peeked. A publish (and every admin call that
 * changes something) resolves once its record is fsynced (group commit: one fsync for every record
 * that arrived meanwhile), so an acknowledged message survives `kill -9`. Settles are written with
 * the next batch without being waited for: one lost to a crash means one more delivery.
 *
 * On opening, waiting and delayed messages come back in publish order, messages that were in flight
 * are waiting again (their attempts kept: the next delivery counts one more), dead letters stay.
 */

export interface FileQueueOptions {
  /** Start a new log generation and write a snapshot once the current log holds this many bytes (and as much as the last snapshot). */
  compactAfterBytes: number;
  /** Where non-fatal problems found while opening or compacting go (a torn record skipped, a failed compaction). */
  logger: AdapterLog;
}

export class FileQueueBackend extends MemoryQueueBackend {
  private readonly files: Set<BodyFile>;
  private readonly fileJournal: FileJournal;
  private readonly compactor: Compactor;
  private closing = false;
  private shut: Promise<void> | undefined;

  private constructor(
    readonly dir: string,
    /** Group-commit counters: batches written and fsynced, and the records they held; snapshots written. */
    readonly counters: { flushes: number; records: number; compactions: number },
    private readonly log: GroupCommitLog,
    private readonly lock: HeldLock,
    found: Recovered,
    options: FileQueueOptions,
    journal: FileJournal,
  ) {
    super('file_based', journal);
    this.fileJournal = journal;
    this.files = new Set(found.files);
    this.compactor = new Compactor(
      {
        dir,
        generation: found.generation,
        compactAfterBytes: options.compactAfterBytes,
        compactSoon: found.compactSoon,
        snapshotBytes: found.snapshotBytes,
        logger: options.logger,
        stats: this.counters,
        closing: () => this.closing,
      },
      this.files,
    );
    for (const [name, q] of found.queues) {
      if (q.live.size === 0 && q.dead.size === 0) continue;
      const queue = this.queue(name);
      for (const msg of q.live.values()) {
        msg.seq = nextSeq();
        const timing = q.timing.get(msg.id);
        queue.restore(msg, timing?.dueAt, timing?.retry);
      }
      for (const entry of q.dead.values()) queue.restoreDead(entry);
    }
  }

  /** Opens (creating it if needed) and locks a queue folder, then loads its queues. */
  static async open(path: string, options: FileQueueOptions): Promise<FileQueueBackend> {
    const dir = resolve(path);
    const realDir = await makePrivateDirectory(dir).catch((err: Error) => {
      throw unavailable(`cannot create queue directory ${dir}: ${err.message}`, dir);
    });
    const lock = await acquireLock(dir, realDir, { code: 'queue_unavailable', folder: 'queue directory' });
    let found: Recovered;
    try {
      found = await recover(dir, options.logger);
    } catch (err) {
      await lock.release();
      if (err instanceof FlintError) throw err;
      throw unavailable(`cannot open the queues in ${dir}: ${describeError(err)}`, dir);
    }
    let backend: FileQueueBackend | undefined;
    const counters = { flushes: 0, records: 0, compactions: 0 };
    const log = new GroupCommitLog(found.log, found.logBytes, {
      stats: counters,
      betweenBatches: () => backend?.compactIfDue(),
      failure: (err) =>
        unavailable(
          `writing the queue log in ${dir} failed (${describeError(err)}); the queues accept no more calls — restart the engine to recover from what reached the disk`,
          dir,
        ),
    });
    const journal = new FileJournal(log, found.current, () => unavailable(`the queues in ${dir} are closed`, dir));
    backend = new FileQueueBackend(dir, counters, log, lock, found, options, journal);
    return backend;
  }

  override async publish(queue: string, message: NewMessage): Promise<{ id: string }> {
    this.check();
    const result = await super.publish(queue, message);
    await this.log.durable();
    return result;
  }

  override async publishTopic(topic: string, message: NewMessage): Promise<number> {
    this.check();
    const count = await super.publishTopic(topic, message);
    if (count > 0) await this.log.durable();
    return count;
  }

  override async peek(queue: string, offset: number, limit: number): Promise<WaitingMessage[]> {
    this.check();
    return super.peek(queue, offset, limit);
  }

  override async remove(queue: string, id: string): Promise<boolean> {
    this.check();
    return this.durably(await super.remove(queue, id));
  }

  override async deadLetters(queue: string, offset: number, limit: number): Promise<DeadLetter[]> {
    this.check();
    return super.deadLetters(queue, offset, limit);
  }

  override async redrive(queue: string): Promise<number> {
    this.check();
    return this.durably(await super.redrive(queue));
  }

  override async redriveMessage(queue: string, id: string): Promise<boolean> {
    this.check();
    return this.durably(await super.redriveMessage(queue, id));
  }

  override async discard(queue: string, id: string): Promise<boolean> {
    this.check();
    return this.durably(await super.discard(queue, id));
  }

  /** Stops the consumers, flushes what is queued, abandons a running compaction, closes the files and releases the lock. */
  override close(): Promise<void> {
    this.shut ??= this.shutdown();
    return this.shut;
  }

  // -------------------------------------------------------------------------------------------------

  private check(): void {
    if (this.log.failure) throw this.log.failure;
    if (this.closing) throw unavailable(`the queues in ${this.dir} are closed`, this.dir);
  }

  /** An admin call's answer, once what it changed (and everything before) is durable. */
  private async durably<T>(result: T): Promise<T> {
    await this.log.durable();
    return result;
  }

  /** Between two flushed batches: starts a compaction once the log is full. */
  private compactIfDue(): Promise<void> | undefined {
    if (this.closing || !this.compactor.due(this.log.bytes)) return undefined;
    return this.compactor.start(this.log, this.fileJournal, this);
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    await super.close();
    this.fileJournal.closed = true;
    await this.log.close();
    await this.compactor.settle();
    for (const file of this.files) await file.close();
    await this.lock.release();
  }
}
