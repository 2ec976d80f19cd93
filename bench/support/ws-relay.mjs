// Informational baseline: a bare `ws` relay, the floor for Flint's topology (caller → router → echo
// process and back, 4 WebSocket hops, one JSON.parse + JSON.stringify per frame in the router).
// Clients send { id, data }; the relay re-keys each call, forwards it to the upstream echo server given
// in argv[2] and routes the reply back. Prints {"ready":true,"url":…} once listening.
import WebSocket, { WebSocketServer } from 'ws';
import { serveChild } from './proc.mjs';

const upstream = new WebSocket(process.argv[2], { perMessageDeflate: false });
upstream.on('upgrade', (res) => res.socket.setNoDelay(true));
await new Promise((resolve, reject) => {
  upstream.once('open', resolve);
  upstream.once('error', reject);
});
const pending = new Map();
let nextId = 0;
upstream.on('message', (raw) => {
  const msg = JSON.parse(raw.toString());
  const entry = pending.get(msg.id);
  if (!entry) return;
  pending.delete(msg.id);
  entry.ws.send(JSON.stringify({ id: entry.id, data: msg.data }));
});

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
await new Promise((resolve) => wss.once('listening', resolve));
wss.on('connection', (ws, req) => {
  req.socket.setNoDelay(true);
  ws.on('message', (raw) => {
    const msg = JSON.parse(raw.toString());
    const id = ++nextId;
    pending.set(id, { ws, id: msg.id });
    upstream.send(JSON.stringify({ id, data: msg.data }));
  });
});

serveChild(
  () =>
    new Promise((resolve) => {
      upstream.terminate();
      for (const ws of wss.clients) ws.terminate();
      wss.close(() => resolve());
    }),
);
process.stdout.write(`${JSON.stringify({ ready: true, url: `ws://127.0.0.1:${wss.address().port}`, pid: process.pid })}\n`);
