/**
 * Helpers for the `flint-http` integration tests (http/*.test.ts): an engine with the HTTP module and a
 * captured JSON log, route registration on either SDK, SSE reading from a fetch body, and a raw node:http upload
 * that stops as soon as the server answers.
 */
import { request as httpRequest } from 'node:http';
import type { Engine, EngineOptions } from '@flint/engine';
import { type TestWorker, startTestEngine } from '../harness.js';
import { type LogRecord, captureLog } from '../log-capture.js';
import type { Frame, RawClient } from '../raw-client.js';
import { waitFor, within } from '../util.js';

export interface HttpEngine {
  engine: Engine;
  /** `http://127.0.0.1:<port>` of the HTTP module. */
  base: string;
  /** Every JSON log line the engine wrote so far (pino levels: 30 info, 40 warn, 50 error). */
  logs: LogRecord[];
}

/**
 * Starts an engine with `flint-http` on an ephemeral port; `http` is merged over short test time-outs.
 * `engineConfig` adds top-level engine keys (e.g. `channels`).
 */
export async function startHttpEngine(
  http: Record<string, unknown> = {},
  engineConfig: Record<string, unknown> = {},
  options: Omit<EngineOptions, 'config' | 'logger'> = {},
): Promise<HttpEngine> {
  const { logger, records: logs } = captureLog('info');
  const engine = await startTestEngine(
    {
      ...engineConfig,
      modules: [
        { name: 'flint-http', config: { port: 0, default_timeout_ms: 2000, middleware_timeout_ms: 1000, ...http } },
        ...((engineConfig.modules as unknown[]) ?? []),
      ],
    },
    { ...options, logger },
  );
  const base = engine.listeners().find((l) => l.name === 'http')?.url;
  if (!base) throw new Error('the engine has no http listener');
  return { engine, base, logs };
}

export interface RouteSpec {
  method: string;
  path: string;
  condition_function_id?: string;
  middleware_function_ids?: string[];
}

/** Registers `functionId` with `handler` and an http trigger for it (call before or after connecting). */
export function serveRoute(
  worker: TestWorker,
  functionId: string,
  route: RouteSpec,
  // biome-ignore lint/suspicious/noExplicitAny: handlers take arbitrary JSON (and the SDK's context)
  handler: (input: any, ...rest: any[]) => unknown,
): { unregister(): void } {
  worker.registerFunction(functionId, handler);
  const { method, path, ...rest } = route;
  return worker.registerTrigger({ type: 'http', function_id: functionId, config: { api_path: path, http_method: method, ...rest } });
}

/** Waits until `method path` is routed (answers anything but 404/405/503). */
export async function waitRouted(base: string, method: string, path: string, timeoutMs = 3000): Promise<void> {
  await waitFor(
    async () => {
      const res = await fetch(base + path, { method, headers: { 'x-probe': '1' } });
      await res.arrayBuffer();
      return res.status !== 404 && res.status !== 405 && res.status !== 503;
    },
    timeoutMs,
    `${method} ${path} to be routed`,
  );
}

/** Waits until `method path` answers `status`. */
export async function waitStatus(base: string, method: string, path: string, status: number, timeoutMs = 3000): Promise<void> {
  await waitFor(
    async () => {
      const res = await fetch(base + path, { method });
      await res.arrayBuffer();
      return res.status === status;
    },
    timeoutMs,
    `${method} ${path} to answer ${status}`,
  );
}

/** A fetch that never hangs a test: rejects after `ms`. */
export function fetchWithin(url: string, init: RequestInit = {}, ms = 5000): Promise<Response> {
  return within(fetch(url, init), ms, `${init.method ?? 'GET'} ${url}`);
}

export async function json(res: Response): Promise<LogRecord> {
  const text = await res.text();
  try {
    return JSON.parse(text) as LogRecord;
  } catch {
    throw new Error(`not JSON (status ${res.status}): ${text.slice(0, 200)}`);
  }
}

/** Reads a fetch body as text chunks; `until` waits for a piece of text to have arrived. */
export class BodyReader {
  text = '';
  done = false;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(res: Response) {
    if (!res.body) throw new Error('the response has no body');
    this.reader = res.body.getReader();
  }

