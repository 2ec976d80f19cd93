import { FlintError } from '@flint/protocol';
import WebSocket from 'ws';
import { z } from 'zod';
import type { AdapterFactory } from '../../core/api/adapters.js';
import type { Logger } from '../../core/logger.js';
import type { KvEntry, KvUpdateResult, KvWriteResult } from '../kv/types.js';
import { BridgeClient, type ForwardedChange as Change, bridgeClientConfig } from '../shared/bridge-client.js';
import type { StreamFrame, StreamGroups, StreamStore } from './types.js';

/** The config of the `bridge` stream adapter. */
export const bridgeStreamConfigSchema = z
  .strictObject({
    ...bridgeClientConfig,
    /** Its stream listener (for the frames of the groups this engine's clients joined). */
    stream_url: z.string().min(1).default('ws://127.0.0.1:3112'),
    /** Its stream listener's token (`?token=` is added), if its auth function asks for one. */
    stream_token: z.string().min(1).optional(),
  })
  .prefault({});

export type BridgeStreamConfig = z.output<typeof bridgeStreamConfigSchema>;

const groupKey = (stream: string, group: string) => JSON.stringify([stream, group]);

/**
 * Streams kept by another engine: every item call is that engine's `stream::*` function (so it stores
 * the item and announces the change to its subscribers), and the frames of the groups this engine's
 * clients joined come from that engine's stream listener, where this store joins each such group once.
 * A write made through this engine reaches its clients the same way, in the order the other engine
 * stored the writes.
 */
