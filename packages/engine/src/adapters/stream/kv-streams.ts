import type { KvEntry, KvStore, KvUpdateResult, KvUpdater, KvWriteResult } from '../kv/types.js';
import { groupScope, parseGroupScope, streamsOfScopes } from './group-scope.js';
import type { StreamFrame, StreamGroups, StreamStore } from './types.js';

/**
 * Streams on a kv store: one scope per stream group (group-scope.ts), item ids as keys. Frames go to this
 * engine's listeners only; `RedisStreamStore` extends it to reach other engines.
 */
export class KvStreamStore implements StreamStore {
  readonly shared: boolean = false;
  private readonly listeners = new Set<(frame: StreamFrame) => void>();

  constructor(protected readonly kv: KvStore) {}

  get kind(): string {
    return this.kv.kind;
  }

  get(stream: string, group: string, item: string): Promise<KvEntry> {
    return this.kv.get(groupScope(stream, group), item);
  }

  set(stream: string, group: string, item: string, value: unknown): Promise<KvWriteResult> {
    return this.kv.set(groupScope(stream, group), item, value);
  }

  delete(stream: string, group: string, item: string): Promise<KvWriteResult> {
    return this.kv.delete(groupScope(stream, group), item);
  }

  update<R>(stream: string, group: string, item: string, updater: KvUpdater<R>): Promise<KvUpdateResult<R>> {
    return this.kv.update(groupScope(stream, group), item, updater);
  }

  list(stream: string, group: string): Promise<unknown[]> {
    return this.kv.list(groupScope(stream, group));
  }

  async listGroups(stream: string): Promise<string[]> {
    const groups: string[] = [];
    for (const scope of await this.kv.listGroups()) {
      const parsed = parseGroupScope(scope);
      if (parsed?.stream === stream) groups.push(parsed.group);
    }
    return groups.sort();
  }

  async listAll(): Promise<StreamGroups[]> {
    return streamsOfScopes(await this.kv.listGroups());
  }

  publish(frame: StreamFrame): void {
    this.deliver(frame);
  }

  subscribe(listener: (frame: StreamFrame) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.kv.close();
  }

  /** Hands a frame to this engine's listeners. */
  protected deliver(frame: StreamFrame): void {
    for (const listener of this.listeners) listener(frame);
  }
}
