import type { Writable } from 'node:stream';
import { FlintError, type ResponseControl } from '@flint/protocol';
import type { ChannelReader } from './channel-reader.js';
import { type ChannelWriter, labelWriter } from './channel-writer.js';
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

/**
 * Controls a streamed HTTP response. Status and headers must be set before the first write. Once the
 * response is closed — the client went away, the response already ended (e.g. it timed out) or the
 * handler closed it — `closed` is true, the `onClose` listeners have run once, and `write` and `sse`
 * reject with a `channel_closed` FlintError.
 */
export interface HttpResponse {
  status(code: number): void;
  headers(headers: Record<string, string>): void;
  /** Writes body bytes; resolves once they are handed to the connection. */
  write(chunk: string | Buffer): Promise<void>;
  /** The body as a Node Writable. */
  readonly stream: Writable;
  /** Sends one Server-Sent Event (sets `content-type: text/event-stream` if no content type was set). */
  sse(event: SseEvent): Promise<void>;
  /** Ends the response. */
  close(): void;
  /** True once the response is closed (reading it also makes the SDK listen for the client leaving). */
  readonly closed: boolean;
  /** Calls `listener` once when the response closes (at once if it is closed). */
  onClose(listener: () => void): void;
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
 * handler's promise settles, if the handler did not close it. A handler that stops because a write
 * rejected with `channel_closed` (the client went away) ends normally, not as a failure.
 */
export function http<B = unknown>(handler: (req: HttpRequest<B>, res: HttpResponse, ctx: HandlerContext) => unknown): Handler {
  return async (input: HttpRequest<B> & { response?: ChannelWriter }, ctx) => {
    const writer = input.response;
    if (!writer || typeof writer.sendMessage !== 'function') return handler(input, nullResponse(), ctx);
    labelWriter(writer, { channel: 'the HTTP response', peerGone: 'the client went away or the response ended', selfClosed: 'the handler ended it' });
    const { response: _ignored, ...req } = input;
    let used = false;
    let contentTypeSet = false;
    // Ends the body (opening the channel if nothing did yet, so the engine answers with the status and headers set).
    const end = () => {
      if (!writer.closed) writer.stream.end();
    };
    const res: HttpResponse = {
      status(code) {
        used = true;
        void writer.sendMessage(JSON.stringify({ type: 'set_status', status_code: code } satisfies ResponseControl));
      },
      headers(headers) {
        used = true;
        if (Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) contentTypeSet = true;
        void writer.sendMessage(JSON.stringify({ type: 'set_headers', headers } satisfies ResponseControl));
      },
      write(chunk) {
        used = true;
        return writer.write(chunk);
      },
      get stream() {
        used = true;
        return writer.stream;
      },
      sse(event) {
        if (!contentTypeSet) res.headers({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        return res.write(formatSse(event));
      },
      close() {
        used = true;
        end();
      },
      get closed() {
        return writer.closed;
      },
      onClose(listener) {
        writer.onClose(listener);
      },
    };
    try {
      const result = await handler(req as HttpRequest<B>, res, ctx);
      if (!used && result !== undefined) {
        writer.close();
        return result;
      }
      end();
      return undefined;
    } catch (err) {
      // The client went away and a write said so: the handler is done, it did not fail.
      if (err instanceof FlintError && err.code === 'channel_closed' && writer.closed) return undefined;
      if (used) writer.stream.destroy(err as Error);
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
    onClose: fail,
    get stream(): Writable {
      return fail() as never;
    },
    get closed(): boolean {
      return fail() as never;
    },
  };
}
