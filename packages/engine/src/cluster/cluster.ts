import { randomUUID } from 'node:crypto';
import type { ClusterMember, TriggerInfo, WorkerInfo } from '@flint/protocol';
import type { RemoteView } from '../core/api/registry.js';
import type { ChannelManager } from '../core/channels.js';
import type { RegistryEvents } from '../core/events.js';
import type { FunctionRegistry } from '../core/functions.js';
import type { Invoker } from '../core/invoker.js';
import type { Logger } from '../core/logger.js';
import type { TriggerRegistry } from '../core/triggers.js';
import type { WorkerRegistry } from '../core/workers.js';
import { ChannelRelay } from './channel-relay.js';
import { TriggerMirror } from './mirror.js';
import { RemoteCalls } from './remote-calls.js';
import { RemoteTriggerTypes } from './remote-types.js';
import type { ClusterTransport } from './transport.js';
import { type Heartbeat, type NodeSnapshot, type Subjects, decode, encode, subjects } from './wire.js';

export interface ClusterSettings {
  name: string;
  nodeId: string;
  heartbeatMs: number;
  expireMs: number;
  version: string;
}

export interface ClusterDeps {
  channels: ChannelManager;
  functions: FunctionRegistry;
  workers: WorkerRegistry;
  triggers: TriggerRegistry;
  invoker: Invoker;
  events: RegistryEvents;
  logger: Logger;
}

interface Peer {
  node: string;
  seq: number;
  snapshot: NodeSnapshot | undefined;
  lastSeen: number;
}

/** How long after a registry change this engine tells the others (a burst of registrations is one announcement). */
const ANNOUNCE_DELAY_MS = 20;

/**
 * One engine's part of a cluster: it announces what its workers provide (a snapshot on every change
 * and a heartbeat), keeps the other engines' snapshots (dropping an engine whose heartbeats stop), makes
 * their functions callable here (remote providers in the function registry, used when no worker of this
 * engine provides the function) and runs the calls they forward.
 */
export class Cluster implements RemoteView {
  private readonly peers = new Map<string, Peer>();
  private readonly subjects: Subjects;
  /** Channels held by other engines, and this engine's relayed to them. */
  readonly channels: ChannelRelay;
  private seq = 0;
  private lastContent = '';
  private snapshot: NodeSnapshot | undefined;
  /** The seq of the last snapshot found too large to send (told once). */
  /** The snapshot was too large to send, and that was said; cleared when one fits again. */
  private toldTooLarge = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private announceTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly startedAt = Date.now();
  private stopped = false;
  private readonly log: Logger;
  private readonly instance = randomUUID();
  private warnedTwin = false;
  private readonly mirror: TriggerMirror;
  private readonly remoteTypes: RemoteTriggerTypes;
  private readonly calls: RemoteCalls;

  constructor(
    private readonly transport: ClusterTransport,
    private readonly settings: ClusterSettings,
    private readonly deps: ClusterDeps,
    private readonly bridgeUrl: () => string,
  ) {
    this.subjects = subjects(settings.name);
    this.log = deps.logger.child({ component: 'cluster' });
    this.mirror = new TriggerMirror(deps.triggers, this.log);
    this.remoteTypes = new RemoteTriggerTypes(transport, this.subjects, settings.nodeId, deps.triggers, this.log);
    this.channels = new ChannelRelay(transport, this.subjects, settings.nodeId, deps.channels, this.log);
    this.calls = new RemoteCalls(transport, this.subjects, settings.nodeId, deps.invoker, (node) => this.peers.has(node));
  }

  get nodeId(): string {
    return this.settings.nodeId;
  }

