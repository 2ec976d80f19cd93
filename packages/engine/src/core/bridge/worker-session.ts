import { FlintError, type InvokeFunctionMessage, type WorkerToEngine, decodeWorkerFrame, resultFrame } from '@flint/protocol';
import type { RawData, WebSocket } from 'ws';
import { toBuffer } from '../../lib/buffers.js';
import { errorMessage } from '../../lib/errors.js';
import { plural } from '../../lib/plural.js';
import type { RemoteChannels } from '../api/channels.js';
import type { ChannelManager } from '../channels.js';
import type { EnqueueRouter } from '../enqueue.js';
import type { FunctionRegistry } from '../functions.js';
import type { Invoker } from '../invoker.js';
import type { Logger } from '../logger.js';
import type { TelemetryBuffer } from '../telemetry-buffer.js';
import type { TriggerRegistry } from '../triggers.js';
import type { WorkerRegistry } from '../workers.js';
import type { WorkerConnection } from './connection.js';
import { type RegistrationOptions, WorkerRegistrations } from './worker-registrations.js';
import { answerForwardedTrigger, failForwardedTriggers } from './worker-trigger-types.js';

/** The engine parts the bridge and its worker sessions act on. */
export interface BridgeDeps {
  functions: FunctionRegistry;
  workers: WorkerRegistry;
  invoker: Invoker;
  triggers: TriggerRegistry;
  channels: ChannelManager;
  telemetry: TelemetryBuffer;
  enqueue: EnqueueRouter;
  logger: Logger;
  /** Set once the engine joined a cluster: channels held by the other engines. */
  cluster?: { channels?: RemoteChannels };
}

export interface SessionOptions extends RegistrationOptions {
  /** The `x-flint-reattach` header of the upgrade: the reattach token of the connection this one succeeds. */
  reattach?: string;
  /** How long this listener keeps a spare channel socket unbound (told to the worker in `workerregistered`). */
  spareIdleMs: number;
}

/** One worker's connection from `workerregistered` to its cleanup: decodes its frames and acts on them. */
export class WorkerSession {
  private readonly log: Logger;
  private readonly registrations: WorkerRegistrations;

  constructor(
    private readonly conn: WorkerConnection,
    private readonly ws: WebSocket,
    private readonly deps: BridgeDeps,
    private readonly options: SessionOptions,
  ) {
    this.log = deps.logger;
    this.registrations = new WorkerRegistrations(conn, deps, options, deps.logger);
  }

  open(): void {
    const { conn, ws } = this;
    conn.send({
      type: 'workerregistered',
      worker_id: conn.id,
      reattach_token: conn.reattachToken,
      spare_channels: true,
      spare_channel_idle_ms: this.options.spareIdleMs,
    });
    this.succeed();
    this.deps.workers.add(conn);
    this.log.debug({ worker_id: conn.id, ip: conn.ipAddress }, 'worker connected');
    ws.on('message', (data, isBinary) => this.onFrame(data, isBinary));
    ws.on('error', (err) => this.log.warn({ worker_id: conn.id }, `worker connection error: ${err.message}`));
    ws.once('close', (code, reason) => {
      this.onClose(code, reason.toString()).catch((err: unknown) =>
        this.log.error({ worker_id: conn.id }, `cleanup after disconnect failed: ${errorMessage(err)}`),
      );
    });
  }

  /**
   * A worker reconnecting presents its previous connection's reattach token: that connection (which the
   * engine may not have seen drop yet) is closed, and this one takes over its triggers and trigger types.
   */
  private succeed(): void {
    const token = this.options.reattach;
    const previous = token === undefined ? undefined : this.deps.workers.byToken(token);
    if (!previous) return;
    previous.successor = this.conn;
    this.deps.workers.retireToken(previous);
    this.log.debug({ worker_id: this.conn.id, previous_worker_id: previous.id }, 'worker reconnected: closing its previous connection');
    previous.terminate();
  }

