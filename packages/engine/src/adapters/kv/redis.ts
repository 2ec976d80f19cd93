import { FlintError } from '@flint/protocol';
import type { Redis } from 'ioredis';
import type { AdapterFactory } from '../../core/api/adapters.js';
import type { AdapterLog } from '../shared/log.js';
import { RedisConnection } from '../shared/redis-connection.js';
import { defineScripts } from '../shared/redis-scripts.js';
import { escapeRedisGlob } from '../shared/redis-text.js';
import { type RedisKvConfig, redisKvConfigSchema } from './redis-config.js';
import type { KvEntry, KvStore, KvUpdateResult, KvUpdater, KvWriteResult } from './types.js';

/** An `update` that keeps losing the race to other writers of the same key gives up after this many attempts. */
export const REDIS_UPDATE_MAX_ATTEMPTS = 50;

/*
 * Every script reads and writes one hash field (KEYS[1] = the scope's hash, ARGV[1] = the key) and replies
 * with arrays and integers only: how a Lua `false`/`nil` reaches the client differs between RESP2 and RESP3.
 */

/**
 * Sets a field and replies `{1, old}` or `{0}`. With a notice (ARGV[3] = channel), it also PUBLISHes
 * ARGV[4] .. (ARGV[5] for a new field, ARGV[6] for an existing one) .. ARGV[7].
 */
const SET_LUA = `local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] then redis.call('PUBLISH', ARGV[3], ARGV[4] .. (old and ARGV[6] or ARGV[5]) .. ARGV[7]) end
if old then return {1, old} end
return {0}`;

/**
 * Deletes a field (the hash disappears with its last field) and replies `{1, old}` or `{0}`. With a notice
 * (ARGV[2] = channel) and a field deleted, it also PUBLISHes ARGV[3] .. old .. ARGV[4].
 */
const DELETE_LUA = `local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  redis.call('HDEL', KEYS[1], ARGV[1])
  if ARGV[2] then redis.call('PUBLISH', ARGV[2], ARGV[3] .. old .. ARGV[4]) end
  return {1, old}
end
return {0}`;

/**
 * Compare-and-set: writes ARGV[4] only when the field still holds what the caller expects (ARGV[2] = '1' and
 * the text ARGV[3], or ARGV[2] = '0' and no field). Replies `{1}` when written; else what the field holds
 * now, `{0, cur}` or `{0}` (no field), for the caller's next attempt.
 */
const CAS_LUA = `local cur = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '1' then
  if cur ~= ARGV[3] then
    if cur then return {0, cur} end
    return {0}
  end
elseif cur then
  return {0, cur}
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
if ARGV[5] then redis.call('PUBLISH', ARGV[5], ARGV[6]) end
return {1}`;

type ScriptReply = [0] | [1, string];
type CasReply = [1] | [0] | [0, string];

/**
 * Fields whose text an update of this store last wrote, kept for the next update to start from without
 * reading the field first (see RedisKvStore): at most this many, the least recently written dropped first.
 */
const KNOWN_MAX_FIELDS = 16_384;
/** Longer texts are not kept (an update of such a value reads it first): at most 16 MiB kept in all. */
const KNOWN_MAX_TEXT = 1024;

/** The scripts above, run through `defineScripts` (EVALSHA, falling back to EVAL). */
interface KvScripts {
  flintKvSet(hash: string, field: string, json: string, ...notice: string[]): Promise<ScriptReply>;
  flintKvDelete(hash: string, field: string, ...notice: string[]): Promise<ScriptReply>;
  flintKvCas(hash: string, field: string, existed: '0' | '1', expected: string, json: string, ...notice: string[]): Promise<CasReply>;
}

/**
 * A message a write PUBLISHes on `channel` from inside its own script, so that subscribers see the notices
 * of one Redis in the order the writes were stored. For a set, its text is `before`, then `ifNew` or
 * `ifExisted` (whether the key existed), then `after`.
 */
export interface RedisSetNotice {
  channel: string;
  before: string;
  ifNew: string;
  ifExisted: string;
  after: string;
}

/** For a delete that removed a key: `before`, the old value's JSON text, `after`. Nothing when no key was removed. */
export interface RedisDeleteNotice {
  channel: string;
  before: string;
  after: string;
}

/** For an update: the message, made once the current entry and the new value are known. */
export type RedisUpdateNotice = (existed: boolean, newValue: unknown) => { channel: string; text: string };

