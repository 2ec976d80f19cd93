import type { KvEntry, KvStore, KvUpdateResult, KvUpdater, KvWriteResult } from '../kv/types.js';
import { groupScope, parseGroupScope, streamsOfScopes } from './group-scope.js';
import type { FrameParts, StreamFrame, StreamGroups, StreamStore, UpdateFrame } from './types.js';

/**
 * Streams on a kv store: one scope per stream group (group-scope.ts), item ids as keys. A write's frame
 * goes to this engine's listeners as soon as the write is stored; `RedisStreamStore` extends it to reach
 * other engines.
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

  async set(stream: string, group: string, item: string, value: unknown, frame: FrameParts): Promise<KvWriteResult> {
    const result = await this.kv.set(groupScope(stream, group), item, value);
    this.deliver({ stream, group, id: item, text: frame.before + (result.existed ? 'update' : 'create') + frame.after });
    return result;
  }

  async delete(stream: string, group: string, item: string, frame: FrameParts): Promise<KvWriteResult> {
    const result = await this.kv.delete(groupScope(stream, group), item);
    if (result.existed) this.deliver({ stream, group, id: item, text: frame.before + (JSON.stringify(result.old_value) ?? 'null') + frame.after });
    return result;
  }

  async update<R>(stream: string, group: string, item: string, updater: KvUpdater<R>, frame: UpdateFrame): Promise<KvUpdateResult<R>> {
    const result = await this.kv.update(groupScope(stream, group), item, updater);
    this.deliver({ stream, group, id: item, text: frame(result.existed, result.new_value) });
    return result;
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

  async publish(frame: StreamFrame): Promise<void> {
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
    for (const listener of this.listeners) {
      try {
        listener(frame);
      } catch {
        // A listener's failure is its own (the module's listener reports its errors itself): it must not
        // fail the write that is already stored, nor reach the Redis client's event handler.
      }
    }
  }
}
