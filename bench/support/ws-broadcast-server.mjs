// Baseline for bench/stream: the bare `ws` broadcast server a user would write (no permessage-deflate).
// Subscribers connect to `/` and send the same join frame as to Flint's stream listener
// ({"type":"join","data":{"subscriptionId","streamName","groupId"}}); the server keeps each group's sockets
// in a Set and answers with a `sync` frame of Flint's shape. A publisher connects to `/publish` and sends
// { id, stream_name, group_id, item_id, data }: the server builds the frame Flint would send
// ({"type":"stream","timestamp","streamName","groupId","id","event":{"type":"update","data"}}), serialises it
// once, `send`s the text to every socket of the group, then acks { id } to the publisher (as stream::set
// answers after its fan-out). No storage, no back-pressure checks.
// Prints {"ready":true,"url":…}; answers IPC { type: 'mem' } and { type: 'cpu' } (proc.mjs) and
// { type: 'stats' } ({ connections, subscriptions, messages_out }).
import { WebSocketServer } from 'ws';
import { serveChild } from './proc.mjs';

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
await new Promise((resolve) => wss.once('listening', resolve));

const groups = new Map();
const key = (stream, group) => `${stream}\u0000${group}`;
let subscriptions = 0;
let messagesOut = 0;

wss.on('connection', (ws, req) => {
  if (req.url === '/publish') {
    ws.on('message', (raw) => {
      const msg = JSON.parse(raw.toString());
      const text = JSON.stringify({
        type: 'stream',
        timestamp: Date.now(),
        streamName: msg.stream_name,
        groupId: msg.group_id,
        id: msg.item_id,
        event: { type: 'update', data: msg.data },
      });
      const members = groups.get(key(msg.stream_name, msg.group_id));
      if (members) {
        for (const client of members) client.send(text);
        messagesOut += members.size;
      }
      ws.send(JSON.stringify({ id: msg.id }));
    });
    return;
  }
  const joined = new Set();
  ws.on('message', (raw) => {
    const msg = JSON.parse(raw.toString());
    if (msg.type !== 'join') return;
    const { streamName, groupId } = msg.data;
    const k = key(streamName, groupId);
    let members = groups.get(k);
    if (!members) {
      members = new Set();
      groups.set(k, members);
    }
    if (!members.has(ws)) subscriptions++;
    members.add(ws);
    joined.add(k);
    ws.send(JSON.stringify({ type: 'stream', timestamp: Date.now(), streamName, groupId, id: null, event: { type: 'sync', data: [] } }));
    messagesOut++;
  });
  ws.once('close', () => {
    for (const k of joined) {
      const members = groups.get(k);
      if (members?.delete(ws)) subscriptions--;
      if (members?.size === 0) groups.delete(k);
    }
  });
});

serveChild(
  () =>
    new Promise((resolve) => {
      for (const ws of wss.clients) ws.terminate();
      wss.close(() => resolve());
    }),
  { stats: () => ({ connections: wss.clients.size, subscriptions, messages_out: messagesOut }) },
);
process.stdout.write(`${JSON.stringify({ ready: true, url: `ws://127.0.0.1:${wss.address().port}`, pid: process.pid })}\n`);
