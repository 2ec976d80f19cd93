import {
  type ErrorCode,
  FlintError,
  type RegisterFunctionMessage,
  type RegisterTriggerMessage,
  type RegisterTriggerTypeMessage,
  type UnregisterTriggerMessage,
  formatError,
} from '@flint/protocol';
import type { InternalHandler } from '../api/functions.js';
import type { FunctionRegistry } from '../functions.js';
import type { Logger } from '../logger.js';
import type { TriggerRegistry } from '../triggers.js';
import type { WorkerConnection } from './connection.js';
import { describeHolder, functionReservation, heldAgainst, triggerTypeReservation } from './ownership.js';
import { workerTypeProvider } from './worker-trigger-types.js';

export interface RegistrationOptions {
  triggerAckTimeoutMs: number;
  /** How long a connection holding a trigger id or type another connection claims has to answer a ping. */
  probeTimeoutMs: number;
}

/**
 * What one connection registers, under the ownership rules: function ids and trigger types of the
 * engine and its modules are not a worker's to take; a trigger (or a worker's trigger type) belongs to
 * the connection that registered it, and only that connection, or the same worker's next connection
 * (its successor), can replace or remove it.
 *
 * A claim on something another connection holds asks that connection to prove it is alive first (a
 * ping): a worker that reconnected faster than the engine noticed its old connection drop (and that
 * had no reattach token to present) gets its triggers back once the old connection is found dead.
 */
export class WorkerRegistrations {
  constructor(
    private readonly conn: WorkerConnection,
    private readonly deps: { functions: FunctionRegistry; triggers: TriggerRegistry },
    private readonly options: RegistrationOptions,
    private readonly log: Logger,
  ) {}

  registerFunction(msg: RegisterFunctionMessage): void {
    const owner = functionReservation(msg.id, this.deps.functions);
    if (owner !== undefined) return this.refuse('function_id_reserved', { function_id: msg.id, owner });
    this.deps.functions.registerWorkerFunction(this.conn, {
      id: msg.id,
      description: msg.description,
      request_format: msg.request_format,
      response_format: msg.response_format,
      metadata: msg.metadata,
    });
  }

  /**
   * A function whose implementation is not on the worker (`invocation`, an HTTP endpoint): the module that
   * runs such functions checks it and makes its handler; without one, or when it refuses, the worker is told.
   */
  registerDelegatedFunction(msg: RegisterFunctionMessage): void {
    const owner = functionReservation(msg.id, this.deps.functions);
    if (owner !== undefined) return this.refuse('function_id_reserved', { function_id: msg.id, owner });
    const delegate = this.deps.functions.delegate;
    if (!delegate) return this.refuse('function_not_invokable', { function_id: msg.id });
    const def = { id: msg.id, description: msg.description, request_format: msg.request_format, response_format: msg.response_format, metadata: msg.metadata };
    let handler: InternalHandler;
    try {
      handler = delegate.make({ ...def, worker_id: this.conn.id, invocation: msg.invocation });
    } catch (err) {
      const body = err instanceof FlintError ? err.toBody() : { code: 'invalid_payload', message: String(err) };
      this.log.warn({ worker_id: this.conn.id, function_id: msg.id, code: body.code }, `refused an HTTP-invoked function: ${body.message}`);
      this.conn.send({ type: 'error', error: { code: body.code, message: `function ${msg.id}: ${body.message}` } });
      return;
    }
    this.deps.functions.registerDelegatedFunction(this.conn, def, handler);
  }

