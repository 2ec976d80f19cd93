// WebSocket subscribers of one stream group in one process, for bench/stream. argv: <url> <count> <stream> <group>.
// Prints {"ready":true} at once; then over IPC:
//   { type: 'connect', concurrency }  opens <count> `ws` sockets (at most <concurrency> opening at once), each
//                                      sends {"type":"join","data":{"subscriptionId":"s1","streamName","groupId"}} and
//                                      waits for its `sync` frame; answers { ms, connected }.
//   { type: 'start' }                 starts a measuring window: frames and delivery latencies from now on.
//   { type: 'stop' }                  ends it: { frames, elapsedMs, histogram (latency-histogram.mjs), clientsWithNone,
//                                      minPerClient, maxPerClient }.
//   { type: 'status' }                { totalFrames (every frame, syncs included), orderErrors, firstOrderError, closes }.
//   { type: 'close' }                 closes every socket.
// The publisher puts { p: phase, seq, t } in every item value (`t`: process.hrtime in µs at publish time; that
// clock is CLOCK_MONOTONIC, the same in every process of the machine): latency = arrival − t. Each socket checks
// that the seqs of a phase arrive in order, without gaps or repeats. The process tells the parent (unasked) how far
// every one of its sockets got: { type: 'progress', phase, seq } once every socket has received seq (and so every
// earlier one), at most once per turn of the event loop; the bench forwards that to the publisher as its window.
import WebSocket from 'ws';
import { newHistogram, record } from './latency-histogram.mjs';
import { serveChild } from './proc.mjs';

const [url, countArg, stream, group] = process.argv.slice(2);
const count = Number(countArg);
const nowUs = () => Number(process.hrtime.bigint()) / 1000;

const clients = [];
let closing = false;
const closes = [];
let totalFrames = 0;
let orderErrors = 0;
let firstOrderError;
// The measuring window.
let measuring = false;
let windowFrames = 0;
let windowStart = 0n;
let histogram = newHistogram();
// Completion of the current phase: how many sockets got each seq, and the highest seq every socket got.
let phase = -1;
let pending = new Map();
let completed = 0;
let reported = 0;
let reportScheduled = false;

function report() {
  reportScheduled = false;
  if (completed === reported) return;
  reported = completed;
  process.send({ type: 'progress', phase, seq: completed });
}

function connectOne(index) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const client = { ws, index, phase: -1, last: 0, windowFrames: 0, synced: false };
    ws.once('open', () => {
      ws.send(JSON.stringify({ type: 'join', data: { subscriptionId: 's1', streamName: stream, groupId: group } }));
    });
    ws.once('error', (err) => {
      if (!client.synced) reject(new Error(`subscriber ${index}: ${err.message}`));
    });
    ws.on('close', (code, reason) => {
      if (!closing) closes.push({ index, code, reason: reason.toString() });
      if (!client.synced) reject(new Error(`subscriber ${index} closed (${code}) before its sync frame`));
    });
    ws.on('message', (raw) => {
      const now = nowUs();
      totalFrames++;
      const msg = JSON.parse(raw.toString());
      const event = msg.event;
      if (event?.type === 'sync') {
        if (!client.synced) {
          client.synced = true;
          clients.push(client);
          resolve();
        }
        return;
      }
      const d = event?.data;
      if (typeof d?.seq !== 'number') return;
      if (d.p !== client.phase) {
        client.phase = d.p;
        client.last = 0;
      }
      if (d.seq !== client.last + 1) {
        orderErrors++;
        firstOrderError ??= `subscriber ${index}: seq ${d.seq} after ${client.last} (phase ${d.p})`;
      }
      client.last = d.seq;
      if (measuring) {
        windowFrames++;
        client.windowFrames++;
        record(histogram, now - d.t);
      }
      if (d.p !== phase) {
        phase = d.p;
        pending = new Map();
        completed = 0;
        reported = 0;
      }
      const got = (pending.get(d.seq) ?? 0) + 1;
      if (got >= clients.length) {
        pending.delete(d.seq);
        if (d.seq > completed) completed = d.seq;
        if (!reportScheduled) {
          reportScheduled = true;
          setImmediate(report);
        }
      } else {
        pending.set(d.seq, got);
      }
    });
  });
}

async function connect({ concurrency = 50 }) {
  const t0 = process.hrtime.bigint();
  let next = 0;
  const lane = async () => {
    while (next < count) await connectOne(next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, lane));
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, connected: clients.length };
}

const closeAll = () => {
  closing = true;
  for (const { ws } of clients) ws.terminate();
};

serveChild(async () => closeAll(), {
  connect,
  start: () => {
    windowFrames = 0;
    histogram = newHistogram();
    for (const c of clients) c.windowFrames = 0;
    windowStart = process.hrtime.bigint();
    measuring = true;
    return {};
  },
  stop: () => {
    measuring = false;
    const elapsedMs = Number(process.hrtime.bigint() - windowStart) / 1e6;
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    let none = 0;
    for (const c of clients) {
      min = Math.min(min, c.windowFrames);
      max = Math.max(max, c.windowFrames);
      if (c.windowFrames === 0) none++;
    }
    return { frames: windowFrames, elapsedMs, histogram, clientsWithNone: none, minPerClient: min, maxPerClient: max };
  },
  status: () => ({ totalFrames, orderErrors, firstOrderError, closes: closes.slice(0, 20), closed: closes.length }),
  close: () => {
    closeAll();
    return {};
  },
});
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