/**
 * `redis`: one hash per scope (`${key_prefix}${scope}`), field = key, value = JSON text, so several engines
 * sharing one Redis share the state.
 *
 * - `set` / `delete` are single Lua scripts that also return the previous value.
 * - Each write can PUBLISH a notice from inside its script (the stream adapter's frames), so that
 *   subscribers see the notices in the order the writes were stored, whichever engine made them.
 * - `update` runs the (pure, JavaScript) updater optimistically: read the field, compute, then a Lua
 *   compare-and-set writes only if the field still holds what was read; otherwise it answers what the field
 *   holds now and the update tries again from that (a bounded number of times). The text an update of this
 *   store last wrote to a field is kept (`known`): the next update of that field (a cron job's record, a
 *   counter only this engine changes) is then one round trip, the compare-and-set, and if another engine
 *   changed the field meanwhile it costs the same two round trips as reading first. Updates of one key
 *   inside this store are queued locally first, so only writers in other engines can make an attempt lose.
 *   The check is per field, so writers of other keys in the same scope never cause retries.
 * - The connection is a RedisConnection (../shared/redis-connection.ts): every command has a time-out
 *   (`command_timeout_ms`), nothing is queued while Redis is down, so every call then rejects quickly with
 *   `store_unavailable`, and calls succeed again once it is back, without reopening the store.
 */
export class RedisKvStore implements KvStore {
  readonly kind: string = 'redis';
  private readonly redis: Redis;
  private readonly scripts: KvScripts;
  private readonly url: string;
  private readonly prefix: string;
  /** Tail of the queue of local `update`s per hash field (keyed by `${hash}\n${key}`). */
  private readonly updateQueues = new Map<string, Promise<unknown>>();
  /** The text an update of this store last wrote to a field, by `${hash}\n${key}`; see `update`. */
  private readonly known = new Map<string, string>();
  private closed = false;

  private constructor(
    private readonly connection: RedisConnection,
    config: RedisKvConfig,
  ) {
    const redis = connection.client;
    this.scripts = defineScripts<KvScripts>(connection.send, {
      flintKvSet: { numberOfKeys: 1, lua: SET_LUA },
      flintKvDelete: { numberOfKeys: 1, lua: DELETE_LUA },
      flintKvCas: { numberOfKeys: 1, lua: CAS_LUA },
    });
    this.redis = redis;
    this.url = connection.url;
    this.prefix = config.key_prefix;
  }

  /** Connects (waiting at most REDIS_OPEN_TIMEOUT_MS for Redis) and returns the store. */
  static async open(config: RedisKvConfig, logger?: AdapterLog): Promise<RedisKvStore> {
    const connection = await RedisConnection.open({
      url: config.redis_url,
      connectionName: 'flint-kv',
      commandTimeoutMs: config.command_timeout_ms,
      logger,
    });
    return new RedisKvStore(connection, config);
  }

  /** A store on a connection the caller opened (to run its own commands on it too); closing the store closes it. */
  static on(connection: RedisConnection, config: RedisKvConfig): RedisKvStore {
    return new RedisKvStore(connection, config);
  }

  async get(scope: string, key: string): Promise<KvEntry> {
    const text = await this.call(() => this.connection.send<string | null>('hget', [this.hash(scope), key]));
    return text === null ? { exists: false, value: null } : { exists: true, value: this.parse(text, scope, key) };
  }

  async set(scope: string, key: string, value: unknown, notice?: RedisSetNotice): Promise<KvWriteResult> {
    const extra = notice ? [notice.channel, notice.before, notice.ifNew, notice.ifExisted, notice.after] : [];
    // Whatever happens, a text kept for the field may no longer be what it holds.
    this.forget(scope, key);
    const reply = await this.call(() => this.scripts.flintKvSet(this.hash(scope), key, encode(value), ...extra));
    return this.writeResult(reply, scope, key);
  }

  async delete(scope: string, key: string, notice?: RedisDeleteNotice): Promise<KvWriteResult> {
    const extra = notice ? [notice.channel, notice.before, notice.after] : [];
    this.forget(scope, key);
    const reply = await this.call(() => this.scripts.flintKvDelete(this.hash(scope), key, ...extra));
    return this.writeResult(reply, scope, key);
  }

  update<R>(scope: string, key: string, updater: KvUpdater<R>, notice?: RedisUpdateNotice): Promise<KvUpdateResult<R>> {
    const queueKey = this.fieldKey(scope, key);
    const previous = this.updateQueues.get(queueKey) ?? Promise.resolve();
    const run = previous.then(
      () => this.updateNow(scope, key, queueKey, updater, notice),
      () => this.updateNow(scope, key, queueKey, updater, notice),
    );
    const tail = run.catch(() => {});
    this.updateQueues.set(queueKey, tail);
    void tail.then(() => {
      if (this.updateQueues.get(queueKey) === tail) this.updateQueues.delete(queueKey);
    });
    return run;
  }

  async list(scope: string): Promise<unknown[]> {
    const texts = await this.call(() => this.redis.hvals(this.hash(scope)));
    return texts.map((text) => this.parse(text, scope, undefined));
  }

  async entries(scope: string): Promise<[string, unknown][]> {
    const hash = await this.call(() => this.redis.hgetall(this.hash(scope)));
    return Object.entries(hash).map(([key, text]) => [key, this.parse(text, scope, key)]);
  }

