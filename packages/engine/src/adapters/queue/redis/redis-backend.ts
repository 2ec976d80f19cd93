import { randomUUID } from 'node:crypto';
import { FlintError } from '@flint/protocol';
import type { AdapterLog } from '../../shared/log.js';
import { RedisChannels } from '../../shared/redis-channels.js';
import { RedisConnection } from '../../shared/redis-connection.js';
import { defineScripts } from '../../shared/redis-scripts.js';
import { groupOf } from '../groups.js';
import type { BindOptions, ConsumeOptions, Consumer, DeadLetter, DeliveryHandler, NewMessage, QueueBackend, QueueStats, WaitingMessage } from '../types.js';
import { decodeBody, encodeBody } from './body.js';
import type { RedisQueueConfig } from './config.js';
import { type Batch, type ConsumerHost, type PendingSettle, RedisConsumer } from './consumer.js';
import { QueueKeys, decodeName, encodeName } from './keys.js';
import { type Reply, ScriptNames, copyHead, parseBatch, publishHead, settleArg } from './packed.js';
import { QUEUE_SCRIPTS, type QueueScripts } from './scripts.js';

/** A publish to a topic whose bindings change under it this many times in a row gives up. */
const TOPIC_PUBLISH_ATTEMPTS = 5;

/** A topic's bindings as last seen, with the signature the publish script checks them by. */
interface KnownBindings {
  signature: string;
  bindings: [queue: string, options: BindOptions][];
}

/**
 * `redis`: work queues on a Redis server shared by every engine on the same `prefix` (layout in keys.ts and
 * scripts.ts). Each message is delivered to one consumer of one engine at a time under a lease; a lease not
 * settled in time (the engine died, or the handler hangs) is taken back by the next fetch of any engine.
 * Topic bindings are held per engine with an expiry renewed by a heartbeat, so a crashed engine's bindings
 * lapse. Commands go through a RedisConnection (time-outs, nothing queued while Redis is down); its
 * failures surface as `queue_unavailable`.
 */
export class RedisQueueBackend implements QueueBackend, ConsumerHost {
  readonly kind = 'redis';
  readonly pollIntervalMs: number;
  private readonly scripts: QueueScripts;
  private readonly keys: QueueKeys;
  /** Tells this engine's holds on bindings apart from other engines'. */
  private readonly instance = randomUUID();
  private readonly consumers = new Set<RedisConsumer>();
  /** This engine's consumers by queue: a publish fetches for an idle one in the same script (see `claim`). */
  private readonly consumersOf = new Map<string, Set<RedisConsumer>>();
  /** This engine's bindings: topic → queue → options JSON. */
  private readonly holds = new Map<string, Map<string, string>>();
  private readonly topicCache = new Map<string, KnownBindings>();
  /** Publishes waiting for the end of this turn of the event loop (see `send`). */
  private outbox: Outgoing[] = [];
  /** Called once the next publish call (the outbox's), or else the last one sent, has been answered. */
  private afterOutbox: (() => void)[] = [];
  private afterSent: (() => void)[] | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  private closing = false;
  private closed = false;

  private constructor(
    private readonly connection: RedisConnection,
    /**
     * The wake-ups of idle consumers: a script that makes a message deliverable while the queue is marked
     * idle (a consumer left room unfilled at its last fetch: `wake` in scripts.ts), or that sets a new due
     * time, PUBLISHes on its queue's wake channel. Pub/sub loses what is sent while the connection is down,
     * so when it comes back every consumer is woken once; the consumers' poll covers anything else.
     */
    private readonly wakes: RedisChannels,
    private readonly config: RedisQueueConfig,
    readonly logger: AdapterLog | undefined,
  ) {
    this.scripts = defineScripts<QueueScripts>(connection.send, QUEUE_SCRIPTS);
    this.keys = new QueueKeys(config.prefix);
    this.pollIntervalMs = config.poll_interval_ms;
    this.heartbeat = setInterval(() => this.renewHolds(), Math.floor(config.binding_ttl_ms / 3));
    this.heartbeat.unref?.();
  }

