import { FlintError } from '@flint/protocol';
import { Redis, type RedisOptions } from 'ioredis';
import type { KvAdapterConfig, KvEntry, KvStore, KvStoreLog, KvUpdateResult, KvUpdater, KvWriteResult } from './types.js';

type RedisConfig = Extract<KvAdapterConfig, { name: 'redis' }>['config'];

/** How long opening a store waits for the first connection before it gives up with store_unavailable. */
export const REDIS_OPEN_TIMEOUT_MS = 5000;
/** An `update` that keeps losing the race to other writers of the same key gives up after this many attempts. */
export const REDIS_UPDATE_MAX_ATTEMPTS = 50;

/*
 * Every script reads and writes one hash field (KEYS[1] = the scope's hash, ARGV[1] = the key) and replies
 * with arrays and integers only: how a Lua `false`/`nil` reaches the client differs between RESP2 and RESP3.
 */

/** Sets a field and replies `{1, old}` or `{0}`. */
const SET_LUA = `local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if old then return {1, old} end
return {0}`;

/** Deletes a field (the hash disappears with its last field) and replies `{1, old}` or `{0}`. */
const DELETE_LUA = `local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return {1, old}
end
return {0}`;

/**
 * Compare-and-set: writes ARGV[4] only when the field still holds what the caller read (ARGV[2] = '1' and the
 * text ARGV[3], or ARGV[2] = '0' and no field). Replies 1 when written, 0 when another writer came first.
 */
const CAS_LUA = `local cur = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '1' then
  if cur ~= ARGV[3] then return 0 end
elseif cur then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
return 1`;

type ScriptReply = [0] | [1, string];

/** The client with the scripts above registered through `defineCommand` (EVALSHA, falling back to EVAL). */
interface ScriptedRedis extends Redis {
  flintKvSet(hash: string, field: string, json: string): Promise<ScriptReply>;
  flintKvDelete(hash: string, field: string): Promise<ScriptReply>;
  flintKvCas(hash: string, field: string, existed: '0' | '1', expected: string, json: string): Promise<number>;
}

/** The URL with its password replaced by `***` (for messages and logs). */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@');
  }
}

/** `*?[]\` and `^` stand for themselves in a SCAN MATCH pattern once escaped with a backslash. */
export function escapeRedisGlob(text: string): string {
  return text.replace(/[*?[\]\\^]/g, '\\$&');
}

/**
 * `redis`: one hash per scope (`${key_prefix}${scope}`), field = key, value = JSON text, so several engines
 * sharing one Redis share the state.
 *
 * - `set` / `delete` are single Lua scripts that also return the previous value.
 * - `update` runs the (pure, JavaScript) updater optimistically: read the field, compute, then a Lua
 *   compare-and-set writes only if the field still holds what was read; otherwise read again and retry
 *   (bounded). Updates of one key inside this store are queued locally first, so only writers in other
 *   engines can make an attempt lose. The check is per field, so writers of other keys in the same scope
 *   never cause retries.
 * - The client never queues commands while disconnected (`enableOfflineQueue: false`), every command has a
 *   time-out (`command_timeout_ms`) and commands in flight when the connection drops are failed at once:
 *   while Redis is down every call rejects quickly with `store_unavailable`. ioredis reconnects in the
 *   background (capped back-off); calls succeed again once it is back, without reopening the store.
 */
export class RedisKvStore implements KvStore {
  readonly kind: string = 'redis';
  private readonly redis: ScriptedRedis;
  private readonly url: string;
  private readonly prefix: string;
  private readonly commandTimeoutMs: number;
  /** Tail of the queue of local `update`s per hash field (keyed by `${hash}\n${key}`). */
  private readonly updateQueues = new Map<string, Promise<unknown>>();
  private lastConnectionError: Error | undefined;
  private inFlight = 0;
  private lastProgress = Date.now();
  private timedOut = false;
  private readonly watchdog: NodeJS.Timeout;
  private closed = false;

  private constructor(
    redis: ScriptedRedis,
    config: RedisConfig,
    private readonly log: KvStoreLog | undefined,
  ) {
    this.redis = redis;
    this.url = redactRedisUrl(config.redis_url);
    this.prefix = config.key_prefix;
    this.commandTimeoutMs = config.command_timeout_ms;
    let wasReady = false;
    redis.on('error', (err: Error) => {
      if (wasReady && !this.lastConnectionError && !this.closed)
        this.log?.warn(`redis at ${this.url}: connection lost (${err.message}); calls fail with store_unavailable until it is back`);
      this.lastConnectionError = err;
    });
    this.watchdog = setInterval(() => this.watch(), Math.max(10, Math.floor(this.commandTimeoutMs / 10))).unref();
    redis.on('ready', () => {
      this.timedOut = false;
      if (wasReady && this.lastConnectionError) this.log?.info(`redis at ${this.url}: connection restored`);
      wasReady = true;
      this.lastConnectionError = undefined;
    });
  }