  registerTrigger(msg: RegisterTriggerMessage): void {
    const { conn } = this;
    const key = `trigger:${msg.id}`;
    conn.claims.delete(key);
    const holder = this.deps.triggers.holder(msg.id);
    if (heldAgainst(holder, conn)) {
      const refuse = () => {
        const owner = holder ? describeHolder(holder) : 'another connection';
        const message = formatError('trigger_id_taken', { trigger_id: msg.id, owner });
        this.log.warn({ worker_id: conn.id, trigger_id: msg.id, trigger_type: msg.trigger_type }, `refused registertrigger: ${message}`);
        this.answerTrigger(msg, { error: { code: 'trigger_id_taken', message } });
      };
      if (holder?.conn) return this.contest(key, holder.conn, () => this.registerTrigger(msg), refuse);
      return refuse();
    }
    const record = { id: msg.id, type: msg.trigger_type, function_id: msg.function_id, config: msg.config ?? {}, metadata: msg.metadata, owner: conn.id };
    void this.deps.triggers.register(record, conn).then((outcome) => this.answerTrigger(msg, outcome));
  }

  unregisterTrigger(msg: UnregisterTriggerMessage): void {
    const { conn } = this;
    conn.claims.delete(`trigger:${msg.id}`);
    const holder = this.deps.triggers.holder(msg.id);
    if (!holder) return;
    if (holder.conn !== conn && !holder.conn?.succeededBy(conn)) {
      return this.refuse('trigger_not_owned', { trigger_id: msg.id, owner: describeHolder(holder) });
    }
    void this.deps.triggers.unregister(msg.id);
  }

  registerTriggerType(msg: RegisterTriggerTypeMessage): void {
    const { conn } = this;
    const { triggers } = this.deps;
    const key = `type:${msg.id}`;
    conn.claims.delete(key);
    const reserved = triggerTypeReservation(msg.id, triggers);
    if (reserved !== undefined) return this.refuse('trigger_type_reserved', { trigger_type: msg.id, owner: reserved });
    const holder = triggers.typeHolder(msg.id);
    if (holder?.conn && heldAgainst(holder, conn)) {
      const refuse = () => this.refuse('trigger_type_taken', { trigger_type: msg.id, owner: describeHolder(holder) });
      return this.contest(key, holder.conn, () => this.registerTriggerType(msg), refuse);
    }
    triggers.registerType(
      { id: msg.id, description: msg.description ?? '', trigger_request_format: msg.trigger_request_format, call_request_format: msg.call_request_format },
      workerTypeProvider(conn, this.options.triggerAckTimeoutMs),
      conn,
    );
  }

  unregisterTriggerType(id: string): void {
    this.conn.claims.delete(`type:${id}`);
    this.deps.triggers.unregisterType(id, this.conn);
  }

  /**
   * `incumbent` holds what this connection claims under `key`: ping it; if it answers, `refuse`; if it
   * turns out dead, `retry`. A later frame for the same key (a new registration, an unregister) drops the claim.
   */
  private contest(key: string, incumbent: WorkerConnection, retry: () => void, refuse: () => void): void {
    const { conn } = this;
    const claim = {};
    conn.claims.set(key, claim);
    const silent = () =>
      this.log.warn(
        { worker_id: incumbent.id, claimed_by: conn.id, key },
        `worker ${incumbent.id} did not answer a ping while connection ${conn.id} claimed its ${key}: dropping it`,
      );
    void incumbent.probe(this.options.probeTimeoutMs, silent).then((alive) => {
      if (conn.closed || conn.claims.get(key) !== claim) return;
      conn.claims.delete(key);
      if (alive) refuse();
      else retry();
    });
  }

  private answerTrigger(msg: RegisterTriggerMessage, outcome: { error?: { code: string; message: string }; parked?: boolean }): void {
    this.conn.send({ type: 'triggerregistrationresult', id: msg.id, trigger_type: msg.trigger_type, function_id: msg.function_id, ...outcome });
  }

  /** A registration frame refused: logged, and answered with an `error` frame (these frames have no answer of their own). */
  private refuse(code: ErrorCode, params: Record<string, string>): void {
    const message = formatError(code, params);
    this.log.warn({ worker_id: this.conn.id, code, ...params }, `refused a registration: ${message}`);
    this.conn.send({ type: 'error', error: { code, message } });
  }
}
