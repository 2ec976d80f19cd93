/**
 * The ids of a worker's calls: UUIDs, distinct, each answer settling its own call only — also for calls
 * that wait while many later ones are made and answered, and never for an answer whose id the worker did
 * not issue. A bare WebSocket server plays the engine, so the test decides which answer comes when.
 */
import { once } from 'node:events';
import { type Worker, registerWorker } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { cleanup, quiet, track, waitFor } from './support.js';

process.env.OTEL_ENABLED = 'false';

afterEach(cleanup);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Invoke {
  invocation_id: string;
  function_id: string;
  data: { n: number };
}

/** A server that records every call it gets; `answer` replies to one (or with any id at all). */
async function fakeEngine(): Promise<{ url: string; calls: Invoke[]; answer: (id: string, result: unknown) => void }> {
  const calls: Invoke[] = [];
  let socket: WebSocket | undefined;
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  server.on('connection', (ws) => {
    socket = ws;
    ws.on('message', (raw: RawData) => {
      const frame = JSON.parse(raw.toString()) as { type: string } & Invoke;
      if (frame.type === 'invokefunction' && frame.function_id === 'ids::echo') calls.push(frame);
    });
  });
  track(
    () =>
      new Promise<void>((resolve) => {
        for (const c of server.clients) c.terminate();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as { port: number };
  const answer = (id: string, result: unknown) => {
    socket?.send(JSON.stringify({ type: 'invocationresult', invocation_id: id, function_id: 'ids::echo', result }));
  };
  return { url: `ws://127.0.0.1:${port}`, calls, answer };
}

function worker(url: string): Worker {
  const w = registerWorker(url, { workerName: 'ids', reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, log: quiet });
  track(() => w.shutdown());
  return w;
}

describe('call ids', () => {
  it('are distinct UUIDs, and each answer settles its own call, even one made 3,000 calls earlier', async () => {
    const engine = await fakeEngine();
    const w = worker(engine.url);
    await w.waitConnected();
    const total = 3000;
    const results: Promise<unknown>[] = [];
    for (let n = 0; n < total; n++) results.push(w.trigger({ function_id: 'ids::echo', payload: { n } }));
    await waitFor(() => engine.calls.length === total, 5000, 'every call to arrive');
    const ids = engine.calls.map((c) => c.invocation_id);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(total);
    // Answered newest first: the oldest calls wait while thousands of later ones come and go.
    for (const call of [...engine.calls].reverse()) engine.answer(call.invocation_id, { n: call.data.n });
    const settled = await Promise.all(results);
    expect(settled).toEqual(Array.from({ length: total }, (_, n) => ({ n })));
  });

  it('an answer with an id the worker did not issue settles nothing', async () => {
    const engine = await fakeEngine();
    const w = worker(engine.url);
    await w.waitConnected();
    let settled = false;
    const result = w.trigger({ function_id: 'ids::echo', payload: { n: 7 } }).finally(() => {
      settled = true;
    });
    await waitFor(() => engine.calls.length === 1, 2000, 'the call to arrive');
    const id = (engine.calls[0] as Invoke).invocation_id;
    const forged = [
      `${id.slice(0, 24)}${'f'.repeat(12)}`, // this worker's prefix, a count it never reached
      `00000000-0000-4000-8000-${id.slice(24)}`, // another prefix, the same count
      `${id}0`,
      'not-a-uuid',
    ];
    for (const other of forged) engine.answer(other, 'forged');
    // A marker call answered after the forged ones: once it settles, they have all been read.
    const marker = w.trigger({ function_id: 'ids::echo', payload: { n: 8 } });
    await waitFor(() => engine.calls.length === 2, 2000, 'the marker call to arrive');
    engine.answer((engine.calls[1] as Invoke).invocation_id, 'marker');
    expect(await marker).toBe('marker');
    expect(settled).toBe(false);
    engine.answer(id, 'real');
    expect(await result).toBe('real');
  });
});
