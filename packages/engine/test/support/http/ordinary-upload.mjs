// An ordinary node:http upload, as an application writes one, run in its own process (as a real
// client is: in the test's process the engine and the client would share one event loop). Streams
// <total> bytes from memory (one reused 64 KiB buffer) into `http.request` with a content-length, or
// chunked, `count` times in a row, and keeps sending whatever the server answers. Prints one JSON line
// per upload: `{"status", "connection", "body"}` when the whole response was read, `{"error"}` (e.g.
// ECONNRESET, EPIPE) when it could not be.
//   node ordinary-upload.mjs <url> <total> <content-length|chunked> <content-type> <count>
import { request } from 'node:http';
import { Readable } from 'node:stream';

const [url, totalArg, framing, contentType, countArg] = process.argv.slice(2);
const total = Number(totalArg);
const piece = Buffer.alloc(64 * 1024, 0x61);

async function* body() {
  for (let sent = 0; sent < total; sent += piece.length) yield sent + piece.length <= total ? piece : piece.subarray(0, total - sent);
}

function upload() {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': contentType };
    if (framing === 'content-length') headers['content-length'] = String(total);
    const req = request(url, { method: 'POST', headers, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        text += d;
      });
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body: text }));
    });
    Readable.from(body()).pipe(req);
  });
}

for (let i = 0; i < Number(countArg); i++) {
  const result = await upload().catch((err) => ({ error: err.code ?? err.message }));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