  /** Opens the command connection and the wake-up connection, each waiting at most `connect_timeout_ms`. */
  static async open(config: RedisQueueConfig, logger?: AdapterLog): Promise<RedisQueueBackend> {
    const options = { url: config.redis_url, commandTimeoutMs: config.command_timeout_ms, openTimeoutMs: config.connect_timeout_ms, logger };
    const connection = await RedisConnection.open({ ...options, connectionName: 'flint-queue' }).catch((err) => {
      throw asQueueError(err);
    });
    let wakeConnection: RedisConnection;
    try {
      wakeConnection = await RedisConnection.open({ ...options, connectionName: 'flint-queue-wake' });
    } catch (err) {
      await connection.close();
      throw asQueueError(err);
    }
    const wakes = new RedisChannels(wakeConnection, (channel, err) =>
      logger?.warn(`queue wake-ups of ${channel} not subscribed (${err.message}); consumers poll until the connection is back`),
    );
    return new RedisQueueBackend(connection, wakes, config, logger);
  }

  get open(): boolean {
    return !this.closing;
  }

  // ---- publishing ----

  async publish(queue: string, message: NewMessage): Promise<{ id: string }> {
    const id = randomUUID();
    await this.send('', '', '', encodeBody(message), delayOf(message.delayMs), [{ queue, id, group: message.group }]);
    return { id };
  }

  async publishTopic(topic: string, message: NewMessage): Promise<number> {
    const body = encodeBody(message);
    const delay = delayOf(message.delayMs);
    const cached = this.topicCache.get(topic);
    let known = cached ?? { signature: '', bindings: [] };
    let fresh = cached === undefined;
    const { holders, options } = this.keys.topic(topic);
    for (let attempt = 0; attempt < TOPIC_PUBLISH_ATTEMPTS; attempt++) {
      let signature = known.signature;
      let copies: Copy[] = [];
      try {
        // Every group is worked out before anything is sent: a refused message is stored nowhere.
        for (const [queue, options] of known.bindings) copies.push({ queue, id: randomUUID(), group: groupOf(queue, message.data, options) });
      } catch (err) {
        // Refused by bindings seen earlier: check with the current ones first (a signature that never matches).
        if (fresh) throw err;
        signature = '?';
        copies = [];
      }
      const reply = await this.send(holders, options, signature, body, delay, copies);
      if (reply[0] === 1) return Number(reply[1]);
      known = parseBindings(reply);
      fresh = true;
      this.topicCache.set(topic, known);
    }
    throw new FlintError('queue_unavailable', `redis at ${this.connection.url}: the bindings of topic ${topic} kept changing during a publish`);
  }

