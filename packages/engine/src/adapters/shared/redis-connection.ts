import { FlintError } from '@flint/protocol';
import type { Command, Redis, RedisOptions } from 'ioredis';
import { describeError } from './files.js';
import type { AdapterLog } from './log.js';
import { type RedisArg, flatCommandClass } from './redis-scripts.js';
import { redactUrl, scrubPassword, urlPassword } from './url-text.js';

/** How long opening a connection waits for Redis before it gives up with store_unavailable. */
export const REDIS_OPEN_TIMEOUT_MS = 5000;

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]`; shown only redacted. */
  url: string;
  /** The client name Redis lists for the connection (`CLIENT LIST`), e.g. `flint-kv`. */
  connectionName: string;
  /** A command that gets no answer within this time fails with store_unavailable (see `RedisConnection`). */
  commandTimeoutMs: number;
  /** How long `open` waits for the first connection. Default `REDIS_OPEN_TIMEOUT_MS`. */
  openTimeoutMs?: number;
  /** Where a lost and restored connection, and a command time-out, are reported. */
  logger?: AdapterLog;
}

/**
 * One Redis connection as every Redis-backed adapter uses it:
 *
 * - The client never queues commands while disconnected (`enableOfflineQueue: false`) and commands in
 *   flight when the connection drops are failed at once instead of being resent: while Redis is down
 *   every call rejects quickly with `store_unavailable`. ioredis reconnects in the background (capped
 *   back-off); calls succeed again once it is back, without reopening anything.
 * - Every command has a time-out (`commandTimeoutMs`) without a timer per command: a watchdog drops the
 *   socket when commands are in flight and none has been answered for that long (see `watch`).
 * - Every failure becomes a FlintError `store_unavailable` naming the redacted URL and a reason, never
 *   the password.
 * - Commands issued in the same turn of the event loop go out in one write (see `batchWrites`).
 */
export class RedisConnection {
  /** The ioredis client; run its commands through `call`. */
  readonly client: Redis;
  /** The URL with its password redacted. */
  readonly url: string;
  readonly commandTimeoutMs: number;
  private lastConnectionError: Error | undefined;
  private inFlight = 0;
  private lastProgress = Date.now();
  private timedOut = false;
  private readonly watchdog: NodeJS.Timeout;
  private closed = false;
  /** Whether the socket is corked until the next `setImmediate` (see `batchWrites`). */
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.corkedStream?.uncork();
    this.corkedStream = undefined;
  };
  private corkedStream: Redis['stream'] | undefined;
  private readonly FlatCommand: ReturnType<typeof flatCommandClass>;

  private constructor(
    client: Redis,
    CommandClass: typeof Command,
    options: RedisConnectionOptions,
    private readonly logger: AdapterLog | undefined,
  ) {
    this.client = client;
    this.FlatCommand = flatCommandClass(CommandClass);
    this.url = redactUrl(options.url);
    this.commandTimeoutMs = options.commandTimeoutMs;
    let wasReady = false;
    client.on('error', (err: Error) => {
      if (wasReady && !this.lastConnectionError && !this.closed)
        this.logger?.warn(`redis at ${this.url}: connection lost (${err.message}); calls fail with store_unavailable until it is back`);
      this.lastConnectionError = err;
    });
    this.watchdog = setInterval(() => this.watch(), Math.max(10, Math.floor(this.commandTimeoutMs / 10))).unref();
    client.on('ready', () => {
      this.timedOut = false;
      if (wasReady && this.lastConnectionError) this.logger?.info(`redis at ${this.url}: connection restored`);
      wasReady = true;
      this.lastConnectionError = undefined;
    });
  }

  /** Connects, waiting at most `openTimeoutMs` for Redis (a reply error such as WRONGPASS fails at once). */
  static async open(options: RedisConnectionOptions): Promise<RedisConnection> {
    const openTimeoutMs = options.openTimeoutMs ?? REDIS_OPEN_TIMEOUT_MS;
    const clientOptions: RedisOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      connectTimeout: Math.max(1000, Math.min(openTimeoutMs, 3000)),
      // Fail the commands in flight as soon as the connection drops instead of resending them later.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (times) => Math.min(times * 100, 2000),
      connectionName: options.connectionName,
      // No auto-pipelining: `batchWrites` batches the writes at the socket instead, for much less work per command.
      enableAutoPipelining: false,
    };
    // ioredis is loaded by the first Redis-backed adapter opened: an engine that uses none never loads it.
    const { Redis: RedisClient, Command: CommandClass } = await import('ioredis');
    let client: Redis;
    try {
      client = new RedisClient(options.url, clientOptions);
    } catch (err) {
      // An unparseable URL.
      const reason = scrubPassword(describeError(err), urlPassword(options.url));
      throw new FlintError('store_unavailable', `redis at ${redactUrl(options.url)} is unavailable: ${reason}`);
    }
    const connection = new RedisConnection(client, CommandClass, options, options.logger);
    await connection.waitUntilReady(openTimeoutMs);
    return connection;
  }

  /** Runs one command, turning every failure of Redis or of the connection into store_unavailable. */
  async call<T>(command: () => Promise<T>): Promise<T> {
    if (this.inFlight === 0) this.lastProgress = Date.now();
    this.inFlight++;
    if (!this.corked) this.batchWrites();
    try {
      return await command();
    } catch (err) {
      throw err instanceof FlintError ? err : this.failure(this.reasonOf(describeError(err)));
    } finally {
      this.inFlight--;
      this.lastProgress = Date.now();
    }
  }

  /**
   * Sends `name args…` (arguments as given, see flatCommandClass) and resolves with Redis's answer, strings
   * as strings. Run it through `call` like the client's own commands.
   */
  readonly send = <T>(name: string, args: RedisArg[]): Promise<T> => {
    const command = new this.FlatCommand(name, args);
    this.client.sendCommand(command);
    return command.promise as Promise<T>;
  };

  /** The store_unavailable error saying why (`the store is closed`), with any password scrubbed from the reason. */
  failure(reason: string): FlintError {
    return new FlintError('store_unavailable', `redis at ${this.url} is unavailable: ${this.scrub(reason)}`);
  }

  /** Stops the watchdog and closes the connection: gracefully (QUIT) when it is up, else at once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watchdog);
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // Fall through: drop the connection without waiting.
      }
    }
    this.client.disconnect();
  }

  // -------------------------------------------------------------------------------------------

  /**
   * Corks the socket until `setImmediate`, so every command issued until then (in this tick, and in the
   * I/O callbacks already due) leaves in one write, as ioredis's auto-pipelining would batch them, but
   * without its per-command pipeline objects, promises and one-pipeline-at-a-time wait, which cost more
   * CPU than the commands themselves (bench/state.mjs).
   */
  private batchWrites(): void {
    const stream = this.client.stream;
    if (!stream || this.client.status !== 'ready') return;
    this.corked = true;
    this.corkedStream = stream;
    stream.cork();
    setImmediate(this.uncork);
  }

  /**
   * The command time-out, without a timer per command: when commands are in flight and none has
   * been answered for `commandTimeoutMs`, the connection is dropped, which fails them all at once
   * (store_unavailable) and reconnects.
   */
  private watch(): void {
    if (this.inFlight === 0 || Date.now() - this.lastProgress <= this.commandTimeoutMs || this.client.status !== 'ready') return;
    this.timedOut = true;
    this.logger?.warn(`redis at ${this.url}: no answer within ${this.commandTimeoutMs} ms; reconnecting`);
    // A hung server never finishes a graceful close, so the socket is destroyed: ioredis then fails
    // the queued commands at once and reconnects.
    this.client.stream.destroy();
  }

  /** Why a command failed, in words: a time-out, a lost connection (with its last error), or Redis's own answer. */
  private reasonOf(message: string): string {
    if (this.timedOut && /Connection is closed|max retries per request/i.test(message)) return `no answer within ${this.commandTimeoutMs} ms`;
    if (/enableOfflineQueue|Connection is closed|max retries per request/i.test(message)) {
      const reason = this.client.status === 'ready' ? 'the connection was lost' : `not connected (${this.client.status})`;
      return this.lastConnectionError ? `${reason}: ${this.lastConnectionError.message}` : reason;
    }
    if (/Command timed out/i.test(message)) return `no answer within ${this.commandTimeoutMs} ms`;
    return message;
  }

  /** Waits for the first `ready`; on time-out (or an answer such as a wrong password) closes and rejects. */
  private async waitUntilReady(timeoutMs: number): Promise<void> {
    const client = this.client;
    let timer: NodeJS.Timeout | undefined;
    let onError: ((err: Error) => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
        // A reply error while connecting (WRONGPASS, NOAUTH, …) will not go away by retrying.
        onError = (err: Error) => {
          if (err.name === 'ReplyError') reject(err);
        };
        client.on('error', onError);
        client.connect().then(resolve, () => {
          // The first attempt failed; ioredis keeps retrying until ready or the time-out above.
          client.once('ready', () => resolve());
        });
      });
    } catch (err) {
      this.closed = true;
      clearInterval(this.watchdog);
      client.disconnect();
      let reason = describeError(err);
      if (this.lastConnectionError && this.lastConnectionError !== err) reason += ` (last error: ${this.lastConnectionError.message})`;
      throw this.failure(reason);
    } finally {
      clearTimeout(timer);
      if (onError) client.off('error', onError);
    }
  }

  /** Removes the password from a reason text, should a client message ever quote it. */
  private scrub(text: string): string {
    return scrubPassword(text, this.client.options.password);
  }
}