  private onFrame(data: RawData, isBinary: boolean): void {
    const conn = this.conn;
    conn.heartbeat.alive = true;
    let text: string;
    if (isBinary) {
      const buf = toBuffer(data);
      if (this.deps.telemetry.accept(buf)) return;
      text = buf.toString('utf8');
    } else {
      text = typeof data === 'string' ? data : toBuffer(data).toString('utf8');
    }
    const decoded = decodeWorkerFrame(text);
    if (!decoded.ok) {
      this.log.warn({ worker_id: conn.id }, `bad frame: ${decoded.reason}`);
      const error = { code: decoded.code, message: decoded.reason };
      if (decoded.invocationId !== undefined) {
        conn.send({ type: 'invocationresult', invocation_id: decoded.invocationId, function_id: decoded.functionId ?? '', error });
      } else {
        conn.send({ type: 'error', error });
      }
      return;
    }
    try {
      this.handle(decoded.message);
    } catch (err) {
      // A frame must never take the engine down; answer what can be answered.
      const message = errorMessage(err);
      this.log.error({ worker_id: conn.id, type: decoded.message.type }, `failed to handle a frame: ${message}`);
      const m = decoded.message;
      if (m.type === 'invokefunction' && m.invocation_id) {
        conn.send({ type: 'invocationresult', invocation_id: m.invocation_id, function_id: m.function_id, error: { code: 'internal_error', message } });
      }
    }
  }

  private handle(msg: WorkerToEngine): void {
    const { conn } = this;
    const { functions } = this.deps;
    const access = conn.access;
    if (access && (msg.type === 'registerfunction' || msg.type === 'registertrigger' || msg.type === 'registertriggertype')) {
      return access.register(
        msg,
        (allowed) => this.apply(allowed),
        (refused, error) => {
          if (refused.type === 'registertrigger') {
            conn.send({ type: 'triggerregistrationresult', id: refused.id, trigger_type: refused.trigger_type, function_id: refused.function_id, error });
          } else {
            conn.send({ type: 'error', error });
          }
        },
      );
    }
    if (access && msg.type === 'unregisterfunction') return access.inOrder(() => functions.unregisterWorkerFunction(conn, access.functionId(msg.id)));
    if (access && (msg.type === 'unregistertrigger' || msg.type === 'unregistertriggertype')) return access.inOrder(() => this.apply(msg));
    return this.apply(msg);
  }

  /** Acts on a frame that passed the connection's access checks (if it has any). */
  private apply(msg: WorkerToEngine): void {
    const { conn, registrations } = this;
    const { functions, invoker } = this.deps;
    switch (msg.type) {
      case 'invokefunction':
        return this.onInvoke(msg);
      case 'invocationresult':
        return invoker.handleResult(conn, msg);
      case 'registerfunction':
        if (msg.invocation !== undefined) return registrations.registerDelegatedFunction(msg);
        return registrations.registerFunction(msg);
      case 'unregisterfunction':
        return functions.unregisterWorkerFunction(conn, msg.id);
      case 'registertrigger':
        return registrations.registerTrigger(msg);
      case 'unregistertrigger':
        return registrations.unregisterTrigger(msg);
      case 'registertriggertype':
        return registrations.registerTriggerType(msg);
      case 'unregistertriggertype':
        return registrations.unregisterTriggerType(msg.id);
      case 'triggerregistrationresult':
        return answerForwardedTrigger(conn, msg);
      case 'registerservice':
        conn.services.set(msg.id, { id: msg.id, name: msg.name ?? msg.id, description: msg.description, parent_service_id: msg.parent_service_id });
        return;
      case 'ping':
        return conn.send({ type: 'pong' });
      case 'pong':
        return;
    }
  }