  /** Subscribes, announces this engine and starts the heartbeat. */
  start(): void {
    const t = this.transport;
    t.subscribe(this.subjects.heartbeat, (data) => this.onHeartbeat(decode<Heartbeat>(data)));
    t.subscribe(this.subjects.snapshot(this.nodeId), (_data, reply) => reply && this.answerSnapshot(reply));
    t.subscribe(this.subjects.ping(this.nodeId), (data, reply) => reply?.(data));
    t.onLink((up) => this.onLink(up));
    this.calls.start();
    this.channels.start();
    this.remoteTypes.start();
    this.unsubscribe = this.deps.events.subscribe(() => this.scheduleAnnounce());
    this.currentSnapshot();
    this.beat(true);
    this.heartbeatTimer = setInterval(() => this.tick(), this.settings.heartbeatMs);
    this.heartbeatTimer.unref();
    this.log.info(
      { node_id: this.nodeId, cluster: this.settings.name, transport: t.shownUrl },
      `joined cluster ${this.settings.name} as ${this.nodeId} (${t.kind} at ${t.shownUrl})`,
    );
  }

  /**
   * Tells the others this engine leaves (they stop routing calls here) and fails the calls it still
   * has forwarded elsewhere; calls forwarded here are answered until `close`.
   */
  leave(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.announceTimer);
    this.unsubscribe?.();
    this.transport.publish(this.subjects.heartbeat, encode({ node: this.nodeId, instance: this.instance, seq: this.seq, leave: true } satisfies Heartbeat));
    for (const peer of [...this.peers.values()]) this.drop(peer, 'this engine is stopping');
  }

  /** Leaves (if not done yet) and closes the link, after the answers still on their way. */
  async close(): Promise<void> {
    this.leave();
    this.channels.stop();
    await this.transport.close();
  }

  // ------------------------------------------------------------------------------------ RemoteView

  workers(): WorkerInfo[] {
    const out: WorkerInfo[] = [];
    for (const peer of this.peers.values()) for (const w of peer.snapshot?.workers ?? []) out.push({ ...w, engine: peer.node });
    return out;
  }

  triggers(): TriggerInfo[] {
    const out: TriggerInfo[] = [];
    for (const peer of this.peers.values()) for (const t of peer.snapshot?.triggers ?? []) out.push({ ...t, engine: peer.node });
    return out;
  }

  /**
   * The engines of the cluster this engine knows, itself first, each with the round trip of a ping
   * over the transport (`link_ms`; null for this engine, and for one that did not answer within a second).
   */
  async members(): Promise<ClusterMember[]> {
    const me = this.currentSnapshot();
    const others = [...this.peers.values()].filter((p) => p.snapshot !== undefined);
    const links = await Promise.all(others.map((p) => this.ping(p.node)));
    // One clock reading for every row: this engine is heard from now (0), the others that long before.
    const now = Date.now();
    const row = (s: NodeSnapshot, lastSeen: number, linkMs: number | null): ClusterMember => ({
      node: s.node,
      bridge: s.bridge,
      version: s.version,
      started_at: s.started_at,
      last_seen_ms: now - lastSeen,
      link_ms: linkMs,
      functions: s.functions.length,
      workers: s.workers.length,
    });
    return [row(me, now, null), ...others.map((p, i) => row(p.snapshot as NodeSnapshot, p.lastSeen, links[i] ?? null))];
  }

  private async ping(node: string): Promise<number | null> {
    const started = process.hrtime.bigint();
    try {
      await this.transport.request(this.subjects.ping(node), encode({}), 1000);
    } catch {
      return null;
    }
    return Math.round(Number(process.hrtime.bigint() - started) / 1000) / 1000;
  }

  // ------------------------------------------------------------------------------------ announcing

  /**
   * Sends this engine's snapshot to an engine that asked for it. One too large for the transport is not
   * sent (the others keep the last one they received): said once, at warn, until one fits again (the
   * snapshot also changes while it is too large, with a worker's metrics for one).
   */
  private answerSnapshot(reply: (data: Uint8Array) => void): void {
    const snapshot = this.currentSnapshot();
    const data = encode(snapshot);
    const limit = this.transport.maxMessageBytes;
    if (data.byteLength <= limit) {
      this.toldTooLarge = false;
      return reply(data);
    }
    if (this.toldTooLarge) return;
    this.toldTooLarge = true;
    this.log.warn(
      { size: data.byteLength, limit, functions: snapshot.functions.length },
      `this engine's list of what its workers provide is ${data.byteLength} bytes, more than one message of ${this.transport.kind} carries (${limit} bytes: ${this.transport.maxMessageSetting}); the other engines go on with the last list they received, without this change, until it fits`,
    );
  }

  /** This engine's snapshot, rebuilt; `seq` moves on when its content changed. */
  private currentSnapshot(): NodeSnapshot {
    const { functions, workers, triggers } = this.deps;
    const content = {
      functions: functions.localWorkerFunctions(),
      workers: workers.list(false),
      triggers: triggers.list(true),
      trigger_types: triggers.workerTypes(),
    };
    const text = JSON.stringify(content);
    if (text !== this.lastContent || this.snapshot === undefined) {
      this.lastContent = text;
      this.seq++;
      this.snapshot = {
        node: this.nodeId,
        seq: this.seq,
        started_at: this.startedAt,
        version: this.settings.version,
        bridge: this.bridgeUrl(),
        ...content,
      };
    }
    return this.snapshot;
  }

  private scheduleAnnounce(): void {
    if (this.announceTimer !== undefined || this.stopped) return;
    this.announceTimer = setTimeout(() => {
      this.announceTimer = undefined;
      const before = this.seq;
      this.currentSnapshot();
      if (this.seq !== before) this.beat(false);
    }, ANNOUNCE_DELAY_MS);
    this.announceTimer.unref();
  }

  private beat(hello: boolean): void {
    const beat: Heartbeat = { node: this.nodeId, instance: this.instance, seq: this.seq };
    if (hello) beat.hello = true;
    this.transport.publish(this.subjects.heartbeat, encode(beat));
  }

  private tick(): void {
    this.currentSnapshot();
    this.beat(false);
    if (!this.transport.up) return; // nobody's heartbeats can arrive: nobody is judged by them
    const now = Date.now();
    for (const peer of [...this.peers.values()]) {
      if (now - peer.lastSeen > this.settings.expireMs) this.drop(peer, `no heartbeat for ${now - peer.lastSeen} ms`);
    }
  }

  private onLink(up: boolean): void {
    if (!up) {
      this.log.warn(
        { transport: this.transport.shownUrl },
        `lost the link to ${this.transport.kind} at ${this.transport.shownUrl}: calls to other engines fail with cluster_unavailable until it is back`,
      );
      // Their answers cannot come back over a link that is down (NATS would hold the requests until it is back).
      this.calls.linkLost();
      return;
    }
    // Heartbeats could not arrive while the link was down: every engine gets a fresh start.
    const now = Date.now();
    for (const peer of this.peers.values()) peer.lastSeen = now;
    this.log.info({ transport: this.transport.shownUrl }, `the link to ${this.transport.kind} at ${this.transport.shownUrl} is back`);
    this.beat(true);
  }

  // ------------------------------------------------------------------------------------ other engines

  private onHeartbeat(beat: Heartbeat | undefined): void {
    if (!beat || typeof beat.node !== 'string' || this.stopped) return;
    if (beat.node === this.nodeId) {
      if (beat.instance !== this.instance && !this.warnedTwin) {
        this.warnedTwin = true;
        this.log.error(
          { node_id: this.nodeId },
          `another engine of cluster ${this.settings.name} also uses node_id ${this.nodeId}: give each engine its own (cluster.node_id), or leave it unset`,
        );
      }
      return;
    }
    const known = this.peers.get(beat.node);
    if (beat.leave) {
      if (known) this.drop(known, 'it stopped');
      return;
    }
    // A newcomer learns about everyone at once: every engine answers its hello with a heartbeat.
    if (beat.hello) this.beat(false);
    const peer: Peer = known ?? { node: beat.node, seq: 0, snapshot: undefined, lastSeen: Date.now() };
    if (!known) this.peers.set(beat.node, peer);
    peer.lastSeen = Date.now();
    if (beat.seq !== peer.seq) void this.fetchSnapshot(peer, beat.seq);
  }

  private async fetchSnapshot(peer: Peer, seq: number): Promise<void> {
    let snapshot: NodeSnapshot | undefined;
    try {
      snapshot = decode<NodeSnapshot>(await this.transport.request(this.subjects.snapshot(peer.node), encode({}), this.settings.heartbeatMs * 2));
    } catch (err) {
      this.log.debug({ node_id: peer.node }, `could not fetch the snapshot of engine ${peer.node}: ${(err as Error).message}`);
      return;
    }
    if (!snapshot || this.peers.get(peer.node) !== peer || snapshot.seq < peer.seq) return;
    const joined = peer.snapshot === undefined;
    const previous = peer.snapshot;
    peer.seq = snapshot.seq;
    peer.snapshot = snapshot;
    this.announceChanges(previous, snapshot);
    this.deps.functions.setRemoteFunctions(peer.node, snapshot.functions, this.calls.handlerFor(peer.node));
    this.mirror.sync(peer.node, snapshot.triggers);
    this.remoteTypes.sync(peer.node, snapshot.trigger_types ?? []);
    if (joined) {
      this.log.info(
        { node_id: peer.node, functions: snapshot.functions.length, workers: snapshot.workers.length },
        `engine ${peer.node} joined the cluster (${snapshot.workers.length} workers, ${snapshot.functions.length} functions)`,
      );
    }
    if (snapshot.seq < seq) void this.fetchSnapshot(peer, seq);
  }

  /**
   * Tells this engine's registry listeners (`engine::workers-available`, `engine::triggers-available`,
   * consoles) what changed on another engine: its workers and triggers are part of the listings too.
   * (Its functions are registry entries here, which announce themselves.)
   */
  private announceChanges(before: NodeSnapshot | undefined, after: NodeSnapshot | undefined): void {
    const events = this.deps.events;
    const workersBefore = new Map((before?.workers ?? []).map((w) => [w.id, JSON.stringify(w)]));
    const workersAfter = new Map((after?.workers ?? []).map((w) => [w.id, JSON.stringify(w)]));
    for (const [id, text] of workersAfter) {
      const old = workersBefore.get(id);
      if (old === undefined) events.emit(() => ({ type: 'worker_connected', worker_id: id }));
      else if (old !== text) events.emit(() => ({ type: 'worker_metadata_updated', worker_id: id }));
    }
    for (const id of workersBefore.keys()) if (!workersAfter.has(id)) events.emit(() => ({ type: 'worker_disconnected', worker_id: id }));
    const triggersAfter = new Set((after?.triggers ?? []).map((t) => t.id));
    const triggersBefore = new Map((before?.triggers ?? []).map((t) => [t.id, JSON.stringify(t)]));
    for (const t of after?.triggers ?? []) {
      const old = triggersBefore.get(t.id);
      const type = old === undefined ? 'trigger_added' : old !== JSON.stringify(t) ? 'trigger_updated' : undefined;
      if (type) events.emit(() => ({ type, trigger_id: t.id, trigger_type: t.trigger_type, function_id: t.function_id }));
    }
    for (const t of before?.triggers ?? []) {
      if (!triggersAfter.has(t.id))
        events.emit(() => ({ type: 'trigger_removed', trigger_id: t.id, trigger_type: t.trigger_type, function_id: t.function_id }));
    }
  }

  private drop(peer: Peer, why: string): void {
    if (this.peers.get(peer.node) !== peer) return;
    this.peers.delete(peer.node);
    this.announceChanges(peer.snapshot, undefined);
    this.deps.functions.dropRemote(peer.node);
    this.mirror.drop(peer.node);
    this.remoteTypes.drop(peer.node);
    this.calls.stopped(peer.node, why);
    if (!this.stopped) this.log.warn({ node_id: peer.node }, `engine ${peer.node} left the cluster: ${why}`);
  }
}
