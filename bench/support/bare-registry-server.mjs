// Baseline for bench/registry: the least a registry can do over bare `ws`. Speaks just enough of the
// Flint wire protocol for the SDK: sends `workerregistered` on connect, keeps `registerfunction` frames
// in one Map (plus a Set per connection), stores `engine::workers::register` metadata, and answers
// `engine::functions::list` with the same FunctionInfo shape as Flint. No validation, no time-outs.
// Prints {"ready":true,"url":…}; answers IPC { type: 'mem' } like engine-process.mjs.
import { randomUUID } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { serveChild } from './proc.mjs';

const functions = new Map();
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
await new Promise((resolve) => wss.once('listening', resolve));

wss.on('connection', (ws, req) => {
  req.socket.setNoDelay(true);
  const conn = { id: randomUUID(), functions: new Set(), metadata: undefined };
  ws.send(JSON.stringify({ type: 'workerregistered', worker_id: conn.id }));
  ws.on('message', (raw) => {
    const msg = JSON.parse(raw.toString());
    if (msg.type === 'registerfunction') {
      functions.set(msg.id, {
        id: msg.id,
        description: msg.description,
        request_format: msg.request_format,
        response_format: msg.response_format,
        metadata: msg.metadata,
      });
      conn.functions.add(msg.id);
    } else if (msg.type === 'invokefunction') {
      let result;
      if (msg.function_id === 'engine::functions::list') {
        const list = [];
        for (const f of functions.values()) {
          list.push({
            function_id: f.id,
            description: f.description ?? null,
            request_format: f.request_format ?? null,
            response_format: f.response_format ?? null,
            metadata: f.metadata ?? null,
          });
        }
        result = { functions: list };
      } else if (msg.function_id === 'engine::workers::register') {
        conn.metadata = msg.data;
        result = { success: true };
      }
      if (msg.invocation_id) ws.send(JSON.stringify({ type: 'invocationresult', invocation_id: msg.invocation_id, function_id: msg.function_id, result }));
    }
  });
  ws.on('close', () => {
    for (const id of conn.functions) functions.delete(id);
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
