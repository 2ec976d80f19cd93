import { resolve } from 'node:path';
import { FlintError } from '@flint/protocol';
import { describeError, makePrivateDirectory } from '../../shared/files.js';
import { GroupCommitLog } from '../../shared/group-commit.js';
import { type HeldLock, acquireLock } from '../../shared/lock.js';
import type { AdapterLog } from '../../shared/log.js';
import { MemoryKvStore } from '../memory.js';
import type { KvEntry, KvUpdateResult, KvUpdater, KvWriteResult } from '../types.js';
import { unavailable } from './layout.js';
import { deleteJson, encodeLine, setJson } from './record.js';
import { recover } from './recovery.js';
import { Compactor } from './snapshot.js';

/**
 * `file_based`: the state lives in memory (the in-memory store's layout) and every change is appended
 * to a log in the state directory before its call resolves. The folder's files: layout.ts; the log and
 * its durability: group-commit.ts; compaction: snapshot.ts; opening: recovery.ts.
 */

export interface FileKvStoreOptions {
  /** Start a new log generation and write a snapshot once the current log holds this many bytes. Default 64 MiB. */
  compactAfterBytes?: number;
  /** Where non-fatal problems found while opening or compacting go (damaged records, a failed compaction). */
  logger: AdapterLog;
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

/** One log record: a checksummed line (record.ts). */
function line(json: string): Buffer {
  return Buffer.from(encodeLine(json), 'utf8');
}

export class FileKvStore extends MemoryKvStore {
  override readonly kind: string = 'file_based';
  /** Group-commit counters: batches written and fsynced, and the records they held; snapshots written. */
  readonly stats = { flushes: 0, records: 0, compactions: 0 };

  private readonly compactAfterBytes: number;
  private readonly logger: AdapterLog;
  private lock: HeldLock | undefined;
  /** Set by `start`, before the store is handed out. */
  private log!: GroupCommitLog;
  private compactor!: Compactor;
  private closing = false;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly dir: string,
    options: FileKvStoreOptions,
  ) {
    super();
    this.compactAfterBytes = options.compactAfterBytes ?? 64 * 1024 * 1024;
    this.logger = options.logger;
  }

  /** Opens (creating it if needed) and locks a state directory, then loads its state. */
  static async open(dir: string, options: FileKvStoreOptions): Promise<FileKvStore> {
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

  override async entries(scope: string): Promise<[string, unknown][]> {
    this.check();
    return super.entries(scope);
  }

  override async size(scope: string): Promise<number> {
    this.check();
    return super.size(scope);
  }

  override async listGroups(): Promise<string[]> {
    this.check();
    return super.listGroups();
  }

  override async set(scope: string, key: string, value: unknown): Promise<KvWriteResult> {
    this.check();
    const { json, stored } = encodeValue(value);
    const result = this.apply(scope, key, stored, false);
    await this.log.append(line(setJson(scope, key, json)));
    return result;
  }

  override async delete(scope: string, key: string): Promise<KvWriteResult> {
    this.check();
    const result = this.apply(scope, key, null, true);
    // Nothing to write for a missing key, but the answer rests on earlier writes: wait until they are durable.
    await (result.existed ? this.log.append(line(deleteJson(scope, key))) : this.log.durable());
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
    await this.log.append(line(setJson(scope, key, json)));
    return { ...write, new_value: stored, extra };
  }

  /** Flushes what is queued, abandons a running compaction, closes the log and releases the lock. */
  override close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  // -------------------------------------------------------------------------------------------------

  private check(): void {
    if (this.log.failure) throw this.log.failure;
    if (this.closing) throw unavailable(`the state store in ${this.dir} is closed`, this.dir);
  }

  /** Between two flushed batches: starts a compaction once the log is full. */
  private compactIfDue(): Promise<void> | undefined {
    if (this.closing || !this.compactor.due(this.log.bytes)) return undefined;
    return this.compactor.start(this.log, this.scopes);
  }

  private async start(): Promise<void> {
    const dir = this.dir;
    const realDir = await makePrivateDirectory(dir).catch((err: Error) => {
      throw unavailable(`cannot create state directory ${dir}: ${err.message}`, dir);
    });
    this.lock = await acquireLock(dir, realDir);
    try {
      const found = await recover(dir, (scope, key, value, remove) => this.apply(scope, key, value, remove), this.logger);
      this.log = new GroupCommitLog(found.log, found.logBytes, {
        stats: this.stats,
        betweenBatches: () => this.compactIfDue(),
        failure: (err) =>
          unavailable(
            `writing the state log in ${dir} failed (${describeError(err)}); the store accepts no more calls — restart the engine to recover from what reached the disk`,
            dir,
          ),
      });
      this.compactor = new Compactor({
        dir,
        generation: found.generation,
        compactAfterBytes: this.compactAfterBytes,
        compactSoon: found.compactSoon,
        logger: this.logger,
        stats: this.stats,
        closing: () => this.closing,
      });
    } catch (err) {
      await this.lock.release();
      if (err instanceof FlintError) throw err;
      throw unavailable(`cannot open the state in ${dir}: ${describeError(err)}`, dir);
    }
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    await this.log.close();
    await this.compactor.settle();
    await this.lock?.release();
  }
}
