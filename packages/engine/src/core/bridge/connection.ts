import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { type EngineToWorker, FrameBatcher } from '@flint/protocol';
import type { WebSocket } from 'ws';
import type { Heartbeat } from '../api/listen.js';
import type { WorkerMetadata } from '../api/registry.js';
import type { ConnectionAccess } from './access/types.js';

/** A forwarded trigger registration awaiting the providing worker's answer (answers come in order). */
export interface TriggerAck {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export interface ConnectionLimits {
  maxOutboundBytes: number;
}

/** One worker's control connection and everything it owns. */
export class WorkerConnection {
  readonly functions = new Set<string>();
  readonly triggers = new Set<string>();
  readonly triggerTypes = new Set<string>();
  readonly services = new Map<string, { id: string; name: string; description?: string; parent_service_id?: string }>();
  /** How many invocations this worker is executing (the invoker keeps them). */
  executing = 0;
  /** Triggers forwarded to this worker (it provides their type) awaiting its registration result. */
  readonly triggerAcks = new Map<string, TriggerAck[]>();
  /** Sync calls this worker made that still wait for a result. */
  callsInFlight = 0;
  metadata: WorkerMetadata | undefined;
  /** Set by the bridge's keep-alive; any frame from the worker also counts as a sign of life. */
  heartbeat: Heartbeat = { alive: true };
  closed = false;
  /** A secret for this connection (sent in `workerregistered`): the worker's next connection presents it to succeed this one. */
  readonly reattachToken = randomBytes(24).toString('base64url');
  /** The connection that presented this one's reattach token; this one is on its way out. */
  successor: WorkerConnection | undefined;
  /** The access checks of this connection, when its listener has an `access` policy (access/session-access.ts). */
  access: ConnectionAccess | undefined;
  /** This connection's registrations waiting for their current holder to prove it is alive, by key (worker-registrations.ts). */
  readonly claims = new Map<string, object>();
  private probing: Promise<boolean> | undefined;
  private paused = false;
  /** Coalesces this connection's frames into few socket writes (see FrameBatcher for the policy). */
  private readonly batcher: FrameBatcher;
  /**
   * Back-pressure, judged once a batch has gone to the kernel: a worker that does not read what it is
   * sent stops being read from (and gets no new calls) until its socket drains.
   */
  private readonly judgeBackPressure = () => {
    if (!this.paused && !this.closed && this.ws.bufferedAmount > this.limits.maxOutboundBytes) {
      this.paused = true;
      this.ws.pause();
    }
  };

  constructor(
    readonly id: string,
    private readonly ws: WebSocket,
    socket: Socket,
    readonly ipAddress: string | null,
    readonly connectedAt: number,
    private readonly limits: ConnectionLimits,
  ) {
    socket.on('drain', () => this.onDrain());
    // The first frame of an idle turn goes ahead of its burst: the engine is the middle hop of every
    // call, where a held burst would keep the calls in flight together as a convoy (FrameBatcher).
    this.batcher = new FrameBatcher(socket, { afterFlush: this.judgeBackPressure, firstFrameAhead: true });
  }

  /**
   * True when the worker does not read its frames fast enough to take more work: its socket stayed
   * over the cap after a flush, or a single burst has queued more than four times the cap.
   */
  get overloaded(): boolean {
    return this.paused || this.ws.bufferedAmount > 4 * this.limits.maxOutboundBytes;
  }

  send(message: EngineToWorker): void {
    this.sendRaw(JSON.stringify(message));
  }

  sendRaw(text: string): void {
    if (this.closed) return;
    this.batcher.beforeWrite();
    this.ws.send(text);
    this.batcher.afterWrite();
  }

  private onDrain(): void {
    if (this.paused && !this.closed) {
      this.paused = false;
      this.ws.resume();
    }
  }

  /** Open and not succeeded by a newer connection of the same worker: what it registered is its own. */
  get live(): boolean {
    return !this.closed && this.successor === undefined;
  }

  /** Whether `other` took over from this connection (directly or through a chain of reconnections). */
  succeededBy(other: WorkerConnection): boolean {
    for (let next = this.successor; next; next = next.successor) if (next === other) return true;
    return false;
  }

  /**
   * Asks the peer to prove it is alive: resolves true when it answers a ping within `timeoutMs`, false
   * when the connection closes first; a peer that stays silent is dropped (`onSilent` is told first).
   * A connection the engine has stopped reading from (back-pressure) cannot answer and counts as alive.
   */
  probe(timeoutMs: number, onSilent: () => void): Promise<boolean> {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return Promise.resolve(false);
    if (this.paused) return Promise.resolve(true);
    this.probing ??= new Promise<boolean>((resolve) => {
      const settle = (alive: boolean) => {
        clearTimeout(timer);
        this.ws.off('pong', onPong);
        this.ws.off('close', onClose);
        this.probing = undefined;
        resolve(alive);
      };
      const onPong = () => settle(true);
      const onClose = () => settle(false);
      const timer = setTimeout(() => {
        onSilent();
        this.terminate();
      }, timeoutMs);
      this.ws.on('pong', onPong);
      this.ws.on('close', onClose);
      this.ws.ping();
    });
    return this.probing;
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(code, reason);
  }

  terminate(): void {
    this.ws.terminate();
  }
}