  /**
   * Queues one publish (PUBLISH_MANY in scripts.ts) for the call that takes every publish of this turn of
   * the event loop: one script call instead of one each. Resolves with its part of the reply.
   */
  private send(holders: string, options: string, signature: string, body: string, delay: number, copies: Copy[]): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => {
      this.outbox.push({ holders, options, signature, body, delay, copies, resolve, reject });
      if (this.outbox.length === 1) process.nextTick(this.flushOutbox);
    });
  }

  private readonly flushOutbox = (): void => {
    const items = this.outbox;
    if (items.length === 0) return;
    this.outbox = [];
    const after = this.afterOutbox;
    this.afterOutbox = [];
    this.afterSent = after;
    const answered = () => {
      if (this.afterSent === after) this.afterSent = undefined;
      for (const then of after) then();
    };
    const names = new ScriptNames();
    const packed: string[] = [];
    const claims: Claim[][] = [];
    for (const item of items) {
      packed.push(publishHead(item.delay, item.copies.length, names.of(item.holders), names.of(item.options), item.signature), item.body);
      const mine: Claim[] = [];
      for (const copy of item.copies) {
        const claim = this.claim(copy.queue);
        mine.push(claim);
        packed.push(copyHead(names.of(this.keys.queue(copy.queue)), claim.n, claim.leaseMs, copy.id, copy.group));
      }
      claims.push(mine);
    }
    const args = [names.list.length, ...names.list, ...packed];
    this.call(() => this.scripts.flintQueuePublishMany(...args)).then(
      (replies) => {
        items.forEach((item, i) => {
          const reply = replies[i] as Reply;
          const mine = claims[i] as Claim[];
          if (reply[0] === 1) {
            let at = 2;
            for (const claim of mine) {
              const parsed = parseBatch(reply, at);
              claim.take(parsed.batch);
              at = parsed.next;
            }
          } else for (const claim of mine) claim.release();
          item.resolve(reply);
        });
        answered();
      },
      (err: unknown) => {
        for (const mine of claims) for (const claim of mine) claim.release();
        for (const item of items) item.reject(err);
        answered();
      },
    );
  };

  afterPublish(then: () => void): boolean {
    const waiting = this.outbox.length > 0 ? this.afterOutbox : this.afterSent;
    if (!waiting) return false;
    waiting.push(then);
    return true;
  }

  // ---- topic bindings ----

  async bind(topic: string, queue: string, options: BindOptions): Promise<void> {
    const json = JSON.stringify({ fifo: options.fifo === true, ...(options.groupField === undefined ? {} : { groupField: options.groupField }) });
    await this.hold('bind', [[topic, queue, json]]);
    let held = this.holds.get(topic);
    if (!held) {
      held = new Map();
      this.holds.set(topic, held);
    }
    held.set(queue, json);
    this.topicCache.delete(topic);
  }

  async unbind(topic: string, queue: string): Promise<void> {
    await this.hold('release', [[topic, queue, '']]);
    const held = this.holds.get(topic);
    held?.delete(queue);
    if (held?.size === 0) this.holds.delete(topic);
    this.topicCache.delete(topic);
  }

  async topics(): Promise<{ topic: string; queues: string[] }[]> {
    const reply = await this.call(() => this.scripts.flintQueueTopics(this.keys.topics, this.keys.prefix));
    const out: { topic: string; queues: string[] }[] = [];
    for (let i = 0; i < reply.length; ) {
      const topic = decodeName(String(reply[i]));
      const count = Number(reply[i + 1]);
      out.push({ topic, queues: reply.slice(i + 2, i + 2 + count).map(String) });
      i += 2 + count;
    }
    return out;
  }

  // ---- consuming ----

  consume(queue: string, options: ConsumeOptions, handler: DeliveryHandler): Consumer {
    if (this.closing) throw this.closedError();
    const consumer = new RedisConsumer(this, queue, options, handler);
    this.consumers.add(consumer);
    let local = this.consumersOf.get(queue);
    if (!local) {
      local = new Set();
      this.consumersOf.set(queue, local);
    }
    local.add(consumer);
    return {
      stop: async () => {
        this.consumers.delete(consumer);
        this.forgetConsumer(consumer);
        await consumer.stop();
      },
    };
  }

  async fetch(queue: string, n: number, leaseMs: number): Promise<Batch> {
    const reply = await this.call(() => this.scripts.flintQueueFetch(this.keys.queue(queue), n, leaseArg(leaseMs)));
    return parseBatch(reply, 0).batch;
  }

  async settle(queue: string, settles: PendingSettle[], n: number, leaseMs: number): Promise<Batch> {
    const args: (string | number)[] = [n, leaseArg(leaseMs), encodeName(queue)];
    for (const { leased, settlement: s } of settles) {
      const delay = s.type === 'retry' || s.type === 'defer' ? delayOf(s.delayMs) : 0;
      const error = s.type === 'retry' || s.type === 'dead' ? s.error : '';
      args.push(settleArg(leased.delivery.id, leased.token, s.type, delay, error));
    }
    const reply = await this.call(() => this.scripts.flintQueueSettle(this.keys.queue(queue), this.keys.deadQueues, ...args));
    return parseBatch(reply, 0).batch;
  }

  listen(queue: string, wake: () => void): { subscribed: Promise<void>; stop: () => void } {
    const { subscribed, stop } = this.wakes.listen(this.keys.wakeChannel(queue), wake, wake);
    return { subscribed: subscribed.then(() => {}), stop };
  }

  // ---- inspection and dead letters ----

  async stats(queue: string): Promise<QueueStats> {
    const [waiting, inFlight, delayed, dead] = await this.call(() => this.scripts.flintQueueStats(this.keys.queue(queue)));
    return { waiting: Number(waiting), inFlight: Number(inFlight), delayed: Number(delayed), dead: Number(dead) };
  }

  async peek(queue: string, offset: number, limit: number): Promise<WaitingMessage[]> {
    if (limit <= 0) return [];
    const reply = await this.call(() => this.scripts.flintQueuePeek(this.keys.queue(queue), Math.max(0, offset), limit));
    const all: WaitingMessage[] = [];
    for (let i = 1; i < reply.length; i += 3) {
      const body = decodeBody(String(reply[i + 1]));
      all.push({
        id: String(reply[i]),
        data: body.d,
        publishedAt: body.t,
        group: groupFrom(reply[i + 2]),
        functionId: body.f,
        traceparent: body.tp,
        baggage: body.bg,
      });
    }
    if (reply[0] === 0) return all; // the page itself (no groups)
    // Waiting messages of several lists: oldest first by publish time (a stable sort keeps each list's order).
    return all.sort((a, b) => a.publishedAt - b.publishedAt).slice(Math.max(0, offset), Math.max(0, offset) + limit);
  }

  async remove(queue: string, id: string): Promise<boolean> {
    return (await this.call(() => this.scripts.flintQueueRemove(this.keys.queue(queue), id))) === 1;
  }

  async deadLetters(queue: string, offset: number, limit: number): Promise<DeadLetter[]> {
    if (limit <= 0) return [];
    const reply = await this.call(() => this.scripts.flintQueueDeadLetters(this.keys.queue(queue), Math.max(0, offset), limit));
    const out: DeadLetter[] = [];
    for (let i = 0; i < reply.length; i += 6) {
      const body = decodeBody(String(reply[i + 1]));
      out.push({
        id: String(reply[i]),
        data: body.d,
        error: String(reply[i + 2]),
        attempts: Number(reply[i + 3]),
        failedAt: Math.floor(Number(reply[i + 4]) / 1000),
        publishedAt: body.t,
        group: groupFrom(reply[i + 5]),
        functionId: body.f,
        traceparent: body.tp,
        baggage: body.bg,
      });
    }
    return out;
  }

  async redrive(queue: string): Promise<number> {
    return Number(await this.call(() => this.scripts.flintQueueRedrive(this.keys.queue(queue), this.keys.deadQueues, encodeName(queue), 'all', '')));
  }

  async redriveMessage(queue: string, id: string): Promise<boolean> {
    return (await this.call(() => this.scripts.flintQueueRedrive(this.keys.queue(queue), this.keys.deadQueues, encodeName(queue), 'one', id))) === 1;
  }

  async discard(queue: string, id: string): Promise<boolean> {
    return (await this.call(() => this.scripts.flintQueueDiscard(this.keys.queue(queue), this.keys.deadQueues, encodeName(queue), id))) === 1;
  }

  async deadQueues(): Promise<{ queue: string; count: number }[]> {
    const reply = await this.call(() => this.scripts.flintQueueDeadQueues(this.keys.deadQueues, this.keys.prefix));
    const out: { queue: string; count: number }[] = [];
    for (let i = 0; i < reply.length; i += 2) out.push({ queue: decodeName(String(reply[i])), count: Number(reply[i + 1]) });
    return out;
  }

  /**
   * Stops the consumers (a delivery in hand stays leased: it goes again after its visibility timeout),
   * releases this engine's bindings and closes both connections.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.heartbeat);
    const consumers = [...this.consumers];
    this.consumers.clear();
    this.consumersOf.clear();
    await Promise.all(consumers.map((c) => c.stop()));
    const held = this.heldList();
    if (held.length > 0) {
      try {
        await this.hold('release', held);
      } catch (err) {
        this.logger?.warn(`queue bindings not released (${(err as Error).message}); they lapse within ${this.config.binding_ttl_ms} ms`);
      }
    }
    this.closed = true;
    await Promise.all([this.wakes.close(), this.connection.close()]);
  }

  // -------------------------------------------------------------------------------------------

  /**
   * Room of an idle consumer of this engine on `queue`, reserved for the publish about to be sent: its
   * script fetches into it right after storing, which spares the consumer the wake-up and its own fetch.
   */
  private claim(queue: string): Claim {
    const local = this.consumersOf.get(queue);
    if (local)
      for (const consumer of local) {
        const n = consumer.claim();
        if (n > 0) {
          const leaseMs = leaseArg(consumer.visibilityTimeoutMs);
          return { n, leaseMs, take: (batch) => consumer.received(batch, n), release: () => consumer.released(n) };
        }
      }
    return NO_CLAIM;
  }

  private forgetConsumer(consumer: RedisConsumer): void {
    const local = this.consumersOf.get(consumer.queue);
    local?.delete(consumer);
    if (local?.size === 0) this.consumersOf.delete(consumer.queue);
  }

  /** Keeps this engine's holds alive; restores one another engine pruned after a pause of this one. */
  private renewHolds(): void {
    const held = this.heldList();
    if (held.length === 0 || this.closing) return;
    this.hold('renew', held).catch((err: Error) => this.logger?.warn(`queue bindings not renewed (${err.message}); retrying`));
  }

  private heldList(): [topic: string, queue: string, json: string][] {
    const out: [string, string, string][] = [];
    for (const [topic, queues] of this.holds) for (const [queue, json] of queues) out.push([topic, queue, json]);
    return out;
  }

  private async hold(mode: 'bind' | 'renew' | 'release', entries: [topic: string, queue: string, json: string][]): Promise<void> {
    const args: string[] = [mode, String(this.config.binding_ttl_ms), this.keys.prefix];
    for (const [topic, queue, json] of entries) args.push(encodeName(topic), `${this.instance}:${queue}`, queue, json);
    await this.call(() => this.scripts.flintQueueHold(this.keys.topics, ...args));
  }

  /** Runs one command (see RedisConnection.call); its failures become queue_unavailable. */
  private async call<T>(command: () => Promise<T>): Promise<T> {
    if (this.closed) throw this.closedError();
    try {
      return await this.connection.call(command);
    } catch (err) {
      throw asQueueError(err);
    }
  }

  private closedError(): FlintError {
    return new FlintError('queue_unavailable', `redis at ${this.connection.url} is unavailable: the queue backend is closed`);
  }
}

