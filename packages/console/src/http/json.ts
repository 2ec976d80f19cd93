import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiFailure } from './failure.js';

/** The largest request body the API reads (a state value, a payload to invoke or publish). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Reads a JSON request body (empty → `{}`); 413 above MAX_BODY_BYTES, 400 for invalid JSON or a non-object. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ApiFailure(413, 'payload_too_large', `the request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ApiFailure(400, 'invalid_json', `the request body is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ApiFailure(400, 'invalid_request', 'the request body must be a JSON object');
  return value as Record<string, unknown>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendFailure(res: ServerResponse, failure: ApiFailure): void {
  const body: Record<string, unknown> = { error: failure.message, code: failure.code };
  if (failure.engineCode !== undefined) body.engine_code = failure.engineCode;
  const headers: Record<string, string> = {};
  if (failure.status === 401) headers['www-authenticate'] = 'Bearer realm="flint-console"';
  res.writeHead(failure.status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