export class BridgeStreamStore implements StreamStore {
  readonly kind = 'bridge';
  readonly shared = true;
  private readonly listeners = new Set<(frame: StreamFrame) => void>();
  /** Groups joined on the other engine, with how many times this engine watches each. */
  private readonly watched = new Map<string, { stream: string; group: string; count: number }>();
  private socket: WebSocket | undefined;
  private closed = false;
  private attempt = 0;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: BridgeClient,
    private readonly streamUrl: string,
    private readonly log: Logger,
  ) {
    this.connectFrames();
  }

  async get(stream: string, group: string, item: string): Promise<KvEntry> {
    const value = await this.client.call('stream::get', { stream_name: stream, group_id: group, item_id: item });
    return { exists: value !== null, value };
  }

  async set(stream: string, group: string, item: string, value: unknown): Promise<KvWriteResult> {
    const change = await this.client.call<Change>('stream::set', { stream_name: stream, group_id: group, item_id: item, data: value });
    return { existed: change.old_value !== null, old_value: change.old_value };
  }

  async delete(stream: string, group: string, item: string): Promise<KvWriteResult> {
    const change = await this.client.call<Change>('stream::delete', { stream_name: stream, group_id: group, item_id: item });
    return { existed: change.old_value !== null, old_value: change.old_value };
  }

  /** Not offered: an updater is code of this engine. flint-stream forwards the operations instead. */
  update<R>(): Promise<KvUpdateResult<R>> {
    return Promise.reject(new Error('the bridge stream store forwards updates as operations (forwardUpdate)'));
  }

  async forwardUpdate(
    stream: string,
    group: string,
    item: string,
    ops: unknown,
  ): Promise<{ existed: boolean; old_value: unknown; new_value: unknown; errors?: unknown[] }> {
    const change = await this.client.call<Change>('stream::update', { stream_name: stream, group_id: group, item_id: item, ops });
    return { existed: change.old_value !== null, old_value: change.old_value, new_value: change.new_value ?? null, errors: change.errors };
  }

  list(stream: string, group: string): Promise<unknown[]> {
    return this.client.call<unknown[]>('stream::list', { stream_name: stream, group_id: group });
  }

  listGroups(stream: string): Promise<string[]> {
    return this.client.call<string[]>('stream::list_groups', { stream_name: stream });
  }

  async listAll(): Promise<StreamGroups[]> {
    const all = await this.client.call<{ stream: { id: string; groups: string[] }[] }>('stream::list_all', {});
    return all.stream.map(({ id, groups }) => ({ stream: id, groups }));
  }

  /** A custom event: the other engine's `stream::send`, which announces it to its subscribers and so to this engine's. */
  async publish(frame: StreamFrame): Promise<void> {
    const message = JSON.parse(frame.text) as { event?: { type?: string; event?: { type?: string; data?: unknown } } };
    const custom = message.event?.type === 'event' ? message.event.event : undefined;
    if (!custom?.type) throw new FlintError('store_unavailable', 'the stream bridge forwards only custom events (stream::send)');
    await this.client.call('stream::send', { stream_name: frame.stream, group_id: frame.group, id: frame.id, type: custom.type, data: custom.data ?? null });
  }

  subscribe(listener: (frame: StreamFrame) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  watch(stream: string, group: string): void {
    const key = groupKey(stream, group);
    const entry = this.watched.get(key);
    if (entry) {
      entry.count++;
      return;
    }
    this.watched.set(key, { stream, group, count: 1 });
    this.sendJoin('join', key, stream, group);
  }

  unwatch(stream: string, group: string): void {
    const key = groupKey(stream, group);
    const entry = this.watched.get(key);
    if (!entry) return;
    if (--entry.count > 0) return;
    this.watched.delete(key);
    this.sendJoin('leave', key, stream, group);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.socket?.close(1000, 'engine shutting down');
    await this.client.close();
  }

  private sendJoin(type: 'join' | 'leave', key: string, stream: string, group: string): void {
    if (this.socket?.readyState !== WebSocket.OPEN) return; // sent on (re)connect
    this.socket.send(JSON.stringify({ type, data: { subscriptionId: key, streamName: stream, groupId: group } }));
  }

  /** The socket to the other engine's stream listener; it joins the watched groups again after every reconnect. */
  private connectFrames(): void {
    const ws = new WebSocket(this.streamUrl, { perMessageDeflate: false });
    this.socket = ws;
    ws.on('open', () => {
      if (this.attempt > 0) this.log.info({ url: this.streamUrl }, `the stream bridge: connected to ${this.streamUrl} again`);
      this.attempt = 0;
      for (const [key, { stream, group }] of this.watched) this.sendJoin('join', key, stream, group);
    });
    ws.on('message', (data) => this.onFrame(data.toString()));
    ws.on('error', () => {});
    ws.once('close', () => {
      if (this.closed) return;
      if (this.attempt === 0) this.log.warn({ url: this.streamUrl }, `the stream bridge: lost the stream listener at ${this.streamUrl}; reconnecting`);
      const delay = Math.min(250 * 2 ** this.attempt++, 5000);
      this.retry = setTimeout(() => this.connectFrames(), delay);
      this.retry.unref();
    });
  }

  private onFrame(text: string): void {
    let message: { streamName?: unknown; groupId?: unknown; id?: unknown; event?: { type?: unknown } };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    const { streamName, groupId, id, event } = message;
    // A join's sync is the other engine's answer to this store; this engine's clients get their own.
    if (typeof streamName !== 'string' || typeof groupId !== 'string' || event?.type === 'sync' || event?.type === 'unauthorized') return;
    const frame: StreamFrame = { stream: streamName, group: groupId, id: typeof id === 'string' ? id : null, text };
    for (const listener of this.listeners) listener(frame);
  }
}

export const bridgeStreamAdapter: AdapterFactory<'stream', BridgeStreamConfig> = {
  family: 'stream',
  name: 'bridge',
  description: "another engine's streams, over its bridge (bridge_url) and stream listener (stream_url)",
  configSchema: bridgeStreamConfigSchema,
  open: async (config, env) => {
    const client = await BridgeClient.fromConfig(config, 'the stream bridge', env.logger);
    const streamUrl = config.stream_token
      ? `${config.stream_url}${config.stream_url.includes('?') ? '&' : '?'}token=${encodeURIComponent(config.stream_token)}`
      : config.stream_url;
    return new BridgeStreamStore(client, streamUrl, env.logger);
  },
};
