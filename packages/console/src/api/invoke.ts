import { performance } from 'node:perf_hooks';
import { EngineFunctions, FlintError } from '@flint/sdk';
import type { EmitResponse, InvokeResponse, TriggerInfo } from '../api-types.js';
import type { EngineLink } from '../engine-link.js';
import { ApiFailure, badRequest } from '../http/failure.js';
import type { Route } from '../http/router.js';
import { requiredString } from './fields.js';

/** Default and largest time-out of a call made from the console. */
const INVOKE_TIMEOUT_MS = 30_000;
const MAX_INVOKE_TIMEOUT_MS = 300_000;

/** Runs a call and reports it as a result: the function's value or its error, with the time taken. */
async function timed(link: EngineLink, functionId: string, input: unknown, timeoutMs = INVOKE_TIMEOUT_MS): Promise<InvokeResponse> {
  const started = performance.now();
  const duration = () => Math.round((performance.now() - started) * 100) / 100;
  try {
    const result = await link.call(functionId, input, timeoutMs);
    return { status: 'ok', result: result ?? null, duration_ms: duration() };
  } catch (err) {
    if (err instanceof FlintError) return { status: 'error', error: { code: err.code, message: err.message }, duration_ms: duration() };
    throw err;
  }
}

/** Trigger types whose source is a module: each has its own tool in the console instead of Emit. */
const MODULE_TOOLS: Record<string, string> = {
  http: 'send a request with the HTTP request builder',
  cron: 'use Trigger Now',
  state: 'change a key on the States page',
  log: 'write a log record',
  stream: 'write to the stream',
  'stream:join': 'join the stream from a client',
  'stream:leave': 'leave the stream from a client',
};

async function findTrigger(link: EngineLink, id: string): Promise<TriggerInfo> {
  const { triggers } = await link.call<{ triggers: TriggerInfo[] }>(EngineFunctions.LIST_TRIGGERS, { include_internal: true });
  const trigger = triggers.find((t) => t.id === id);
  if (!trigger) throw new ApiFailure(404, 'trigger_not_found', `there is no trigger ${id} (its worker may have disconnected)`);
  return trigger;
}

const topicOf = (t: TriggerInfo): string => {
  const topic = (t.config as { topic?: unknown } | null)?.topic;
  if (typeof topic !== 'string' || topic === '') throw badRequest(`trigger ${t.id} has no topic in its config`);
  return topic;
};

/** Calls from the console: invoke a function, run a cron trigger now, emit to a trigger. */
export const invokeRoutes: Route[] = [
  {
    method: 'POST',
    path: '/_console/invoke',
    handler: async ({ link, body }) => {
      const b = await body();
      const functionId = requiredString(b, 'function_id');
      const timeout = b.timeout_ms;
      if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_INVOKE_TIMEOUT_MS)) {
        throw badRequest(`timeout_ms must be an integer from 1 to ${MAX_INVOKE_TIMEOUT_MS}`);
      }
      return timed(link, functionId, b.input === undefined ? {} : b.input, timeout as number | undefined);
    },
  },
  {
    method: 'POST',
    path: '/_console/cron/trigger',
    handler: async ({ link, body }) => timed(link, 'flint::cron::trigger', { trigger_id: requiredString(await body(), 'trigger_id') }),
  },
  {
    method: 'POST',
    path: '/_console/emit',
    handler: async ({ link, body }): Promise<EmitResponse> => {
      const b = await body();
      const trigger = await findTrigger(link, requiredString(b, 'trigger_id'));
      const payload = b.payload === undefined ? {} : b.payload;
      const type = trigger.trigger_type;
      if (type === 'subscribe') {
        return { ...(await timed(link, 'publish', { topic: topicOf(trigger), data: payload })), delivered_via: 'publish' };
      }
      if (type === 'durable:subscriber') {
        return { ...(await timed(link, 'flint::durable::publish', { topic: topicOf(trigger), data: payload })), delivered_via: 'durable_publish' };
      }
      const tool = MODULE_TOOLS[type];
      if (tool !== undefined || type.startsWith('engine::')) {
        throw badRequest(`${type} triggers are fired by the engine, not emitted: ${tool ?? 'they fire on registry changes'}`);
      }
      if (trigger.status !== 'active') throw new ApiFailure(409, 'trigger_parked', `trigger ${trigger.id} is parked: no worker provides the type ${type} yet`);
      // A worker-defined event type: deliver the payload to the trigger's function, as its source would.
      return { ...(await timed(link, trigger.function_id, payload)), delivered_via: 'invoke' };
    },
  },
];
