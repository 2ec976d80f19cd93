import type { IncomingMessage, ServerResponse } from 'node:http';
import { COMPRESS_MIN_BYTES, acceptsGzip, gzipBody } from './compress.js';
import { ApiFailure } from './failure.js';

/** The largest request body the API reads (a state value, a payload to invoke or publish). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Reads a JSON request body (empty → `{}`); 413 above MAX_BODY_BYTES, 400 for invalid JSON or a non-object. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    // Past the limit the rest is read and dropped, never buffered: stopping to read would reset the
    // connection under a client still sending, which would then see a network error instead of the 413.
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  if (size > MAX_BODY_BYTES) throw new ApiFailure(413, 'payload_too_large', `the request body is larger than ${MAX_BODY_BYTES} bytes`);
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

/** Sends a JSON answer, gzipped when it is large and `req` accepts gzip. */
export async function sendJson(res: ServerResponse, status: number, body: unknown, req?: IncomingMessage): Promise<void> {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', vary: 'accept-encoding' };
  if (text.length >= COMPRESS_MIN_BYTES && acceptsGzip(req)) {
    const zipped = await gzipBody(text);
    res.writeHead(status, { ...headers, 'content-encoding': 'gzip', 'content-length': zipped.length });
    res.end(zipped);
    return;
  }
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(text) });
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
