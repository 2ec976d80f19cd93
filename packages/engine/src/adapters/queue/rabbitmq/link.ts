import { FlintError } from '@flint/protocol';
import type { Channel, ChannelModel, ConfirmChannel, Options } from 'amqplib';
import { describeError } from '../../shared/files.js';
import type { AdapterLog } from '../../shared/log.js';
import { redactUrl, urlPassword } from '../../shared/url-text.js';
import { coalesceWrites } from './write-coalescing.js';

export interface LinkOptions {
  url: string;
  connectTimeoutMs: number;
  publishTimeoutMs: number;
  reconnectMaxMs: number;
  logger?: AdapterLog;
}

/** Declarations are repeated after this long, so a delay queue's `x-expires` never runs out under a publisher. */
const DECLARE_TTL_MS = 30_000;

/**
 * The adapter's one AMQP connection, kept up:
 *
 * - Lost (broker gone, connection closed by the server): every call fails at once with
 *   `queue_unavailable` (nothing waits for the broker, nothing is dropped silently: a publish that was
 *   not confirmed rejects), and a reconnect is tried with a back-off doubling from 100 ms up to
 *   `reconnectMaxMs`. Once back, the `onUp` listeners (the consumers) restore themselves.
 * - Publishes go through one ConfirmChannel with `mandatory`: one resolves only when the broker
 *   confirmed it, and a message the broker could route nowhere (a queue deleted under us) rejects.
 * - Declarations are cached per connection, so a hot publish path costs one round trip.
 */
export class AmqpLink {
  readonly url: string;
  private model: ChannelModel | undefined;
  private pub: Promise<ConfirmChannel> | undefined;
  /** Publishes awaiting their confirm. */
  private publishing = 0;
  /**
   * Ids of the messages the broker returned as unroutable, until their confirm comes. Only returns add to
   * it (rare), so a publish costs no insert and delete in a collection (which would promote every message
   * to the old generation, see SequenceTable); it is emptied whenever no publish is waiting.
   */
  private readonly returned = new Set<string>();
  private declared = new Map<string, { at: number; done: Promise<unknown> }>();
  private readonly upListeners = new Set<() => void>();
  private lastError = '';
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private toldUncoalesced = false;
  /** Counts connections: a delivery received on an older one can no longer be settled. */
  generation = 0;

  private constructor(private readonly options: LinkOptions) {
    this.url = redactUrl(options.url);
  }

  static async open(options: LinkOptions): Promise<AmqpLink> {
    const link = new AmqpLink(options);
    try {
      await link.connect();
    } catch (err) {
      throw link.failure(describeError(err));
    }
    return link;
  }

  get up(): boolean {
    return this.model !== undefined;
  }

  onUp(listener: () => void): () => void {
    this.upListeners.add(listener);
    return () => this.upListeners.delete(listener);
  }

  failure(reason: string): FlintError {
    const password = urlPassword(this.options.url);
    const safe = password ? reason.split(password).join('***') : reason;
    return new FlintError('queue_unavailable', `rabbitmq at ${this.url} is unavailable: ${safe}`);
  }

  /** The live connection, or queue_unavailable at once. */
  connection(): ChannelModel {
    if (this.closed) throw this.failure('the adapter is closed');
    if (!this.model) throw this.failure(`not connected${this.lastError ? ` (${this.lastError})` : ''}; reconnecting`);
    return this.model;
  }

  /** A new channel on the live connection (errors become queue_unavailable). */
  async channel(): Promise<Channel> {
    const model = this.connection();
    try {
      const ch = await model.createChannel();
      ch.on('error', () => {}); // a channel error also closes it; whoever uses it sees the failed call
      return ch;
    } catch (err) {
      throw this.failure(describeError(err));
    }
  }

  /** Runs `work` on a channel of its own, closed afterwards: whatever it took with basic.get and did not ack goes back in order. */
  async withChannel<T>(work: (ch: Channel) => Promise<T>): Promise<T> {
    const ch = await this.channel();
    try {
      return await work(ch);
    } catch (err) {
      throw err instanceof FlintError ? err : this.failure(describeError(err));
    } finally {
      await ch.close().catch(() => {});
    }
  }

  /** Declares once per connection (and again every 30 s): `declare` runs on the publish channel. */
  async declare(key: string, declare: (ch: ConfirmChannel) => Promise<unknown>): Promise<void> {
    const gen = this.generation;
    const known = this.declared.get(key);
    if (known && Date.now() - known.at < DECLARE_TTL_MS) {
      await known.done;
      return;
    }
    const done = this.publisher().then((ch) => declare(ch));
    this.declared.set(key, { at: Date.now(), done });
    try {
      await done;
    } catch (err) {
      if (this.generation === gen && this.declared.get(key)?.done === done) this.declared.delete(key);
      throw err instanceof FlintError ? err : this.failure(describeError(err));
    }
  }

