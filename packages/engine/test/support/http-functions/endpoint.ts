/**
 * A real local HTTP server for the flint-http-functions tests: it records every request (method, path,
 * headers, body, and whether the client went away before an answer) and answers each path with what the
 * test set for it. Listens on 127.0.0.1 on an ephemeral port; closed (with its kept-alive connections)
 * by `cleanup()`.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { track } from '../cleanup.js';

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The client closed the connection before the answer was sent (set later, when it happens). */
  abandoned: boolean;
}

/** An answer: status, headers and body; or `'hang'` to never answer. */
export type Answer = { status?: number; headers?: Record<string, string | number>; body?: string | Buffer } | 'hang';
export type Responder = (req: SeenRequest) => Answer;

export interface Endpoint {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  readonly requests: SeenRequest[];
  /** Answers requests to `path` (the path without its query) with `respond`; unknown paths get 404. */
  on(path: string, respond: Responder): void;
}

export async function startEndpoint(): Promise<Endpoint> {
  const requests: SeenRequest[] = [];
  const routes = new Map<string, Responder>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        abandoned: false,
      };
      requests.push(seen);
      res.on('close', () => {
        if (!res.writableFinished) seen.abandoned = true;
      });
      const respond = routes.get((req.url ?? '').split('?')[0] ?? '');
      const answer: Answer = respond ? respond(seen) : { status: 404, body: 'no such path' };
      if (answer === 'hang') return;
      res.writeHead(answer.status ?? 200, answer.headers ?? {});
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  track(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, port, requests, on: (path, respond) => routes.set(path, respond) };
}
