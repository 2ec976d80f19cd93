import type { ServerResponse } from 'node:http';
import { FlintError, formatError, toErrorBody } from '@flint/protocol';
import type { Logger } from '../../core/logger.js';
import type { ModuleContext, TriggerFiring } from '../../core/module-api.js';
import { errorMessage } from '../../lib/errors.js';
import { runCondition } from '../../lib/triggers.js';
import type { HttpConfig } from './config.js';
import { type Headers, newErrorId, sendError, sendInternalError, sendResult } from './respond.js';
import type { Route } from './routes.js';

type StringMap = Record<string, string>;

export interface MiddlewareInput {
  phase: 'preHandler';
  request: { path_params: StringMap; query_params: StringMap; headers: StringMap; method: string };
  context: Record<string, never>;
}

/** What a guard needs to answer a request it stops. */
export interface GuardedRequest {
  res: ServerResponse;
  cors: Headers;
  firing: TriggerFiring;
}

/**
 * The steps before a route's handler that may answer the request themselves: middleware functions
 * (`continue` or `respond`) and the route's condition (a literal `false` answers 422).
 */
export class Guards {
  constructor(
    private readonly ctx: ModuleContext,
    private readonly config: HttpConfig,
    private readonly logger: Logger,
  ) {}

  /** Runs one middleware; false when it answered the request (or failed). */
  async middleware(functionId: string, input: MiddlewareInput, { res, cors, firing }: GuardedRequest): Promise<boolean> {
    const timeoutMs = this.config.middleware_timeout_ms;
    let result: unknown;
    try {
      result = await this.ctx.invoke(functionId, input, { timeoutMs, traceparent: firing.trace.traceparent, baggage: firing.trace.baggage });
    } catch (err) {
      firing.end({ error: toErrorBody(err) });
      if (err instanceof FlintError && err.code === 'invocation_timeout') {
        sendError(res, 'middleware_timeout', formatError('middleware_timeout', { function_id: functionId, timeout_ms: timeoutMs }), {}, cors);
      } else {
        const message = formatError('middleware_error', { function_id: functionId, reason: errorMessage(err) });
        sendInternalError(res, this.logger, 'middleware_error', message, { function_id: functionId }, cors);
      }
      return false;
    }
    const action = (result as { action?: unknown } | null | undefined)?.action;
    if (action === 'continue') return true;
    if (action === 'respond') {
      firing.end({ skipped: true });
      const response = (result as { response?: unknown }).response ?? {};
      const problem = sendResult(res, { body: null, ...(response as object) }, cors);
      if (problem) sendInternalError(res, this.logger, 'middleware_error', `middleware ${functionId}: ${problem}`, { function_id: functionId }, cors);
      return false;
    }
    this.logger.warn(
      { function_id: functionId },
      `middleware returned ${result === undefined || result === null ? 'no result' : `an unrecognised action ${JSON.stringify(action ?? null)}`}: continuing`,
    );
    return true;
  }

  /** Runs the route's condition (through the engine's one condition runner); false when the request was answered. */
  condition(route: Route, input: unknown, { res, cors, firing }: GuardedRequest): Promise<boolean> {
    const conditionId = route.conditionFunctionId as string;
    const timeoutMs = this.config.middleware_timeout_ms;
    const errorId = newErrorId();
    const trigger = { id: route.triggerId, type: 'http', function_id: route.functionId, condition_function_id: conditionId };
    return new Promise((resolve) => {
      const { traceparent, baggage } = firing.trace;
      const options = { timeoutMs, traceparent, baggage, logger: this.logger, logLevel: 'error' as const, logFields: { error_id: errorId } };
      runCondition(this.ctx, trigger, input, options, (outcome) => {
        if (outcome.pass) return resolve(true);
        const error = outcome.error;
        firing.end(error ? { error: toErrorBody(error) } : { skipped: true });
        if (!error) sendError(res, 'condition_failed', formatError('condition_failed'), { skipped: true }, cors);
        else if (error.code === 'invocation_timeout') {
          sendError(res, 'condition_timeout', formatError('condition_timeout', { function_id: conditionId, timeout_ms: timeoutMs }), {}, cors);
        } else {
          const message = formatError('condition_error', { function_id: conditionId, reason: error.message });
          sendError(res, 'condition_error', message, { error_id: errorId }, cors);
        }
        resolve(false);
      });
    });
  }
}
