import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type ErrorCode, errorStatus } from '@flint/protocol';
import type { Logger } from '../../core/logger.js';

export type Headers = Record<string, string>;

export function newErrorId(): string {
  return randomBytes(6).toString('hex');
}

/** Sends `{error, code, ...extra}` with the code's status (from the error catalogue) unless a response was already started. */
export function sendError(res: ServerResponse, code: ErrorCode, message: string, extra: Record<string, unknown> = {}, headers: Headers = {}): void {
  writeError(res, errorStatus(code), code, message, extra, headers);
}

/**
 * A 500 whose `error_id` is also written to the engine log. `code` is a catalogue code or a handler's
 * own (`out_of_stock`); `body` adds fields to the answer (a nested failure's `cause`).
 */
export function sendInternalError(
  res: ServerResponse,
  logger: Logger,
  code: ErrorCode | (string & {}),
  message: string,
  context: Record<string, unknown>,
  headers: Headers = {},
  body: Record<string, unknown> = {},
): void {
  const errorId = newErrorId();
  logger.error({ ...context, error_id: errorId, code }, message);
  writeError(res, 500, code, message, { ...body, error_id: errorId }, headers);
}

function writeError(res: ServerResponse, status: number, code: string, message: string, extra: Record<string, unknown>, headers: Headers): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify({ error: message, code, ...extra });
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Normalises ApiResponse headers: an object of strings, or an array of "Name: value" lines. */
export function toHeaders(value: unknown): Headers | Array<[string, string]> {
  if (Array.isArray(value)) {
    const out: Array<[string, string]> = [];
    for (const line of value) {
      if (typeof line !== 'string') continue;
      const i = line.indexOf(':');
      const name = i > 0 ? line.slice(0, i).trim() : '';
      if (name) out.push([name.toLowerCase(), line.slice(i + 1).trim()]);
    }
    return out;
  }
  const out: Headers = {};
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (typeof v === 'string' || typeof v === 'number') out[k.toLowerCase()] = String(v);
  }
  return out;
}

function isApiResponse(value: unknown): value is { status_code?: unknown; headers?: unknown; body?: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && ('status_code' in value || 'body' in value || 'headers' in value);
}

/**
 * Writes a handler's result. An ApiResponse maps to status/headers/body (objects as JSON, strings raw
 * when the handler set a content type); any other value is answered 200 as JSON.
 */
export function sendResult(res: ServerResponse, result: unknown, baseHeaders: Headers): string | undefined {
  if (res.headersSent || res.destroyed) return undefined;
  if (!isApiResponse(result)) return writeBody(res, 200, [], baseHeaders, result, false);
  const status = result.status_code === undefined ? 200 : result.status_code;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    return `handler returned an invalid status_code ${JSON.stringify(status)} (an integer 100-599 is needed)`;
  }
  const headers = toHeaders(result.headers);
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers);
  return writeBody(res, status, pairs, baseHeaders, result.body, true);
}

function writeBody(
  res: ServerResponse,
  status: number,
  pairs: Array<[string, string]>,
  baseHeaders: Headers,
  body: unknown,
  fromApiResponse: boolean,
): undefined {
  let contentType: string | undefined;
  for (const [k, v] of pairs) if (k === 'content-type') contentType = v;
  let payload: string | undefined;
  if (body === undefined && fromApiResponse) payload = undefined;
  else if (contentType !== undefined && typeof body === 'string') payload = body;
  else if (contentType !== undefined && body === null) payload = undefined;
  else payload = JSON.stringify(body ?? null);
  const length = String(payload === undefined ? 0 : Buffer.byteLength(payload));
  if (pairs.length === 0) {
    // The common case: one object literal, no header list to build.
    const headers: Headers =
      payload === undefined ? { ...baseHeaders, 'content-length': length } : { ...baseHeaders, 'content-type': 'application/json', 'content-length': length };
    res.writeHead(status, headers);
  } else {
    // A flat [name, value, ...] list keeps repeated headers (e.g. several set-cookie lines).
    const out: string[] = [];
    for (const k in baseHeaders) out.push(k, baseHeaders[k] as string);
    for (const [k, v] of pairs) out.push(k, v);
    if (payload !== undefined && contentType === undefined) out.push('content-type', 'application/json');
    out.push('content-length', length);
    res.writeHead(status, out);
  }
  res.end(payload);
  return undefined;
}