  /** Publishes and resolves once the broker confirmed it (stored on disk for a persistent message in a durable queue). */
  async publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void> {
    const ch = await this.publisher();
    await new Promise<void>((resolve, reject) => {
      const id = options.messageId as string;
      this.publishing++;
      const timer = setTimeout(() => finish(this.failure(`no publisher confirm within ${this.options.publishTimeoutMs} ms`)), this.options.publishTimeoutMs);
      let finished = false;
      const finish = (err: Error | undefined) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        this.publishing--;
        if (this.returned.size > 0) {
          this.returned.delete(id);
          if (this.publishing === 0) this.returned.clear();
        }
        if (err) reject(err);
        else resolve();
      };
      try {
        ch.publish(exchange, routingKey, content, options, (err) => {
          if (err) finish(this.failure(`the broker did not confirm the message (${describeError(err)})`));
          else if (this.returned.has(id)) finish(new RoutedNowhere(exchange, routingKey));
          else finish(undefined);
        });
      } catch (err) {
        finish(this.failure(describeError(err)));
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    const model = this.model;
    this.model = undefined;
    if (!model) return;
    // A graceful close needs the broker's answer: a hung broker gets the socket dropped instead.
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), this.options.connectTimeoutMs);
    });
    const hung = await Promise.race([
      model.close().then(
        () => false,
        () => false,
      ),
      gaveUp,
    ]);
    clearTimeout(timer);
    if (hung) (model as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }

  /** Test hook: drops the socket as a broker-side close would, to exercise the reconnect path. */
  dropForTest(): void {
    const conn = (this.model as unknown as { connection?: { stream?: { destroy(err?: Error): void } } } | undefined)?.connection;
    // With an error: amqplib notices a socket's 'error' (or 'end'), not a bare destroy.
    conn?.stream?.destroy(new Error('connection dropped by the test hook'));
  }

  // -------------------------------------------------------------------------------------------

  private publisher(): Promise<ConfirmChannel> {
    const model = this.connection();
    if (!this.pub) {
      const pub = model.createConfirmChannel().then((ch) => {
        ch.on('error', () => {});
        // The broker returns an unroutable `mandatory` message before confirming it.
        ch.on('return', (msg: { properties: { messageId?: string } }) => {
          const id = msg.properties.messageId;
          if (id !== undefined && this.publishing > 0) this.returned.add(id);
        });
        // A channel error (a declaration refused) closes only this channel: the next call opens another.
        ch.on('close', () => {
          if (this.pub === pub) this.pub = undefined;
          this.declared.clear();
        });
        return ch;
      });
      pub.catch(() => {
        if (this.pub === pub) this.pub = undefined;
      });
      this.pub = pub;
    }
    return this.pub.catch((err) => {
      throw err instanceof FlintError ? err : this.failure(describeError(err));
    });
  }

  private async connect(): Promise<void> {
    // amqplib is loaded by the first connect: an engine that uses no rabbitmq adapter never loads it.
    const { default: amqp } = await import('amqplib');
    const model = await amqp.connect(this.options.url, { timeout: this.options.connectTimeoutMs, noDelay: true });
    if (!coalesceWrites(model) && !this.toldUncoalesced) {
      this.toldUncoalesced = true;
      this.options.logger?.info(`rabbitmq at ${this.url}: this amqplib version is not the expected one; each frame goes out in a write of its own`);
    }
    model.on('error', (err: Error) => {
      this.lastError = err.message;
    });
    model.on('close', (err?: Error) => {
      if (this.model !== model) return;
      this.model = undefined;
      this.pub = undefined;
      this.declared.clear();
      this.generation++;
      if (this.closed) return;
      this.lastError = err?.message ?? 'connection closed';
      this.options.logger?.warn(`rabbitmq at ${this.url}: connection lost (${this.lastError}); calls fail with queue_unavailable until it is back`);
      this.scheduleReconnect();
    });
    if (this.closed) {
      await model.close().catch(() => {});
      throw this.failure('the adapter is closed');
    }
    this.model = model;
    this.generation++;
    this.failures = 0;
  }

  private scheduleReconnect(): void {
    const delay = Math.min(100 * 2 ** this.failures, this.options.reconnectMaxMs);
    this.failures++;
    this.retryTimer = setTimeout(() => {
      this.connect().then(
        () => {
          this.options.logger?.info(`rabbitmq at ${this.url}: connection restored`);
          for (const listener of this.upListeners) listener();
        },
        (err) => {
          this.lastError = describeError(err);
          if (!this.closed) this.scheduleReconnect();
        },
      );
    }, delay);
    this.retryTimer.unref?.();
  }
}

/** The broker stored the message nowhere: no queue is bound to the exchange (or the queue was deleted). */
export class RoutedNowhere extends Error {
  constructor(exchange: string, routingKey: string) {
    super(`no queue took the message (exchange ${JSON.stringify(exchange)}, routing key ${JSON.stringify(routingKey)})`);
  }
}
