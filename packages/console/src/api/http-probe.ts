import { performance } from 'node:perf_hooks';
import type { HttpProbeResponse } from '../api-types.js';
import { ApiFailure, badRequest } from '../http/failure.js';
import type { Route } from '../http/router.js';
import type { ConsoleOptions } from '../options.js';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
/** Headers the builder may not set: the connection's own, and the host (the request goes to the engine only). */
const FORBIDDEN_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer']);
const PROBE_TIMEOUT_MS = 30_000;
/** Response bodies above this are cut (the builder is for looking, not for downloads). */
const MAX_SHOWN_BYTES = 1024 * 1024;

export function engineHttpBase(options: ConsoleOptions): URL {
  const host = options.engineHost.includes(':') ? `[${options.engineHost}]` : options.engineHost;
  return new URL(`http://${host}:${options.enginePort}`);
}

function pairs(value: unknown, field: string): [string, string][] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string')) {
    throw badRequest(`${field} must be a list of [name, value] string pairs`);
  }
  return value as [string, string][];
}

/** POST /_console/http: the Triggers page's request builder, sent from here to the engine's HTTP port. */
export const httpProbeRoutes: Route[] = [
  {
    method: 'POST',
    path: '/_console/http',
    handler: async ({ body, options }): Promise<HttpProbeResponse> => {
      const b = await body();
      const method = typeof b.method === 'string' ? b.method.toUpperCase() : '';
      if (!METHODS.has(method)) throw badRequest(`method must be one of ${[...METHODS].join(', ')}`);
      if (typeof b.path !== 'string' || !b.path.startsWith('/') || b.path.startsWith('//')) throw badRequest('path must start with a single /');
      const base = engineHttpBase(options);
      const url = new URL(`${base.origin}${b.path}`);
      if (url.origin !== base.origin) throw badRequest('path must stay on the engine');
      for (const [k, v] of pairs(b.query, 'query')) if (k !== '') url.searchParams.append(k, v);
      const headers = new Headers();
      for (const [k, v] of pairs(b.headers, 'headers')) {
        const name = k.trim().toLowerCase();
        if (name === '') continue;
        if (FORBIDDEN_HEADERS.has(name)) throw badRequest(`the header ${name} cannot be set`);
        try {
          headers.append(name, v);
        } catch {
          throw badRequest(`the header ${name} has an invalid name or value`);
        }
      }
      let requestBody: string | undefined;
      if (b.body !== undefined && method !== 'GET' && method !== 'HEAD') {
        requestBody = JSON.stringify(b.body);
        if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      }
      const started = performance.now();
      let res: Response;
      try {
        res = await fetch(url, { method, headers, body: requestBody, redirect: 'manual', signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        throw new ApiFailure(
          502,
          'engine_http_unreachable',
          `the engine's HTTP port at ${base.origin} did not answer: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
        );
      }
      const bytes = Buffer.from(await res.arrayBuffer());
      const duration_ms = Math.round((performance.now() - started) * 100) / 100;
      const text = bytes.subarray(0, MAX_SHOWN_BYTES).toString('utf8') + (bytes.length > MAX_SHOWN_BYTES ? `\n… (${bytes.length} bytes in all)` : '');
      let parsed: unknown = text;
      let isJson = false;
      if ((res.headers.get('content-type') ?? '').includes('json') && bytes.length <= MAX_SHOWN_BYTES) {
        try {
          parsed = JSON.parse(text);
          isJson = true;
        } catch {
          // shown as text
        }
      }
      return { status: res.status, headers: [...res.headers.entries()], body: parsed, body_is_json: isJson, duration_ms, url: url.toString() };
    },
  },
];
