// What bench/http and bench/sse serve, shared by the Flint worker (http-worker.mjs) and the bare
// node:http server (bare-http-server.mjs) so that both answer byte-for-byte the same bodies.

/** The JSON document every GET route answers. */
export const HELLO = { message: 'hello from a worker', n: 42, ok: true, tags: ['a', 'b'] };

/** The measured route (route 0). */
export const HELLO_PATH = '/bench/hello';

export const SSE_PATH = '/bench/sse';
export const SSE_DEFAULT_EVENTS = 10_000;

/** The i-th SSE event of a stream. */
export const sseEvent = (i) => ({ id: i, event: 'tick', data: { i, text: 'hello flint' } });

/**
 * `count` route patterns and a concrete request path for each: route 0 is HELLO_PATH; then
 * alternately a static `/bench/r<i>` and a parameterised `/bench/r<i>/items/:id`.
 */
export function routePaths(count) {
  const out = [{ pattern: HELLO_PATH, path: HELLO_PATH }];
  for (let i = 1; i < count; i++) {
    out.push(i % 2 === 0 ? { pattern: `/bench/r${i}`, path: `/bench/r${i}` } : { pattern: `/bench/r${i}/items/:id`, path: `/bench/r${i}/items/${i * 7}` });
  }
  return out;
}
