import { createHmac, randomUUID } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import http, { type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { FlintError, formatError } from '@flint/protocol';
import type { TraceContext } from '../../core/module-api.js';
import { errorMessage } from '../../lib/errors.js';
import { isBlockedAddress } from './address-guard.js';
import type { HttpFunctionsSecurity } from './config.js';
import type { HttpInvocation } from './invocation.js';

/** First characters of an error answer's body that go into the `http_error` message. */
const ERROR_BODY_CHARS = 200;

interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Makes the HTTP requests of HTTP functions: resolves the host at call time, refuses blocked addresses,
 * connects to the very address it checked (DNS cannot be asked again between the check and the
 * connection), signs the request, bounds the time and the response size, and maps the answer.
 */
export class HttpCaller {
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  private readonly inFlight = new Set<ClientRequest>();
  private closed = false;

  constructor(
    private readonly security: HttpFunctionsSecurity,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Calls `fn`'s endpoint with `data`; resolves with the mapped result or rejects with a FlintError. */
  call(fn: HttpInvocation, functionId: string, data: unknown, trace: TraceContext): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      let req: ClientRequest | undefined;
      let settled = false;
      const settle = (error: FlintError | undefined, result?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (req) {
          this.inFlight.delete(req);
          // A request that failed (time-out, too large) must not leave its socket in the keep-alive pool.
          if (error) req.destroy();
        }
        if (error) reject(error);
        else resolve(result);
      };
      const timer = setTimeout(() => {
        const message = `${formatError('invocation_timeout', { function_id: functionId, timeout_ms: fn.timeoutMs })}: no complete answer from ${fn.shownUrl}`;
        settle(new FlintError('invocation_timeout', message));
      }, fn.timeoutMs);

      if (this.closed) return settle(FlintError.of('engine_shutting_down'));
      let body: string;
      try {
        body = fn.method === 'GET' || fn.method === 'DELETE' ? '' : (JSON.stringify(data ?? null) as string);
      } catch (err) {
        return settle(new FlintError('invalid_payload', `payload cannot be serialised: ${errorMessage(err)}`));
      }
      let headers: OutgoingHttpHeaders;
      try {
        headers = this.headers(fn, functionId, body, trace);
      } catch (err) {
        return settle(err instanceof FlintError ? err : new FlintError('invocation_failed', errorMessage(err)));
      }
      this.resolve(fn).then(
        (addresses) => {
          if (settled) return;
          if (this.closed) return settle(FlintError.of('engine_shutting_down'));
          req = this.send(fn, addresses, headers, body, settle);
          this.inFlight.add(req);
        },
        (err: unknown) => settle(err instanceof FlintError ? err : new FlintError('invocation_failed', errorMessage(err))),
      );
    });
  }

  /** Aborts the requests in flight and closes the kept-alive connections. */
  close(): void {
    this.closed = true;
    for (const req of this.inFlight) req.destroy();
    this.inFlight.clear();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** The host's addresses now; with `block_private_addresses`, refused when any of them is blocked. */
  private async resolve(fn: HttpInvocation): Promise<ResolvedAddress[]> {
    const host = hostOf(fn.url);
    let addresses: ResolvedAddress[];
    try {
      addresses = await dnsLookup(host, { all: true, verbatim: true });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new FlintError('invocation_failed', `cannot resolve ${host} (${fn.shownUrl}): ${typeof code === 'string' ? code : errorMessage(err)}`);
    }
    if (addresses.length === 0) throw new FlintError('invocation_failed', `cannot resolve ${host} (${fn.shownUrl}): no address`);
    if (this.security.block_private_addresses) {
      const bad = addresses.find((a) => isBlockedAddress(a.address));
      if (bad) {
        const what = bad.address === host ? bad.address : `${host} resolves to ${bad.address}, which`;
        throw new FlintError(
          'url_not_allowed',
          `${fn.shownUrl}: ${what} is a loopback, private, link-local or reserved address (security.block_private_addresses)`,
        );
      }
    }
    return addresses;
  }

  private headers(fn: HttpInvocation, functionId: string, body: string, trace: TraceContext): OutgoingHttpHeaders {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers: OutgoingHttpHeaders = {};
    if (body !== '') headers['content-type'] = 'application/json';
    headers['x-flint-function-id'] = functionId;
    headers['x-flint-invocation-id'] = randomUUID();
    headers['x-flint-timestamp'] = timestamp;
    if (trace.traceparent) headers.traceparent = trace.traceparent;
    if (trace.baggage) headers.baggage = trace.baggage;
    Object.assign(headers, fn.headers);
    if (body !== '') headers['content-length'] = Buffer.byteLength(body);
    const auth = fn.auth;
    if (auth?.type === 'hmac') {
      const signature = createHmac('sha256', this.secret(auth.secret_key)).update(`${timestamp}.${body}`).digest('hex');
      headers['x-flint-signature'] = `sha256=${signature}`;
    } else if (auth?.type === 'bearer') {
      headers.authorization = `Bearer ${this.secret(auth.token_key)}`;
    } else if (auth?.type === 'api_key') {
      headers[auth.header] = this.secret(auth.value_key);
    }
    return headers;
  }

  /** A secret from the engine's environment, read at each call (so it can be rotated); never logged. */
  private secret(name: string): string {
    const value = this.env[name];
    if (!value) throw new FlintError('invocation_failed', `environment variable ${name} (named by the function's auth) is not set in the engine's environment`);
    return value;
  }

  private send(
    fn: HttpInvocation,
    addresses: ResolvedAddress[],
    headers: OutgoingHttpHeaders,
    body: string,
    settle: (error: FlintError | undefined, result?: unknown) => void,
  ): ClientRequest {
    const secure = fn.url.protocol === 'https:';
    // Connect only to the addresses that were checked, whatever DNS says by now (no rebinding between the
    // check and the connection); Host and SNI stay the URL's host.
    const pinned = ((_host: string, options: { all?: boolean; family?: number }, callback: (...args: unknown[]) => void) => {
      const wanted = options?.family === 4 || options?.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      const list = wanted.length > 0 ? wanted : addresses;
      const first = list[0] as ResolvedAddress;
      if (options?.all)
        callback(
          null,
          list.map((a) => ({ address: a.address, family: a.family })),
        );
      else callback(null, first.address, first.family);
    }) as unknown as LookupFunction;
    const req = (secure ? https : http).request({
      protocol: fn.url.protocol,
      host: hostOf(fn.url),
      port: fn.url.port === '' ? undefined : Number(fn.url.port),
      path: `${fn.url.pathname}${fn.url.search}`,
      method: fn.method,
      headers,
      agent: secure ? this.agents.https : this.agents.http,
      lookup: pinned,
    });
    req.on('error', (err) => {
      const code = (err as { code?: unknown }).code;
      settle(
        new FlintError(
          'invocation_failed',
          `request to ${fn.shownUrl} failed: ${typeof code === 'string' && !err.message.includes(code) ? `${code} ` : ''}${err.message}`,
        ),
      );
    });
    req.on('response', (res) => this.read(fn, res, settle));
    req.end(body === '' ? undefined : body);
    return req;
  }

  /** Reads the answer up to `max_response_bytes` and maps it: 2xx → result, anything else → `http_error`. */
  private read(fn: HttpInvocation, res: IncomingMessage, settle: (error: FlintError | undefined, result?: unknown) => void): void {
    const limit = this.security.max_response_bytes;
    const tooLarge = () => new FlintError('response_too_large', formatError('response_too_large', { url: fn.shownUrl, limit }));
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return settle(tooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return settle(tooLarge());
      chunks.push(chunk);
    });
    res.on('error', (err) => settle(new FlintError('invocation_failed', `reading the response of ${fn.shownUrl} failed: ${err.message}`)));
    res.on('end', () => {
      if (size > limit) return;
      const status = res.statusCode ?? 0;
      const text = Buffer.concat(chunks, size).toString('utf8');
      if (status < 200 || status > 299) {
        const shown = text.length > ERROR_BODY_CHARS ? `${text.slice(0, ERROR_BODY_CHARS)}…` : text || '(empty body)';
        return settle(new FlintError('http_error', formatError('http_error', { url: fn.shownUrl, status, body: shown }), { details: { status } }));
      }
      if (text === '') return settle(undefined, null);
      if (!isJson(res.headers['content-type'])) return settle(undefined, text);
      try {
        settle(undefined, JSON.parse(text));
      } catch (err) {
        settle(new FlintError('invocation_failed', `the response of ${fn.shownUrl} says it is JSON but is not valid JSON: ${errorMessage(err)}`));
      }
    });
  }
}

/** The URL's host as a name or address to connect to (an IPv6 literal without its brackets). */
function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** `application/json`, `text/json` or any `…+json` media type. */
function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return type === 'application/json' || type === 'text/json' || type.endsWith('+json');
}
