// A Flint worker in its own process serving HTTP routes, for bench/http and bench/sse.
// argv: <engine bridge URL> <routes> [sse]
//   routes: how many GET routes to register (each its own function, all answering HELLO as JSON):
//           route 0 is `/bench/hello` (the one measured); the others are routePaths() below, half static,
//           half with a `:id` parameter, so the router holds a realistic mix.
//   sse:    also registers GET /bench/sse, an http() handler streaming `?n=` (default 10,000) SSE events
//           as fast as the response stream takes them (awaits 'drain' whenever the stream asks to).
// Prints {"ready":true} once every trigger is registered (none parked).
import { once } from 'node:events';
import { http, registerWorker } from '@flint/sdk';
import { HELLO, SSE_DEFAULT_EVENTS, routePaths, sseEvent } from './http-shared.mjs';
import { serveChild } from './proc.mjs';

const [url, routesArg, mode] = process.argv.slice(2);
const routes = Math.max(1, Number(routesArg ?? 1));
// BENCH_WORKER_SPANS=1: a span of its own per traced call (the SDK's `spans` option, default off).
const worker = registerWorker(url, { workerName: `bench-http-worker-${routes}`, spans: process.env.BENCH_WORKER_SPANS === '1' });
await worker.waitConnected();

const hello = async () => HELLO;
const refs = [];
const paths = routePaths(routes);
for (let i = 0; i < routes; i++) {
  const functionId = `bench::http::r${i}`;
  worker.registerFunction(functionId, hello, { description: 'answers a small JSON document (bench)' });
  refs.push(worker.registerTrigger({ type: 'http', function_id: functionId, config: { api_path: paths[i].pattern, http_method: 'GET' } }));
}

if (mode === 'sse') {
  worker.registerFunction(
    'bench::http::sse',
    http(async (req, res) => {
      const n = Number(req.query_params.n ?? SSE_DEFAULT_EVENTS);
      for (let i = 0; i < n; i++) {
        res.sse(sseEvent(i));
        if (res.stream.writableNeedDrain) await once(res.stream, 'drain');
      }
      res.close();
    }),
    { description: 'streams ?n= Server-Sent Events (bench)' },
  );
  refs.push(worker.registerTrigger({ type: 'http', function_id: 'bench::http::sse', config: { api_path: '/bench/sse', http_method: 'GET' } }));
}

const results = await Promise.all(refs.map((r) => r.ready));
const parked = results.filter((r) => r.parked).length;
if (parked > 0) throw new Error(`${parked} http triggers were parked (is flint-http loaded?)`);

serveChild(() => worker.shutdown());
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, routes: refs.length })}\n`);
