// Baseline: a bare `ws` echo server. Each text frame is parsed as JSON ({ id, data }) and answered with
// a JSON frame { id, data } carrying the same id. Prints {"ready":true,"url":…} once listening.
import { WebSocketServer } from 'ws';
import { serveChild } from './proc.mjs';

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
await new Promise((resolve) => wss.once('listening', resolve));
wss.on('connection', (ws, req) => {
  req.socket.setNoDelay(true);
  ws.on('message', (raw) => {
    const msg = JSON.parse(raw.toString());
    ws.send(JSON.stringify({ id: msg.id, data: msg.data }));
  });
});

serveChild(
  () =>
    new Promise((resolve) => {
      for (const ws of wss.clients) ws.terminate();
      wss.close(() => resolve());
    }),
);
process.stdout.write(`${JSON.stringify({ ready: true, url: `ws://127.0.0.1:${wss.address().port}`, pid: process.pid })}\n`);