  /** Reads until `predicate(text)` holds; rejects at the end of the body or after `ms`. */
  async until(predicate: (text: string) => boolean, ms = 3000): Promise<string> {
    const work = (async () => {
      while (!predicate(this.text)) {
        const { value, done } = await this.reader.read();
        if (done) {
          this.done = true;
          throw new Error(`the body ended before the expected text; got ${JSON.stringify(this.text)}`);
        }
        this.text += this.decoder.decode(value, { stream: true });
      }
      return this.text;
    })();
    return within(work, ms, 'reading the response body');
  }

  /** Reads to the end of the body. */
  async rest(ms = 3000): Promise<string> {
    const work = (async () => {
      for (;;) {
        const { value, done } = await this.reader.read();
        if (done) break;
        this.text += this.decoder.decode(value, { stream: true });
      }
      this.done = true;
      return this.text;
    })();
    return within(work, ms, 'reading the rest of the response body');
  }

  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }
}

/** Parses SSE frames (`id:`, `event:`, `data:` lines, blank line) out of a text. */
export function parseSse(text: string): { id?: string; event?: string; data: string[] }[] {
  const frames: { id?: string; event?: string; data: string[] }[] = [];
  for (const block of text.split('\n\n')) {
    if (block === '') continue;
    const frame: { id?: string; event?: string; data: string[] } = { data: [] };
    for (const line of block.split('\n')) {
      const i = line.indexOf(':');
      const field = line.slice(0, i);
      const value = line.slice(i + 1).replace(/^ /, '');
      if (field === 'id') frame.id = value;
      else if (field === 'event') frame.event = value;
      else if (field === 'data') frame.data.push(value);
    }
    frames.push(frame);
  }
  return frames;
}

export interface UploadResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Bytes the client had handed to the socket when the response arrived (or the connection failed). */
  sentWhenAnswered: number;
  error?: string;
}

/**
 * POSTs a chunked body of `total` bytes in `chunkSize` pieces (one reused buffer) with back-pressure,
 * and stops sending as soon as the server answers. `contentLength` declares a length instead of
 * chunked encoding.
 */
export function uploadUntilAnswered(
  url: string,
  options: { total: number; chunkSize?: number; contentType?: string; contentLength?: number; timeoutMs?: number },
): Promise<UploadResult> {
  const chunkSize = options.chunkSize ?? 64 * 1024;
  const chunk = Buffer.alloc(chunkSize, 0x61);
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/octet-stream' };
  if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength);
  else headers['transfer-encoding'] = 'chunked';
  return within(
    new Promise<UploadResult>((resolve) => {
      let sent = 0;
      let answered = false;
      let settled = false;
      const finish = (r: UploadResult) => {
        if (settled) return;
        settled = true;
        req.destroy();
        resolve(r);
      };
      const req = httpRequest(url, { method: 'POST', headers, agent: false });
      req.on('response', (res) => {
        answered = true;
        const sentWhenAnswered = sent;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => finish({ status: res.statusCode ?? 0, headers: res.headers, body, sentWhenAnswered }));
        res.on('error', (err) => finish({ status: res.statusCode ?? 0, headers: res.headers, body, sentWhenAnswered, error: err.message }));
      });
      req.on('error', (err) => {
        if (!answered) finish({ status: 0, headers: {}, body: '', sentWhenAnswered: sent, error: err.message });
      });
      const pump = () => {
        while (!answered && !req.destroyed && sent < options.total) {
          const piece = Math.min(chunkSize, options.total - sent);
          sent += piece;
          if (!req.write(piece === chunkSize ? chunk : chunk.subarray(0, piece))) {
            req.once('drain', pump);
            return;
          }
        }
        if (!answered && !req.destroyed && sent >= options.total) req.end();
      };
      pump();
    }),
    options.timeoutMs ?? 15_000,
    `upload to ${url}`,
  );
}

/** A raw bridge client registering an http trigger; resolves with its `triggerregistrationresult` frame. */
export async function rawRegisterRoute(client: RawClient, triggerId: string, functionId: string, config: unknown): Promise<Frame> {
  client.send({ type: 'registertrigger', id: triggerId, trigger_type: 'http', function_id: functionId, config });
  return client.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === triggerId);
}