/** The shared connection's `store_unavailable`, as the queue family names it (same message). */
function asQueueError(err: unknown): unknown {
  return err instanceof FlintError && err.code === 'store_unavailable' ? new FlintError('queue_unavailable', err.message) : err;
}

/** One copy of a message, for one queue. */
interface Copy {
  queue: string;
  id: string;
  group: string | undefined;
}

interface Outgoing {
  holders: string;
  options: string;
  signature: string;
  body: string;
  delay: number;
  copies: Copy[];
  resolve(reply: Reply): void;
  reject(err: unknown): void;
}

/** A publish's fetch for a consumer of this engine: `n` 0 when there is none. */
interface Claim {
  n: number;
  leaseMs: number;
  take(batch: Batch): void;
  release(): void;
}

const NO_CLAIM: Claim = { n: 0, leaseMs: 0, take: () => {}, release: () => {} };

function leaseArg(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

function delayOf(ms: number | undefined): number {
  return ms !== undefined && ms > 0 ? Math.ceil(ms) : 0;
}

function groupFrom(marker: unknown): string | undefined {
  const text = String(marker);
  return text.startsWith('=') ? text.slice(1) : undefined;
}

function parseBindings(reply: (string | number)[]): KnownBindings {
  const bindings: [string, BindOptions][] = [];
  for (let i = 2; i < reply.length; i += 2) {
    let options: BindOptions = {};
    try {
      options = JSON.parse(String(reply[i + 1])) as BindOptions;
    } catch {
      // An unreadable binding is taken as a plain (non-FIFO) one.
    }
    bindings.push([String(reply[i]), options]);
  }
  return { signature: String(reply[1]), bindings };
}
