import { z } from 'zod';
import type { AdapterFactory } from '../../core/api/adapters.js';
import { BridgeClient, type ForwardedChange as Change, bridgeClientConfig } from '../shared/bridge-client.js';
import type { KvEntry, KvStore, KvUpdateResult, KvWriteResult } from './types.js';

/** The config of the `bridge` kv adapter. */
export const bridgeKvConfigSchema = z.strictObject(bridgeClientConfig).prefault({});

export type BridgeKvConfig = z.output<typeof bridgeKvConfigSchema>;

/**
 * State kept by another engine: every operation is that engine's `state::*` function, called over its
 * bridge, so it is as atomic there as it is for that engine's own workers. An update goes as its
 * operations (`forwardUpdate`), which the other engine applies: flint-state uses it, and only flint-state
 * takes this adapter. A key is taken to exist when its value is not null.
 */
export class BridgeKvStore implements KvStore {
  readonly kind = 'bridge';

  constructor(private readonly client: BridgeClient) {}

  get url(): string {
    return this.client.shownUrl;
  }

  async get(scope: string, key: string): Promise<KvEntry> {
    const value = await this.client.call('state::get', { scope, key });
    return { exists: value !== null, value };
  }

  async set(scope: string, key: string, value: unknown): Promise<KvWriteResult> {
    const change = await this.client.call<Change>('state::set', { scope, key, value });
    return { existed: change.old_value !== null, old_value: change.old_value };
  }

  async delete(scope: string, key: string): Promise<KvWriteResult> {
    const { old_value } = await this.client.call<{ old_value: unknown }>('state::delete', { scope, key });
    return { existed: old_value !== null, old_value };
  }

  /** Not offered: an updater is code of this engine. flint-state forwards the operations instead. */
  update<R>(): Promise<KvUpdateResult<R>> {
    return Promise.reject(new Error('the bridge kv store forwards updates as operations (forwardUpdate); only flint-state can use it'));
  }

  /** The other engine's `state::update` with these operations, as it answers. */
  async forwardUpdate(scope: string, key: string, ops: unknown): Promise<{ existed: boolean; old_value: unknown; new_value: unknown; errors?: unknown[] }> {
    const change = await this.client.call<Change>('state::update', { scope, key, ops });
    return { existed: change.old_value !== null, old_value: change.old_value, new_value: change.new_value ?? null, errors: change.errors };
  }

  list(scope: string): Promise<unknown[]> {
    return this.client.call<unknown[]>('state::list', { scope });
  }

  async entries(scope: string): Promise<[string, unknown][]> {
    const out: [string, unknown][] = [];
    for (let offset = 0; ; ) {
      const page = await this.client.call<{ entries: { key: string; value: unknown }[]; total: number }>('state::list_entries', {
        scope,
        offset,
        limit: 1000,
      });
      for (const { key, value } of page.entries) out.push([key, value]);
      offset += page.entries.length;
      if (page.entries.length === 0 || offset >= page.total) return out;
    }
  }

  async size(scope: string): Promise<number> {
    const { counts } = await this.client.call<{ counts?: Record<string, number> }>('state::list_groups', { counts: true });
    return counts?.[scope] ?? 0;
  }

  async listGroups(): Promise<string[]> {
    return (await this.client.call<{ groups: string[] }>('state::list_groups', {})).groups;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

export const bridgeKvAdapter: AdapterFactory<'kv', BridgeKvConfig> = {
  family: 'kv',
  name: 'bridge',
  description: "another engine's state, over its bridge (bridge_url): every call is forwarded there",
  configSchema: bridgeKvConfigSchema,
  open: async (config, env) => {
    return new BridgeKvStore(await BridgeClient.fromConfig(config, 'the state bridge', env.logger));
  },
};
