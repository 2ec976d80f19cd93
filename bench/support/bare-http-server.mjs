// Baseline for bench/http and bench/sse: a bare node:http server (no-delay sockets, same keep-alive
// time-out as flint-http). GET /bench/sse?n= streams n SSE events (the same frames as the Flint worker,
// awaiting 'drain' whenever write() returns false); any other GET answers HELLO as JSON, as every Flint
// route does. Prints {"ready":true,"url":"http://…"} once listening.
import { createServer } from 'node:http';
import { formatSse } from '@flint/sdk';
import { HELLO, SSE_DEFAULT_EVENTS, SSE_PATH, sseEvent } from './http-shared.mjs';
import { serveChild } from './proc.mjs';

const body = JSON.stringify(HELLO);
const length = String(Buffer.byteLength(body));

/** Resolves on 'drain' or 'close', whichever comes first, leaving no listener behind. */
function drained(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function sse(req, res) {
  const q = req.url.indexOf('?');
  const n = Number(new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1)).get('n') ?? SSE_DEFAULT_EVENTS);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (let i = 0; i < n && !res.destroyed; i++) {
    if (!res.write(formatSse(sseEvent(i)))) await drained(res);
  }
  res.end();
}

const server = createServer({ noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => {
  if (req.url.startsWith(SSE_PATH)) {
    sse(req, res).catch(() => res.destroy());
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': length });
  res.end(body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

serveChild(
  () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);
process.stdout.write(`${JSON.stringify({ ready: true, url: `http://127.0.0.1:${server.address().port}`, pid: process.pid })}\n`);