  /** Connects (waiting at most `REDIS_OPEN_TIMEOUT_MS` for Redis) and returns the store. */
  static async open(config: RedisConfig, openTimeoutMs = REDIS_OPEN_TIMEOUT_MS, log?: KvStoreLog): Promise<RedisKvStore> {
    const options: RedisOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      connectTimeout: Math.max(1000, Math.min(openTimeoutMs, 3000)),
      // Fail the commands in flight as soon as the connection drops instead of resending them later.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (times) => Math.min(times * 100, 2000),
      connectionName: 'flint-kv',
      // Commands issued in the same tick go out in one write (many calls in flight share round trips).
      enableAutoPipelining: true,
    };
    let redis: Redis;
    try {
      redis = new Redis(config.redis_url, options);
    } catch (err) {
      // An unparseable URL.
      throw new FlintError('store_unavailable', `redis at ${redactRedisUrl(config.redis_url)} is unavailable: ${reasonOf(err, config)}`);
    }
    redis.defineCommand('flintKvSet', { numberOfKeys: 1, lua: SET_LUA });
    redis.defineCommand('flintKvDelete', { numberOfKeys: 1, lua: DELETE_LUA });
    redis.defineCommand('flintKvCas', { numberOfKeys: 1, lua: CAS_LUA });
    const store = new RedisKvStore(redis as ScriptedRedis, config, log);
    await store.waitUntilReady(openTimeoutMs);
    return store;
  }

  async get(scope: string, key: string): Promise<KvEntry> {
    const text = await this.call(() => this.redis.hget(this.hash(scope), key));
    return text === null ? { exists: false, value: null } : { exists: true, value: this.parse(text, scope, key) };
  }

  async set(scope: string, key: string, value: unknown): Promise<KvWriteResult> {
    const reply = await this.call(() => this.redis.flintKvSet(this.hash(scope), key, encode(value)));
    return this.writeResult(reply, scope, key);
  }

  async delete(scope: string, key: string): Promise<KvWriteResult> {
    const reply = await this.call(() => this.redis.flintKvDelete(this.hash(scope), key));
    return this.writeResult(reply, scope, key);
  }

  update<R>(scope: string, key: string, updater: KvUpdater<R>): Promise<KvUpdateResult<R>> {
    const queueKey = `${this.hash(scope)}\n${key}`;
    const previous = this.updateQueues.get(queueKey) ?? Promise.resolve();
    const run = previous.then(
      () => this.updateNow(scope, key, updater),
      () => this.updateNow(scope, key, updater),
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
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watchdog);
    if (this.redis.status === 'ready') {
      try {
        await this.redis.quit();
        return;
      } catch {
        // Fall through: drop the connection without waiting.
      }
    }
    this.redis.disconnect();
  }

  // -------------------------------------------------------------------------------------------

  private async updateNow<R>(scope: string, key: string, updater: KvUpdater<R>): Promise<KvUpdateResult<R>> {
    const hash = this.hash(scope);
    for (let attempt = 1; attempt <= REDIS_UPDATE_MAX_ATTEMPTS; attempt++) {
      const text = await this.call(() => this.redis.hget(hash, key));
      const current: KvEntry = text === null ? { exists: false, value: null } : { exists: true, value: this.parse(text, scope, key) };
      // The updater runs outside `call`: what it throws is the caller's error, not the store's.
      const { value, extra } = updater(current);
      const written = await this.call(() => this.redis.flintKvCas(hash, key, text === null ? '0' : '1', text ?? '', encode(value)));
      if (written === 1) return { existed: current.exists, old_value: current.value, new_value: value, extra };
      // Another engine wrote the key between the read and the write; after a few lost races back off a little.
      if (attempt >= 3) await sleep(Math.random() * Math.min(attempt * 2, 50));
    }
    throw new FlintError(
      'store_unavailable',
      `redis at ${this.url}: update of key ${JSON.stringify(key)} in scope ${JSON.stringify(scope)} gave up after ${REDIS_UPDATE_MAX_ATTEMPTS} attempts because other writers kept changing it`,
    );
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

  /** Runs one Redis command, turning every failure of Redis or of the connection into store_unavailable. */
  private async call<T>(command: () => Promise<T>): Promise<T> {
    if (this.closed) throw new FlintError('store_unavailable', `redis at ${this.url} is unavailable: the store is closed`);
    if (this.inFlight === 0) this.lastProgress = Date.now();
    this.inFlight++;
    try {
      return await command();
    } catch (err) {
      throw this.unavailable(err);
    } finally {
      this.inFlight--;
      this.lastProgress = Date.now();
    }
  }

  /**
   * The command time-out, without a timer per command: when commands are in flight and none has
   * been answered for `command_timeout_ms`, the connection is dropped, which fails them all at once
   * (store_unavailable) and reconnects.
   */
  private watch(): void {
    if (this.inFlight === 0 || Date.now() - this.lastProgress <= this.commandTimeoutMs || this.redis.status !== 'ready') return;
    this.timedOut = true;
    this.log?.warn(`redis at ${this.url}: no answer within ${this.commandTimeoutMs} ms; reconnecting`);
    // A hung server never finishes a graceful close, so the socket is destroyed: ioredis then fails
    // the queued commands at once and reconnects.
    this.redis.stream.destroy();
  }

  private unavailable(err: unknown): FlintError {
    if (err instanceof FlintError) return err;
    let reason: string;
    const message = err instanceof Error ? err.message : String(err);
    if (this.timedOut && /Connection is closed|max retries per request/i.test(message)) {
      reason = `no answer within ${this.commandTimeoutMs} ms`;
    } else if (/enableOfflineQueue|Connection is closed|max retries per request/i.test(message)) {
      reason = this.redis.status === 'ready' ? 'the connection was lost' : `not connected (${this.redis.status})`;
      if (this.lastConnectionError) reason += `: ${this.lastConnectionError.message}`;
    } else if (/Command timed out/i.test(message)) {
      reason = `no answer within ${this.commandTimeoutMs} ms`;
    } else {
      reason = message;
    }
    return new FlintError('store_unavailable', `redis at ${this.url} is unavailable: ${this.scrub(reason)}`);
  }

  /** Waits for the first `ready`; on time-out (or an answer such as a wrong password) closes and rejects. */
  private async waitUntilReady(timeoutMs: number): Promise<void> {
    const redis = this.redis;
    let timer: NodeJS.Timeout | undefined;
    let onError: ((err: Error) => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
        // A reply error while connecting (WRONGPASS, NOAUTH, …) will not go away by retrying.
        onError = (err: Error) => {
          if (err.name === 'ReplyError') reject(err);
        };
        redis.on('error', onError);
        redis.connect().then(resolve, () => {
          // The first attempt failed; ioredis keeps retrying until ready or the time-out above.
          redis.once('ready', () => resolve());
        });
      });
    } catch (err) {
      this.closed = true;
      clearInterval(this.watchdog);
      redis.disconnect();
      let reason = err instanceof Error ? err.message : String(err);
      if (this.lastConnectionError && this.lastConnectionError !== err) reason += ` (last error: ${this.lastConnectionError.message})`;
      throw new FlintError('store_unavailable', `redis at ${this.url} is unavailable: ${this.scrub(reason)}`);
    } finally {
      clearTimeout(timer);
      if (onError) redis.off('error', onError);
    }
  }

  /** Removes the password from a reason text, should a client message ever quote it. */
  private scrub(text: string): string {
    const password = this.redis.options.password;
    return password ? text.split(password).join('***') : text;
  }
}

function encode(value: unknown): string {
  // `undefined` (or a function) has no JSON text; store it as null, as a JSON round trip would.
  return JSON.stringify(value) ?? 'null';
}

function reasonOf(err: unknown, config: RedisConfig): string {
  const message = err instanceof Error ? err.message : String(err);
  const password = (() => {
    try {
      return decodeURIComponent(new URL(config.redis_url).password);
    } catch {
      return '';
    }
  })();
  return password ? message.split(password).join('***') : message;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Opens the `redis` store an adapter config names (waits for the first connection; see RedisKvStore). */
export function openRedisKvStore(config: RedisConfig, log?: KvStoreLog): Promise<RedisKvStore> {
  return RedisKvStore.open(config, REDIS_OPEN_TIMEOUT_MS, log);
}