  private onInvoke(msg: InvokeFunctionMessage): void {
    const access = this.conn.access;
    if (!access) return this.invoke(msg, msg.data === undefined ? null : msg.data);
    const id = msg.invocation_id ?? undefined;
    const action = msg.action?.type === 'enqueue' ? 'enqueue' : id === undefined || msg.action?.type === 'void' ? 'void' : 'sync';
    access.call(
      msg.function_id,
      msg.data === undefined ? null : msg.data,
      action,
      (payload) => this.invoke(msg, payload),
      (result, error) => {
        if (id === undefined || action === 'void') return;
        this.conn.send({ type: 'invocationresult', invocation_id: id, function_id: msg.function_id, result: result === null ? undefined : result, error });
      },
    );
  }

  /** Runs a call the worker made (its access checks, if any, passed). */
  private invoke(msg: InvokeFunctionMessage, data: unknown): void {
    const conn = this.conn;
    const id = msg.invocation_id ?? undefined;
    if (msg.action?.type === 'enqueue') return this.onEnqueue(msg, msg.action.queue, data);
    const opts = { traceparent: msg.traceparent, baggage: msg.baggage, timeoutMs: msg.timeout_ms, caller: conn };
    if (id === undefined || msg.action?.type === 'void') {
      this.deps.invoker.route(msg.function_id, data, { ...opts, void: true }, (error) => {
        if (error) this.log.debug({ worker_id: conn.id, function_id: msg.function_id }, `void call failed: ${error.code}: ${error.message}`);
      });
      return;
    }
    const functionId = msg.function_id;
    this.deps.invoker.route(functionId, data, opts, (error, result, trace) => {
      let text: string;
      try {
        // No answer and a null answer both leave `result` out, as the upstream engine does: iii-sdk callers
        // then get `undefined` (what their code tests for); @flint/sdk turns it into null.
        const answer = result === null ? undefined : conn.access ? conn.access.filterListing(functionId, result) : result;
        text = resultFrame(id, functionId, { result: answer, error, traceparent: trace?.traceparent, baggage: trace?.baggage });
      } catch (err) {
        // e.g. a result nested too deeply to serialise: the caller still gets its one answer.
        const message = `the result of ${functionId} cannot be serialised: ${errorMessage(err)}`;
        text = resultFrame(id, functionId, { error: { code: 'internal_error', message } });
      }
      conn.sendRaw(text);
    });
  }

  private onEnqueue(msg: InvokeFunctionMessage, queue: string, data: unknown): void {
    const id = msg.invocation_id ?? undefined;
    const reply = (result: unknown, error?: { code: string; message: string }) => {
      if (id !== undefined) this.conn.send({ type: 'invocationresult', invocation_id: id, function_id: msg.function_id, result, error });
    };
    this.deps.enqueue.enqueue(queue, msg.function_id, data, { traceparent: msg.traceparent, baggage: msg.baggage }).then(
      (receipt) => reply({ messageReceiptId: receipt }),
      (err: unknown) => reply(undefined, err instanceof FlintError ? err.toBody() : { code: 'enqueue_error', message: errorMessage(err) }),
    );
  }

  private async onClose(code: number, reason: string): Promise<void> {
    const { conn } = this;
    conn.closed = true;
    conn.claims.clear();
    this.deps.workers.retireToken(conn);
    const name = conn.metadata?.name;
    const fields = { worker_id: conn.id, worker_name: name, function_count: conn.functions.size, code, reason };
    if (conn.metadata) {
      // Announced workers were logged connecting (engine::workers::register); anonymous clients (the CLI) were not.
      const close = `close ${code}${reason ? ` "${reason}"` : ''}`;
      this.log.info(fields, `worker ${name ?? conn.id} disconnected (id ${conn.id}, ${plural(conn.functions.size, 'function')}, ${close})`);
    } else {
      this.log.debug(fields, 'worker disconnected');
    }
    const { functions, workers, invoker, triggers } = this.deps;
    for (const id of [...conn.functions]) functions.unregisterWorkerFunction(conn, id);
    invoker.stopExecuting(conn);
    // Its trigger types go first (synchronously), so that forwarded triggers still awaiting this
    // worker's answer are parked for the next provider rather than failed.
    const removal = triggers.removeOwnedBy(conn);
    failForwardedTriggers(conn);
    await removal;
    workers.remove(conn);
  }
}