  async size(scope: string): Promise<number> {
    return this.call(() => this.redis.hlen(this.hash(scope)));
  }

  async listGroups(): Promise<string[]> {
    const pattern = `${escapeRedisGlob(this.prefix)}*`;
    const scopes = new Set<string>();
    let cursor = '0';
    do {
      const [next, keys] = await this.call(() => this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000, 'TYPE', 'hash'));
      for (const key of keys) if (key.startsWith(this.prefix)) scopes.add(key.slice(this.prefix.length));
      cursor = next;
    } while (cursor !== '0');
    return [...scopes].sort();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connection.close();
  }

  // -------------------------------------------------------------------------------------------

  private async updateNow<R>(
    scope: string,
    key: string,
    field: string,
    updater: KvUpdater<R>,
    notice: RedisUpdateNotice | undefined,
  ): Promise<KvUpdateResult<R>> {
    const hash = this.hash(scope);
    // Start from the text this store last wrote, if it kept it: the compare-and-set checks it all the same.
    let text: string | null | undefined = this.known.get(field);
    if (text === undefined) text = await this.call(() => this.connection.send<string | null>('hget', [hash, key]));
    for (let attempt = 1; attempt <= REDIS_UPDATE_MAX_ATTEMPTS; attempt++) {
      const expected: string | null = text;
      const current: KvEntry = expected === null ? { exists: false, value: null } : { exists: true, value: this.parse(expected, scope, key) };
      // The updater runs outside `call`: what it throws is the caller's error, not the store's.
      const { value, extra } = updater(current);
      const message = notice?.(current.exists, value);
      const publish = message ? [message.channel, message.text] : [];
      const json = encode(value);
      this.known.delete(field);
      const reply: CasReply = await this.call(() => this.scripts.flintKvCas(hash, key, expected === null ? '0' : '1', expected ?? '', json, ...publish));
      if (reply[0] === 1) {
        this.keep(field, json);
        return { existed: current.exists, old_value: current.value, new_value: value, extra };
      }
      // Another engine wrote the field since this store saw it: try again from what it holds now. After a few
      // lost races, back off a little.
      text = reply.length > 1 ? (reply[1] as string) : null;
      if (attempt >= 3) await sleep(Math.random() * Math.min(attempt * 2, 50));
    }
    throw new FlintError(
      'store_unavailable',
      `redis at ${this.url}: update of key ${JSON.stringify(key)} in scope ${JSON.stringify(scope)} gave up after ${REDIS_UPDATE_MAX_ATTEMPTS} attempts because other writers kept changing it`,
    );
  }

  private fieldKey(scope: string, key: string): string {
    return `${this.hash(scope)}\n${key}`;
  }

  /** Keeps the text a field holds after this store's write, the least recently kept dropped first past KNOWN_MAX_FIELDS. */
  private keep(field: string, text: string): void {
    if (text.length > KNOWN_MAX_TEXT) return;
    this.known.set(field, text);
    if (this.known.size > KNOWN_MAX_FIELDS) this.known.delete(this.known.keys().next().value as string);
  }

  private forget(scope: string, key: string): void {
    if (this.known.size > 0) this.known.delete(this.fieldKey(scope, key));
  }

  private hash(scope: string): string {
    return this.prefix + scope;
  }

  private writeResult(reply: ScriptReply, scope: string, key: string): KvWriteResult {
    return reply[0] === 1 ? { existed: true, old_value: this.parse(reply[1], scope, key) } : { existed: false, old_value: null };
  }

  private parse(text: string, scope: string, key: string | undefined): unknown {
    try {
      return JSON.parse(text);
    } catch {
      const where =
        key === undefined ? `a field of hash ${JSON.stringify(this.hash(scope))}` : `field ${JSON.stringify(key)} of hash ${JSON.stringify(this.hash(scope))}`;
      throw new FlintError('internal_error', `redis at ${this.url}: ${where} does not hold JSON text`);
    }
  }

  /** Runs one Redis command (see RedisConnection.call): every failure becomes store_unavailable. */
  private call<T>(command: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.connection.failure('the store is closed'));
    return this.connection.call(command);
  }
}

function encode(value: unknown): string {
  // `undefined` (or a function) has no JSON text; store it as null, as a JSON round trip would.
  return JSON.stringify(value) ?? 'null';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The `redis` kv adapter: one hash per scope on a Redis server, shared by every engine using it. */
export const redisKvAdapter: AdapterFactory<'kv', RedisKvConfig> = {
  family: 'kv',
  name: 'redis',
  description: 'key-value store on a Redis server (redis_url, key_prefix), shared by every engine using it',
  configSchema: redisKvConfigSchema,
  open: (config, env) => RedisKvStore.open(config, env.logger),
};
