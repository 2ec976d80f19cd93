import type { Writable } from 'node:stream';
import type { ResponseControl } from '@flint/protocol';
import type { ChannelReader, ChannelWriter } from './channels.js';
import type { Handler, HandlerContext } from './types.js';

/** What an HTTP route's function receives (`http` trigger). */
export interface HttpRequest<B = unknown> {
  path_params: Record<string, string>;
  query_params: Record<string, string>;
  headers: Record<string, string>;
  method: string;
  body: B;
  /** The concrete request path, e.g. `/users/42`. */
  path: string;
  /** The route pattern, e.g. `/users/:id`. */
  route: string;
  /** The raw request body (for non-JSON content types). */
  request_body: ChannelReader;
}

export interface ApiResponse {
  status_code?: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface SseEvent {
  id?: string | number;
  event?: string;
  /** Strings are sent as they are (one `data:` line per line); anything else as JSON. */
  data: unknown;
  retry?: number;
}

/** Controls a streamed HTTP response. Status and headers must be set before the first write. */
export interface HttpResponse {
  status(code: number): void;
  headers(headers: Record<string, string>): void;
  write(chunk: string | Buffer): void;
  /** The body as a Node Writable. */
  readonly stream: Writable;
  /** Sends one Server-Sent Event (sets `content-type: text/event-stream` if no content type was set). */
  sse(event: SseEvent): void;
  /** Ends the response. */
  close(): void;
}

/** Formats one Server-Sent Events frame. */
export function formatSse(event: SseEvent): string {
  let out = '';
  if (event.id !== undefined) out += `id: ${String(event.id).replace(/[\r\n]/g, '')}\n`;
  if (event.event !== undefined) out += `event: ${event.event.replace(/[\r\n]/g, '')}\n`;
  if (event.retry !== undefined) out += `retry: ${Math.floor(event.retry)}\n`;
  const text = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  for (const line of text.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/**
 * Wraps an HTTP handler that answers through a response object (streaming, SSE, downloads). The
 * handler may also return an ApiResponse as a plain route would. The response ends when the
 * handler's promise settles, if the handler did not close it.
 */
export function http<B = unknown>(handler: (req: HttpRequest<B>, res: HttpResponse, ctx: HandlerContext) => unknown): Handler {
  return async (input: HttpRequest<B> & { response?: ChannelWriter }, ctx) => {
    const writer = input.response;
    if (!writer || typeof writer.sendMessage !== 'function') return handler(input, nullResponse(), ctx);
    const { response: _ignored, ...req } = input;
    let used = false;
    let contentTypeSet = false;
    let body: Writable | undefined;
    // The body stream is made on first use; a client that went away must not crash the worker, so
    // its errors are observed (the handler sees the stream destroyed).
    const stream = (): Writable => {
      if (!body) {
        body = writer.stream;
        body.on('error', () => {});
      }
      return body;
    };
    const res: HttpResponse = {
      status(code) {
        used = true;
        writer.sendMessage(JSON.stringify({ type: 'set_status', status_code: code } satisfies ResponseControl));
      },
      headers(headers) {
        used = true;
        if (Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) contentTypeSet = true;
        writer.sendMessage(JSON.stringify({ type: 'set_headers', headers } satisfies ResponseControl));
      },
      write(chunk) {
        used = true;
        stream().write(chunk);
      },
      get stream() {
        used = true;
        return stream();
      },
      sse(event) {
        if (!contentTypeSet) res.headers({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(formatSse(event));
      },
      close() {
        used = true;
        const st = stream();
        if (!st.writableEnded) st.end();
      },
    };
    try {
      const result = await handler(req as HttpRequest<B>, res, ctx);
      if (!used && result !== undefined) {
        writer.close();
        return result;
      }
      res.close();
      return undefined;
    } catch (err) {
      if (used) stream().destroy(err as Error);
      else writer.close();
      throw err;
    }
  };
}

function nullResponse(): HttpResponse {
  const fail = () => {
    throw new Error('this invocation did not come from an http trigger: no response channel');
  };
  return {
    status: fail,
    headers: fail,
    write: fail,
    sse: fail,
    close: fail,
    get stream(): Writable {
      return fail() as never;
    },
  };
}
