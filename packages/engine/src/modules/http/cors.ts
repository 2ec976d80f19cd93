import type { IncomingMessage } from 'node:http';
import type { CorsConfig } from './config.js';
import type { Headers } from './respond.js';

/** CORS headers for a normal response, or {} when the origin is not allowed / CORS is off. */
const NONE: Headers = Object.freeze({}) as Headers;

export function corsHeaders(cors: CorsConfig | undefined, req: IncomingMessage): Headers {
  const origin = req.headers.origin;
  if (!cors || origin === undefined) return NONE;
  const any = cors.origins.includes('*');
  if (!any && !cors.origins.includes(origin)) return NONE;
  const headers: Headers = { 'access-control-allow-origin': any && !cors.credentials ? '*' : origin };
  if (!any || cors.credentials) headers.vary = 'Origin';
  if (cors.credentials) headers['access-control-allow-credentials'] = 'true';
  return headers;
}

/** Headers answering a preflight for a path served by `methods`. */
export function preflightHeaders(cors: CorsConfig, req: IncomingMessage, methods: string[]): Headers | undefined {
  const base = corsHeaders(cors, req);
  if (!base['access-control-allow-origin']) return undefined;
  const allowed = methods.filter((m) => cors.methods.includes(m as CorsConfig['methods'][number]));
  const requested = req.headers['access-control-request-headers'];
  const allowHeaders = cors.headers.includes('*') ? (requested ?? '*') : cors.headers.join(', ');
  return {
    ...base,
    'access-control-allow-methods': allowed.join(', '),
    'access-control-allow-headers': allowHeaders,
    'access-control-max-age': String(cors.max_age_seconds),
  };
}
