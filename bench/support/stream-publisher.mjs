// The publisher of bench/stream, in its own process. argv: <mode> <url> <stream> <group> <item>.
//   mode flint: a @flint/sdk worker on the engine's bridge <url>, publishing with stream::set
//               { stream_name, group_id, item_id, data } (the same item, new data each time).
//   mode bare:  a `ws` socket to the broadcast server's <url>/publish, sending { id, stream_name, group_id,
//               item_id, data } and awaiting its ack { id } (ws-broadcast-server.mjs).
// data = { p: phase, seq, t: process.hrtime in µs (CLOCK_MONOTONIC, shared by the machine's processes), … }.
// Prints {"ready":true} once connected; then over IPC:
//   { type: 'run', phase, rate, window }  publishes seq 1, 2, … of `phase` at `rate` per second (0: as fast as
//        the window allows) with at most `window` messages not yet received by every subscriber (the bench
//        forwards the subscribers' { type: 'progress', phase, seq } here) nor answered; answers at once.
//   { type: 'mark' }  { published } so far in the running phase.
//   { type: 'halt' }  stops publishing, waits for the answers: { last (seq), errors, firstError }.
import { registerWorker } from '@flint/sdk';
import WebSocket from 'ws';
import { serveChild } from './proc.mjs';

const [mode, url, stream, group, item] = process.argv.slice(2);
const nowUs = () => Number(process.hrtime.bigint()) / 1000;
const body = { text: 'hello flint', n: 42, ok: true, tags: ['a', 'b'] };

let send;
let close;
if (mode === 'flint') {
  const worker = registerWorker(url, { workerName: 'bench-stream-publisher', announce: false });
  await worker.waitConnected();
  send = (data) => worker.trigger({ function_id: 'stream::set', payload: { stream_name: stream, group_id: group, item_id: item, data } });
  close = () => worker.shutdown();
} else if (mode === 'bare') {
  const ws = new WebSocket(`${url}/publish`, { perMessageDeflate: false });
  const pending = new Map();
  let nextId = 0;
  ws.on('message', (raw) => {
    const { id } = JSON.parse(raw.toString());
    pending.get(id)?.resolve();
    pending.delete(id);
  });
  ws.on('close', () => {
    for (const { reject } of pending.values()) reject(new Error('publisher socket closed'));
    pending.clear();
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  send = (data) =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, stream_name: stream, group_id: group, item_id: item, data }));
    });
  close = () => ws.terminate();
} else {
  throw new Error(`unknown mode ${mode}`);
}

let current; // the running phase
let wake;
const waitForNews = () =>
  new Promise((resolve) => {
    wake = resolve;
  });
const news = () => {
  const w = wake;
  wake = undefined;
  w?.();
};

process.on('message', (msg) => {
  if (msg?.type !== 'progress' || !current || msg.phase !== current.phase) return;
  if (msg.seq > current.delivered) {
    current.delivered = msg.seq;
    news();
  }
});

async function run(phase, rate, window) {
  const state = { phase, seq: 0, delivered: 0, inFlight: 0, running: true, errors: 0, firstError: undefined, calls: new Set() };
  current = state;
  const intervalMs = rate > 0 ? 1000 / rate : 0;
  let due = performance.now();
  while (state.running) {
    if (state.seq - state.delivered >= window || state.inFlight >= window) {
      await waitForNews();
      continue;
    }
    if (intervalMs > 0) {
      const now = performance.now();
      if (now < due) {
        await new Promise((resolve) => setTimeout(resolve, due - now));
        continue;
      }
      // Behind schedule (the window was full): do not burst to catch up, go on from now.
      due = Math.max(due, now - 20) + intervalMs;
    }
    const seq = ++state.seq;
    state.inFlight++;
    const call = send({ p: phase, seq, t: nowUs(), ...body }).then(
      () => {},
      (err) => {
        state.errors++;
        state.firstError ??= err instanceof Error ? err.message : String(err);
        state.running = false;
      },
    );
    state.calls.add(call);
    call.finally(() => {
      state.calls.delete(call);
      state.inFlight--;
      news();
    });
    // Let the answers and progress of this turn in before the next message when the window is full anyway;
    // at a rate, yield at least every few messages.
    if (intervalMs === 0 && state.inFlight >= window) continue;
    if (state.seq % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(state.calls);
  return state;
}

let running;
serveChild(async () => close(), {
  run: ({ phase, rate, window }) => {
    running = run(phase, rate, window);
    return {};
  },
  mark: () => ({ published: current?.seq ?? 0 }),
  halt: async () => {
    if (!current) return { last: 0, errors: 0 };
    current.running = false;
    news();
    const state = await running;
    current = undefined;
    return { last: state.seq, errors: state.errors, firstError: state.firstError };
  },
});
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
