import type { IncomingMessage } from 'node:http';
import { type ErrorCode, FlintError, formatError } from '@flint/protocol';
import type { ModuleContext } from '../../core/module-api.js';

/** What the auth function gets for an upgrade. */
export interface AuthInput {
  headers: Record<string, string>;
  /** The request path, without the query. */
  path: string;
  /** Query parameters, decoded, each with all its values. */
  query_params: Record<string, string[]>;
  /** `ip:port` of the client. */
  addr: string;
}

export type AuthOutcome = { allowed: true; context: unknown } | { allowed: false; code: ErrorCode; message: string };

export function authInput(req: IncomingMessage, url: URL): AuthInput {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const query_params: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    const values = query_params[name];
    if (values) values.push(value);
    else query_params[name] = [value];
  }
  const ip = req.socket.remoteAddress ?? '';
  return { headers, path: url.pathname, query_params, addr: `${ip.includes(':') ? `[${ip}]` : ip}:${req.socket.remotePort ?? 0}` };
}

/**
 * Asks the listener's auth function about an upgrade. `{allow: false, status?, reason?}` refuses it (401, or
 * 403 when status is 403); any other answer lets it in, with the answer's `context` (null when it has none).
 * A function that fails or does not answer in time refuses it too (503 auth_unavailable): a broken check
 * never lets everyone in.
 */
export async function authorize(ctx: ModuleContext, functionId: string, input: AuthInput, timeoutMs: number): Promise<AuthOutcome> {
  let result: unknown;
  try {
    result = await ctx.invoke(functionId, input, { timeoutMs });
  } catch (err) {
    const reason = err instanceof FlintError ? `${err.code}: ${err.message}` : String(err);
    ctx.logger.warn(
      { function_id: functionId, addr: input.addr, path: input.path },
      `stream auth function ${functionId} failed, connection refused: ${reason}`,
    );
    return { allowed: false, code: 'auth_unavailable', message: formatError('auth_unavailable', { function_id: functionId, reason }) };
  }
  if (typeof result !== 'object' || result === null) return { allowed: true, context: null };
  const answer = result as { allow?: unknown; status?: unknown; reason?: unknown; context?: unknown };
  if (answer.allow === false) {
    const reason = typeof answer.reason === 'string' && answer.reason !== '' ? answer.reason : 'the connection was refused by the auth function';
    return { allowed: false, code: answer.status === 403 ? 'stream_forbidden' : 'stream_unauthorized', message: reason };
  }
  return { allowed: true, context: answer.context ?? null };
}
