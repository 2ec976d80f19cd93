import type { ErrorBody, FunctionInfo, TriggerInfo, WorkerInfo, WorkerToEngine } from '@flint/protocol';
import type { FunctionRegistry } from '../../functions.js';
import type { Logger } from '../../logger.js';
import type { WorkerConnection } from '../connection.js';
import type { AccessGate } from './gate.js';
import type { WorkerPolicy } from './policy.js';
import type { ConnectionAccess, Registration } from './types.js';

/** A refused call or registration: upstream's code, which iii-sdk workers check. */
function forbidden(reason: string): ErrorBody {
  return { code: 'FORBIDDEN', message: reason };
}

/**
 * The access checks of one connection of a listener with an `access` policy: calls (the policy's lists,
 * the listener's exposure, the middleware), registrations (the policy, the registration prefix, the hooks,
 * applied in the order the frames came), and the listings it may see.
 */
export class SessionAccess implements ConnectionAccess {
  /** Registrations wait for the ones before them (hooks are calls): a trigger never overtakes its function. */
  private registrations: Promise<void> = Promise.resolve();
  /** Functions a registration hook renamed: engine id → the id the worker knows, and back. */
  private readonly workerIds = new Map<string, string>();
  private readonly engineIds = new Map<string, string>();

  constructor(
    private readonly conn: WorkerConnection,
    readonly policy: WorkerPolicy,
    private readonly gate: AccessGate,
    private readonly functions: FunctionRegistry,
    private readonly log: Logger,
  ) {}

  /**
   * Checks a call this worker makes. `proceed` runs it (with the middleware's payload); `answer` answers it
   * instead: with a FORBIDDEN error, or with the middleware's own result.
   */
  call(
    functionId: string,
    payload: unknown,
    action: 'sync' | 'void' | 'enqueue',
    proceed: (payload: unknown) => void,
    answer: (result: unknown, error?: ErrorBody) => void,
  ): void {
    const refusal = this.policy.refusesCall(functionId, this.functions.functions.get(functionId)?.metadata);
    if (refusal !== undefined) return this.deny(functionId, refusal, answer);
    if (!this.gate.config.middlewareFunctionId || functionId.startsWith('engine::')) return proceed(payload);
    void this.gate.middleware(this.conn, this.policy, functionId, payload, action).then((verdict) => {
      if (this.conn.closed) return;
      if (verdict.kind === 'deny') return this.deny(functionId, verdict.reason, answer);
      if (verdict.kind === 'respond') return answer(verdict.result);
      proceed(verdict.payload);
    });
  }

  /** Applies a registration frame once the policy and the hooks allowed it (rewritten as they say), in order. */
  register(msg: Registration, apply: (msg: WorkerToEngine) => void, refuse: (msg: Registration, error: ErrorBody) => void): void {
    this.enqueue(async () => {
      const verdict = await this.check(msg);
      if (this.conn.closed) return;
      if (typeof verdict === 'string') {
        this.log.warn({ worker_id: this.conn.id, type: msg.type, id: msg.id }, `refused a registration: ${verdict}`);
        return refuse(msg, forbidden(verdict));
      }
      apply(verdict);
    });
  }

  get context(): unknown {
    return this.policy.context;
  }

  /** The id this worker's function has in the engine (with the registration prefix, or as a hook renamed it). */
  functionId(id: string): string {
    return this.engineIds.get(id) ?? this.policy.prefixed(id);
  }

  unprefixed(id: string): string {
    return this.workerIds.get(id) ?? this.policy.unprefixed(id);
  }

  /** Runs `apply` after the registrations before it (an unregister never overtakes its register). */
  inOrder(apply: () => void): void {
    this.enqueue(async () => {
      if (!this.conn.closed) apply();
    });
  }

