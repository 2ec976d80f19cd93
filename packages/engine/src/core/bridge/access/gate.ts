import type { IncomingMessage } from 'node:http';
import { FlintError } from '@flint/protocol';
import { type AuthOutcome, authInput, authorize } from '../../../lib/upgrade-auth.js';
import type { Invoker } from '../../invoker.js';
import type { Logger } from '../../logger.js';
import type { WorkerConnection } from '../connection.js';
import { type AccessConfig, Exposure, WorkerPolicy } from './policy.js';

/** What a call's middleware decided. */
export type MiddlewareVerdict = { kind: 'continue'; payload: unknown } | { kind: 'respond'; result: unknown } | { kind: 'deny'; reason: string };

/** What a registration hook decided: go on with `fields` merged over the registration, or refuse. */
export type HookVerdict = { kind: 'allow'; fields: Record<string, unknown> } | { kind: 'deny'; reason: string };

/**
 * A bridge listener's access checks that call functions: the auth function at the upgrade, the call
 * middleware, and the registration hooks. Every one fails closed: a function that throws, is missing or
 * does not answer in time refuses what it was asked about.
 */
export class AccessGate {
  readonly exposure: Exposure | undefined;

  constructor(
    readonly config: AccessConfig,
    private readonly invoker: Invoker,
    private readonly log: Logger,
  ) {
    this.exposure = config.exposeFunctions ? new Exposure(config.exposeFunctions) : undefined;
  }

  /** Whether the listener has anything that needs a policy per connection. */
  get active(): boolean {
    const c = this.config;
    return Boolean(
      c.authFunctionId || c.middlewareFunctionId || c.onFunctionRegistration || c.onTriggerRegistration || c.onTriggerTypeRegistration || this.exposure,
    );
  }

  /** Runs the auth function (when there is one) on an upgrade: the connection's policy, or the refusal. */
  async admit(req: IncomingMessage, url: URL): Promise<{ policy: WorkerPolicy } | Extract<AuthOutcome, { allowed: false }>> {
    if (!this.config.authFunctionId) return { policy: new WorkerPolicy(undefined, this.exposure) };
    const invoke = (id: string, data: unknown, options: { timeoutMs?: number }) => this.invoker.call(id, data, options);
    const outcome = await authorize(invoke, this.log, this.config.authFunctionId, authInput(req, url), this.config.authTimeoutMs);
    if (!outcome.allowed) return outcome;
    return { policy: new WorkerPolicy(outcome.answer ?? {}, this.exposure) };
  }

  /**
   * Asks the middleware about a call the worker makes: `{action: 'continue', payload?}` (or no answer, or
   * `true`) lets it go on, with `payload` replacing the call's when given; `{action: 'respond', result}`
   * answers the call with `result` instead; `{action: 'deny', reason?}` (or `false`) refuses it.
   */
  async middleware(conn: WorkerConnection, policy: WorkerPolicy, functionId: string, payload: unknown, action: string): Promise<MiddlewareVerdict> {
    const id = this.config.middlewareFunctionId;
    if (!id) return { kind: 'continue', payload };
    let answer: unknown;
    try {
      answer = await this.invoker.call(
        id,
        { function_id: functionId, payload, action, context: policy.context, worker_id: conn.id },
        { timeoutMs: this.config.middlewareTimeoutMs },
      );
    } catch (err) {
      return { kind: 'deny', reason: this.failed('middleware', id, err, { worker_id: conn.id, function_id: functionId }) };
    }
    if (answer === false) return { kind: 'deny', reason: `call of '${functionId}' refused by the middleware` };
    if (typeof answer !== 'object' || answer === null) return { kind: 'continue', payload };
    const a = answer as { action?: unknown; payload?: unknown; result?: unknown; reason?: unknown };
    if (a.action === 'deny')
      return { kind: 'deny', reason: typeof a.reason === 'string' && a.reason ? a.reason : `call of '${functionId}' refused by the middleware` };
    if (a.action === 'respond') return { kind: 'respond', result: a.result };
    return { kind: 'continue', payload: 'payload' in a ? a.payload : payload };
  }

  /**
   * Asks a registration hook: `false` or `{allow: false, reason?}` refuses the registration; an object
   * rewrites it (its fields replace the registration's: `function_id`, `description`, `metadata`, `config`, …);
   * anything else lets it through unchanged.
   */
  async hook(hookId: string | undefined, what: string, input: Record<string, unknown>, conn: WorkerConnection, policy: WorkerPolicy): Promise<HookVerdict> {
    if (!hookId) return { kind: 'allow', fields: {} };
    let answer: unknown;
    try {
      answer = await this.invoker.call(hookId, { ...input, context: policy.context, worker_id: conn.id }, { timeoutMs: this.config.middlewareTimeoutMs });
    } catch (err) {
      return { kind: 'deny', reason: this.failed('registration hook', hookId, err, { worker_id: conn.id, what }) };
    }
    if (answer === false) return { kind: 'deny', reason: `${what} refused by ${hookId}` };
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return { kind: 'allow', fields: {} };
    const { allow, reason, ...fields } = answer as Record<string, unknown>;
    if (allow === false) return { kind: 'deny', reason: typeof reason === 'string' && reason ? reason : `${what} refused by ${hookId}` };
    return { kind: 'allow', fields };
  }

  private failed(role: string, functionId: string, err: unknown, fields: Record<string, unknown>): string {
    const reason = err instanceof FlintError ? `${err.code}: ${err.message}` : String(err);
    this.log.warn({ ...fields, function_id: functionId }, `access ${role} ${functionId} failed, so it refuses: ${reason}`);
    return `${role} ${functionId} failed: ${reason}`;
  }
}
