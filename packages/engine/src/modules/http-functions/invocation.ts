import { validateHeaderName, validateHeaderValue } from 'node:http';
import { FlintError } from '@flint/protocol';
import type { HttpFunctionsConfig } from './config.js';

export const HTTP_METHODS = ['POST', 'PUT', 'PATCH', 'GET', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * How the request is signed or authorised. Each `*_key` names an environment variable of the engine
 * process holding the secret: the worker never sees it, and it is read again at every call.
 */
export type HttpAuth = { type: 'hmac'; secret_key: string } | { type: 'bearer'; token_key: string } | { type: 'api_key'; header: string; value_key: string };

/** A checked `invocation` of a `registerfunction` frame. */
export interface HttpInvocation {
  url: URL;
  /** The URL as it may appear in messages and logs: no query string (it may carry a key). */
  shownUrl: string;
  method: HttpMethod;
  /** The call's time-out: the invocation's `timeout_ms` (capped by `max_timeout_ms`) or `default_timeout_ms`. */
  timeoutMs: number;
  /** Extra request headers, names in lower case. */
  headers: Record<string, string>;
  auth: HttpAuth | undefined;
}

const KEYS = ['url', 'method', 'timeout_ms', 'headers', 'auth'];
/** Headers the engine sets itself (or that would break the framing of the request): a function may not set them. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);
const RESERVED_PREFIX = 'x-flint-';

const invalid = (message: string) => new FlintError('invalid_payload', `invocation: ${message}`);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The URL without its query string and fragment, for messages and logs. */
export function showUrl(url: URL): string {
  return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
}

/** Compiles the allow-list's globs (`*` is any run of characters, everything else literal) into one test. */
export function compileAllowlist(patterns: readonly string[]): ((href: string) => boolean) | undefined {
  if (patterns.length === 0) return undefined;
  const regexes = patterns.map((p) => new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`, 's'));
  return (href) => regexes.some((r) => r.test(href));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Checks a registration's `invocation` and the config's URL rules: a FlintError `invalid_payload`
 * naming the field for a bad shape or an unset environment variable, `url_not_allowed` for a URL the
 * allow-list or `require_https` refuses. Messages never hold a header value or a secret.
 */
export function parseInvocation(
  raw: unknown,
  config: HttpFunctionsConfig,
  allowed: ((href: string) => boolean) | undefined,
  env: NodeJS.ProcessEnv,
): HttpInvocation {
  if (!isObject(raw)) throw invalid('must be an object {url, method?, timeout_ms?, headers?, auth?}');
  for (const key of Object.keys(raw)) if (!KEYS.includes(key)) throw invalid(`unknown key "${key}" (known: ${KEYS.join(', ')})`);

  if (typeof raw.url !== 'string' || raw.url === '') throw invalid('url is required and must be a string');
  let url: URL;
  try {
    url = new URL(raw.url);
  } catch {
    throw invalid('url must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`url must be http:// or https://, not ${url.protocol}//`);
  if (url.username !== '' || url.password !== '') throw invalid('url must not hold credentials (user:password@): use headers or auth');
  url.hash = '';
  const shownUrl = showUrl(url);
  if (config.security.require_https && url.protocol !== 'https:') {
    throw new FlintError('url_not_allowed', `invocation.url ${shownUrl} is not https (security.require_https)`);
  }
  if (allowed && !allowed(url.href)) throw new FlintError('url_not_allowed', `invocation.url ${shownUrl} is not in security.url_allowlist`);

  let method: HttpMethod = 'POST';
  if (raw.method !== undefined && raw.method !== null) {
    const m = typeof raw.method === 'string' ? raw.method.toUpperCase() : undefined;
    if (!m || !(HTTP_METHODS as readonly string[]).includes(m)) throw invalid(`method must be one of ${HTTP_METHODS.join(', ')}`);
    method = m as HttpMethod;
  }

  let timeoutMs = config.default_timeout_ms;
  if (raw.timeout_ms !== undefined && raw.timeout_ms !== null) {
    if (typeof raw.timeout_ms !== 'number' || !Number.isInteger(raw.timeout_ms) || raw.timeout_ms <= 0) {
      throw invalid('timeout_ms must be a positive integer (milliseconds)');
    }
    timeoutMs = Math.min(raw.timeout_ms, config.max_timeout_ms);
  }

  const headers: Record<string, string> = {};
  if (raw.headers !== undefined && raw.headers !== null) {
    if (!isObject(raw.headers)) throw invalid('headers must be an object of header names to string values');
    for (const [name, value] of Object.entries(raw.headers)) {
      const field = `headers[${JSON.stringify(name)}]`;
      checkHeaderName(name, field);
      if (typeof value !== 'string') throw invalid(`${field} must be a string`);
      try {
        validateHeaderValue(name, value);
      } catch {
        throw invalid(`${field} holds characters a header value cannot (such as a line break)`);
      }
      headers[name.toLowerCase()] = value;
    }
  }

  const auth = raw.auth === undefined || raw.auth === null ? undefined : parseAuth(raw.auth, env);
  return { url, shownUrl, method, timeoutMs, headers, auth };
}

function checkHeaderName(name: string, field: string): void {
  try {
    validateHeaderName(name);
  } catch {
    throw invalid(`${field} is not a valid header name`);
  }
  const lower = name.toLowerCase();
  if (RESERVED_HEADERS.has(lower) || lower.startsWith(RESERVED_PREFIX)) throw invalid(`${field} is set by the engine and cannot be given`);
}

function parseAuth(raw: unknown, env: NodeJS.ProcessEnv): HttpAuth {
  const shapes = "{type: 'hmac', secret_key} | {type: 'bearer', token_key} | {type: 'api_key', header, value_key}";
  if (!isObject(raw)) throw invalid(`auth must be an object: ${shapes}`);
  const only = (keys: string[]) => {
    for (const key of Object.keys(raw))
      if (!keys.includes(key)) throw invalid(`unknown key "${key}" in auth of type ${String(raw.type)} (known: ${keys.join(', ')})`);
  };
  const envVar = (key: string): string => {
    const name = raw[key];
    if (typeof name !== 'string' || name === '') throw invalid(`auth.${key} is required: the name of an environment variable of the engine holding the secret`);
    if (!env[name]) throw invalid(`auth.${key}: environment variable ${name} is not set (or empty) in the engine's environment`);
    return name;
  };
  switch (raw.type) {
    case 'hmac':
      only(['type', 'secret_key']);
      return { type: 'hmac', secret_key: envVar('secret_key') };
    case 'bearer':
      only(['type', 'token_key']);
      return { type: 'bearer', token_key: envVar('token_key') };
    case 'api_key': {
      only(['type', 'header', 'value_key']);
      if (typeof raw.header !== 'string' || raw.header === '') throw invalid('auth.header is required: the name of the header carrying the key');
      checkHeaderName(raw.header, 'auth.header');
      return { type: 'api_key', header: raw.header.toLowerCase(), value_key: envVar('value_key') };
    }
    default:
      throw invalid(`auth.type must be hmac, bearer or api_key: ${shapes}`);
  }
}