  /** Runs `step` after the registration steps before it; a step that throws is logged and does not stop the next. */
  private enqueue(step: () => Promise<void>): void {
    this.registrations = this.registrations.then(step).catch((err: unknown) => {
      this.log.error({ worker_id: this.conn.id }, `a registration could not be applied: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  /** Drops from a listing's answer what this worker may not call (functions, and triggers of such functions). */
  filterListing(functionId: string, result: unknown): unknown {
    if (typeof result !== 'object' || result === null) return result;
    const visible = (id: string, metadata?: Record<string, unknown> | null) =>
      this.policy.refusesCall(id, metadata ?? this.functions.functions.get(id)?.metadata) === undefined;
    if (functionId === 'engine::functions::list' && Array.isArray((result as { functions?: unknown }).functions)) {
      const list = (result as { functions: FunctionInfo[] }).functions;
      return { ...result, functions: list.filter((f) => visible(f.function_id, f.metadata as Record<string, unknown> | null)) };
    }
    if (functionId === 'engine::triggers::list' && Array.isArray((result as { triggers?: unknown }).triggers)) {
      const list = (result as { triggers: TriggerInfo[] }).triggers;
      return { ...result, triggers: list.filter((t) => visible(t.function_id)) };
    }
    if (functionId === 'engine::workers::list' && Array.isArray((result as { workers?: unknown }).workers)) {
      // Itself, and the workers that provide something it may call (with only those functions listed).
      const list = (result as { workers: WorkerInfo[] }).workers;
      const shown: WorkerInfo[] = [];
      for (const w of list) {
        if (w.id === this.conn.id) {
          shown.push(w);
          continue;
        }
        const functions = w.functions.filter((id) => visible(id));
        if (functions.length > 0) shown.push({ ...w, functions, function_count: functions.length });
      }
      return { ...result, workers: shown };
    }
    return result;
  }

  filterDelivery(triggerType: string, data: unknown): unknown {
    if (triggerType !== 'engine::functions-available') return data;
    return this.filterListing('engine::functions::list', data);
  }

  private deny(functionId: string, reason: string, answer: (result: unknown, error?: ErrorBody) => void): void {
    this.log.warn({ worker_id: this.conn.id, function_id: functionId }, `refused a call: ${reason}`);
    answer(undefined, forbidden(reason));
  }

  /** The registration as the policy and the hook leave it, or why it is refused. */
  private async check(msg: Registration): Promise<Registration | string> {
    const { policy, gate, conn } = this;
    const hooks = gate.config;
    if (msg.type === 'registerfunction') {
      const id = policy.prefixed(msg.id);
      const refusal = policy.refusesFunctionRegistration(id);
      if (refusal !== undefined) return refusal;
      const input = {
        function_id: id,
        description: msg.description,
        request_format: msg.request_format,
        response_format: msg.response_format,
        metadata: msg.metadata,
      };
      const verdict = await gate.hook(hooks.onFunctionRegistration, `registering function '${id}'`, input, conn, policy);
      if (verdict.kind === 'deny') return verdict.reason;
      const f = verdict.fields;
      const engineId = typeof f.function_id === 'string' && f.function_id !== '' ? f.function_id : id;
      if (engineId !== id) {
        // Calls reach the worker under the name it registered; its unregister and triggers follow the rename.
        this.workerIds.set(engineId, msg.id);
        this.engineIds.set(msg.id, engineId);
      }
      return {
        ...msg,
        id: engineId,
        description: 'description' in f ? (f.description as string | undefined) : msg.description,
        request_format: 'request_format' in f ? f.request_format : msg.request_format,
        response_format: 'response_format' in f ? f.response_format : msg.response_format,
        metadata: 'metadata' in f ? (f.metadata as Record<string, unknown> | undefined) : msg.metadata,
      };
    }
    if (msg.type === 'registertrigger') {
      const refusal = policy.refusesTrigger(msg.trigger_type);
      if (refusal !== undefined) return refusal;
      const functionId = this.functionId(msg.function_id);
      // A trigger calls its function for whoever fires it (an HTTP client, say): the worker may point one
      // only at its own functions or at functions it may call itself.
      if (!conn.functions.has(functionId)) {
        const target = policy.refusesCall(functionId, this.functions.functions.get(functionId)?.metadata);
        if (target !== undefined) return `a ${msg.trigger_type} trigger for '${functionId}' not allowed: ${target}`;
      }
      const input = { trigger_id: msg.id, trigger_type: msg.trigger_type, function_id: functionId, config: msg.config, metadata: msg.metadata };
      const verdict = await gate.hook(hooks.onTriggerRegistration, `registering a ${msg.trigger_type} trigger for '${functionId}'`, input, conn, policy);
      if (verdict.kind === 'deny') return verdict.reason;
      const f = verdict.fields;
      return {
        ...msg,
        function_id: typeof f.function_id === 'string' && f.function_id !== '' ? f.function_id : functionId,
        config: 'config' in f ? f.config : msg.config,
        metadata: 'metadata' in f ? (f.metadata as Record<string, unknown> | undefined) : msg.metadata,
      };
    }
    const refusal = policy.refusesTriggerType(msg.id);
    if (refusal !== undefined) return refusal;
    const input = { trigger_type: msg.id, description: msg.description };
    const verdict = await gate.hook(hooks.onTriggerTypeRegistration, `providing trigger type '${msg.id}'`, input, conn, policy);
    if (verdict.kind === 'deny') return verdict.reason;
    return 'description' in verdict.fields ? { ...msg, description: verdict.fields.description as string | undefined } : msg;
  }
}
