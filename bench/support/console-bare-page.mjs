// The baseline of bench/console: what a hand-written page without virtualisation does. A bare node:http
// server (argv: <console url>) serves one HTML page with an inline script on every path but
// /_console/functions, which it proxies to the console server (so both pages read the very same JSON).
// The page fetches the list, sorts it by id (as the console does), renders every function as a plain <li>
// (id, provider, description: what a console row shows) and filters with an input that hides the <li>
// elements whose id does not contain the text (the `hidden` attribute). The <li> are display: block: as
// Blink's default list items, hiding 9,999 of them one by one takes seconds (each invalidates the ordinals
// of all later items), a browser quirk that a baseline should not charge to non-virtualised pages. Same test hooks as the console's Functions page: rows carry
// data-testid="function-row" and data-function-id, the input aria-label="Filter functions".
// Prints {"ready":true,"url":"http://127.0.0.1:…","pid":…} once listening; SIGTERM stops it.
import { createServer, request } from 'node:http';
import { serveChild } from './proc.mjs';

const consoleUrl = new URL(process.argv[2] ?? 'http://127.0.0.1:3113');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Functions (bare)</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 0; }
  header { display: flex; gap: 12px; align-items: center; padding: 12px 16px; border-bottom: 1px solid #ddd; }
  h1 { font-size: 18px; margin: 0; }
  ul { list-style: none; margin: 0; padding: 0; }
  /* display: block, not Blink's default list-item: hiding list items one by one invalidates the ordinals of
     every later item (quadratic: ~12 s for 9,999 of 10,000 on a small machine, against ~40 ms as blocks). */
  li { display: block; padding: 6px 16px; border-bottom: 1px solid #eee; }
  .id { font-family: monospace; }
  .muted { color: #777; font-size: 12px; }
</style>
</head>
<body>
<header><h1>Functions</h1><span id="count"></span><input type="search" aria-label="Filter functions" placeholder="Filter by name"></header>
<ul id="list"></ul>
<script>
  const list = document.getElementById('list');
  const input = document.querySelector('input');
  let rows = [];
  fetch('/_console/functions?include_internal=false', { headers: { accept: 'application/json' } })
    .then((r) => r.json())
    .then(({ functions }) => {
      functions.sort((a, b) => (a.function_id < b.function_id ? -1 : a.function_id > b.function_id ? 1 : 0));
      const fragment = document.createDocumentFragment();
      rows = functions.map((f) => {
        const li = document.createElement('li');
        li.dataset.testid = 'function-row';
        li.dataset.functionId = f.function_id;
        const id = document.createElement('span');
        id.className = 'id';
        id.textContent = f.function_id;
        const provider = f.providers && f.providers[0];
        const by = document.createElement('span');
        by.className = 'muted';
        by.textContent = provider ? ' ' + (provider.module || provider.worker_name || provider.worker_id || '') : '';
        const desc = document.createElement('div');
        desc.className = 'muted';
        desc.textContent = f.description || '\\u00a0';
        li.append(id, by, desc);
        fragment.append(li);
        return { li, key: f.function_id.toLowerCase() };
      });
      list.append(fragment);
      document.getElementById('count').textContent = String(functions.length);
    });
  input.addEventListener('input', () => {
    const q = input.value.trim().toLowerCase();
    for (const row of rows) row.li.hidden = q !== '' && !row.key.includes(q);
  });
</script>
</body>
</html>
`;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://bare');
  if (url.pathname === '/_console/functions') {
    const upstream = request(
      { host: consoleUrl.hostname, port: consoleUrl.port, path: `${url.pathname}${url.search}`, method: 'GET', headers: { accept: 'application/json' } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/json', 'cache-control': 'no-store' });
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
    upstream.end();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'content-length': Buffer.byteLength(PAGE) });
  res.end(PAGE);
});

serveChild(
  () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ ready: true, url: `http://127.0.0.1:${server.address().port}`, pid: process.pid })}\n`);
});
