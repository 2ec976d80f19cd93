/**
 * Spare channel sockets (Flint addition): a socket opened on `/ws/spare-channel` before a channel
 * exists, bound to a channel end later by its first frame (`bindchannel`). Raw sockets for the wire
 * behaviour, `@flint/sdk` for the pool it keeps.
 */
import { once } from 'node:events';
import { get } from 'node:http';
import type { Engine } from '@flint/engine';
import { type ChannelRef, EngineFunctions, SPARE_CHANNEL_PATH, bindChannelFrame, closeReason } from '@flint/protocol';
import { http, registerWorker } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { startTestEngine } from '../support/harness.js';
import { RawClient, upgradeStatus } from '../support/raw-client.js';
import { sleep, waitFor, within } from '../support/util.js';

afterEach(cleanup);

const channelPath = (ref: ChannelRef) => `/ws/channels/${ref.channel_id}?key=${ref.access_key}&dir=${ref.direction}`;

async function createRefs(raw: RawClient): Promise<{ reader: ChannelRef; writer: ChannelRef }> {
  const r = await raw.invoke(EngineFunctions.CREATE_CHANNEL, {});
  expect(r.error).toBeUndefined();
  return r.result as { reader: ChannelRef; writer: ChannelRef };
}

/** Collects what a channel's reader socket receives until it closes. */
async function readAll(reader: RawClient): Promise<(string | Buffer)[]> {
  const got: (string | Buffer)[] = [];
  reader.ws.on('message', (data, isBinary) => got.push(isBinary ? Buffer.from(data as Buffer) : data.toString()));
  await within(reader.closed, 3000, 'the end of the channel');
  return got;
}

describe('spare channel sockets (raw)', () => {
  let engine: Engine;

  it('says in workerregistered that it takes them', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const registered = await raw.waitFrame((f) => f.type === 'workerregistered');
    expect(registered.spare_channels).toBe(true);
    expect(registered.spare_channel_idle_ms).toBe(60_000);
  });

  it('binds a spare as the writer: the frames sent right behind the bind reach the reader in order', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const { reader, writer } = await createRefs(raw);
    const spare = await RawClient.connect(engine.bridgeUrl, SPARE_CHANNEL_PATH);
    await waitFor(() => engine.stats().spareChannelSockets === 1, 2000, 'the spare to be counted');
    const r = await RawClient.connect(engine.bridgeUrl, channelPath(reader));
    const received = readAll(r);
    // All in one go: the engine must not lose what arrives before it has looked the channel up.
    spare.ws.send(bindChannelFrame(writer));
    spare.ws.send('{"type":"set_headers","headers":{"a":"b"}}');
    for (let i = 0; i < 50; i++) spare.ws.send(Buffer.from([i]), { binary: true });
    spare.ws.close(1000, 'stream_complete');
    const got = await received;
    expect(got[0]).toBe('{"type":"set_headers","headers":{"a":"b"}}');
    expect(Buffer.concat(got.slice(1) as Buffer[])).toEqual(Buffer.from(Array.from({ length: 50 }, (_, i) => i)));
    expect(engine.stats().spareChannelSockets).toBe(0);
    await waitFor(() => engine.stats().channels === 0, 2000, 'the channel to be removed');
  });

  it('binds a spare as the reader', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const { reader, writer } = await createRefs(raw);
    const spare = await RawClient.connect(engine.bridgeUrl, SPARE_CHANNEL_PATH);
    spare.ws.send(bindChannelFrame(reader));
    const received = readAll(spare);
    const w = await RawClient.connect(engine.bridgeUrl, channelPath(writer));
    w.ws.send('text');
    w.ws.send(Buffer.from('bytes'), { binary: true });
    w.ws.close(1000, 'done');
    expect(await received).toEqual(['text', Buffer.from('bytes')]);
    expect(spare.closeInfo?.code).toBe(1000);
  });

  it('closes a spare that binds to no channel (4404), or begins with anything but a bind (4400)', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const { writer } = await createRefs(raw);
    const wrongKey = await RawClient.connect(engine.bridgeUrl, SPARE_CHANNEL_PATH);
    wrongKey.ws.send(bindChannelFrame({ ...writer, access_key: 'wrong-key' }));
    expect(await within(wrongKey.closed, 2000, 'a close')).toEqual({ code: 4404, reason: closeReason(4404) });
    for (const first of ['{"type":"ping"}', 'not json', Buffer.from(bindChannelFrame(writer))]) {
      const spare = await RawClient.connect(engine.bridgeUrl, SPARE_CHANNEL_PATH);
      spare.ws.send(first, { binary: Buffer.isBuffer(first) });
      expect(await within(spare.closed, 2000, 'a close')).toEqual({ code: 4400, reason: closeReason(4400) });
    }
    // None of that touched the channel: a spare with the right key still takes its writer end.
    const spare = await RawClient.connect(engine.bridgeUrl, SPARE_CHANNEL_PATH);
    spare.ws.send(bindChannelFrame(writer));
    const second = await RawClient.connect(engine.bridgeUrl, channelPath(writer));
    expect((await within(second.closed, 2000, 'the second writer to be closed')).code).toBe(1008);
    expect(spare.isClosed).toBe(false);
    expect(engine.stats().spareChannelSockets).toBe(0);
  });

  it('closes a spare nobody binds within bridge.spare_channel_idle_ms (4000)', async () => {
    engine = await startTestEngine({ bridge: { spare_channel_idle_ms: 150 } });
    const spare = await RawClient.connect(engine.bridgeUrl, SPARE_CHANNEL_PATH);
    expect(await within(spare.closed, 2000, 'the idle close')).toEqual({ code: 4000, reason: closeReason(4000, { limit: 150 }) });
    await waitFor(() => engine.stats().spareChannelSockets === 0, 2000, 'the spare to be forgotten');
  });

  it('asks for the bridge token, as worker sockets do', async () => {
    engine = await startTestEngine({ bridge: { auth_token: 's3cret' } });
    expect(await upgradeStatus(engine.bridgeUrl + SPARE_CHANNEL_PATH)).toBe(401);
    const spare = await RawClient.connect(engine.bridgeUrl, SPARE_CHANNEL_PATH, { headers: { authorization: 'Bearer s3cret' } });
    expect(spare.isClosed).toBe(false);
  });
});

describe('spare channel sockets of @flint/sdk', () => {
  /** GET `url`, resolving with the status, content type and body. */
  const fetchText = (url: string) =>
    new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      get(url, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      }).on('error', reject);
    });

  async function sseEngine(): Promise<{ engine: Engine; url: string; worker: ReturnType<typeof registerWorker> }> {
    const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0 } }] });
    const worker = registerWorker(engine.bridgeUrl, { workerName: 'sse' });
    track(() => worker.shutdown());
    worker.registerFunction(
      'sse::count',
      http(async (req, res) => {
        const n = Number(req.query_params.n);
        for (let i = 0; i < n; i++) await res.sse({ id: i, data: { i } });
        res.close();
      }),
    );
    const ref = worker.registerTrigger({ type: 'http', function_id: 'sse::count', config: { api_path: '/count', http_method: 'GET' } });
    await ref.ready;
    const url = engine.listeners().find((l) => l.name === 'http')?.url;
    if (!url) throw new Error('no http listener');
    return { engine, url: `${url}/count`, worker };
  }

  const events = (n: number) => Array.from({ length: n }, (_, i) => `id: ${i}\ndata: {"i":${i}}\n\n`).join('');

  it('keeps a spare once a channel was used, and streams through it', async () => {
    const { engine, url } = await sseEngine();
    expect(engine.stats().spareChannelSockets).toBe(0);
    expect(await fetchText(`${url}?n=3`)).toEqual({ status: 200, type: 'text/event-stream', body: events(3) });
    await waitFor(() => engine.stats().spareChannelSockets === 1, 2000, 'a spare after the first stream');
    for (let round = 0; round < 5; round++) {
      expect(await fetchText(`${url}?n=${(round + 1) * 100}`)).toEqual({ status: 200, type: 'text/event-stream', body: events((round + 1) * 100) });
      // The stream took the spare (bound: no longer counted), and the worker opened the next one.
      await waitFor(() => engine.stats().spareChannelSockets === 1, 2000, 'the spare to be replaced');
    }
  });

  it('grows the pool when streams start together (up to four), and every stream is whole', async () => {
    const { engine, url, worker } = await sseEngine();
    await fetchText(`${url}?n=1`);
    await waitFor(() => engine.stats().spareChannelSockets === 1, 2000, 'a spare after the first stream');
    // Four handlers wait for each other before writing: the first takes the spare, each of the others
    // finds none and asks for one more.
    let arrived = 0;
    let allHere: () => void = () => {};
    const together = new Promise<void>((resolve) => {
      allHere = resolve;
    });
    worker.registerFunction(
      'sse::together',
      http(async (_req, res) => {
        if (++arrived === 4) allHere();
        await together;
        await res.sse({ id: 0, data: { i: 0 } });
        res.close();
      }),
    );
    const base = url.replace(/\/count$/, '');
    await worker.registerTrigger({ type: 'http', function_id: 'sse::together', config: { api_path: '/together', http_method: 'GET' } }).ready;
    const bodies = await Promise.all(Array.from({ length: 4 }, () => fetchText(`${base}/together`)));
    expect(bodies.map((b) => b.body)).toEqual(Array.from({ length: 4 }, () => events(1)));
    await waitFor(() => engine.stats().spareChannelSockets === 4, 2000, 'four spares');
    // Four is the most: more streams at once do not grow it further.
    const more = await Promise.all(Array.from({ length: 8 }, (_, i) => fetchText(`${url}?n=${i * 10}`)));
    expect(more.map((b) => b.body)).toEqual(Array.from({ length: 8 }, (_, i) => events(i * 10)));
    await sleep(200);
    expect(engine.stats().spareChannelSockets).toBe(4);
  });

  it('closes its spares once unused for half of bridge.spare_channel_idle_ms, and when it shuts down', async () => {
    const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0 } }], bridge: { spare_channel_idle_ms: 300 } });
    const worker = registerWorker(engine.bridgeUrl, { workerName: 'idle' });
    track(() => worker.shutdown());
    await worker.waitConnected();
    const { writer, reader } = await worker.createChannel();
    const done = reader.readAll();
    writer.stream.end(Buffer.from('x'));
    expect((await done).toString()).toBe('x');
    await waitFor(() => engine.stats().spareChannelSockets > 0, 2000, 'spares after a channel');
    // Unused for half of spare_channel_idle_ms: the worker closes them itself (before the engine would), and opens no new ones.
    await waitFor(() => engine.stats().spareChannelSockets === 0, 3000, 'the idle spares to be closed');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(engine.stats().spareChannelSockets).toBe(0);
    // The next channel opens its own socket and starts the pool again; shutting down closes it.
    const again = await worker.createChannel();
    const rest = again.reader.readAll();
    again.writer.stream.end(Buffer.from('y'));
    expect((await rest).toString()).toBe('y');
    await waitFor(() => engine.stats().spareChannelSockets > 0, 2000, 'spares again');
    await worker.shutdown();
    await waitFor(() => engine.stats().spareChannelSockets === 0, 2000, 'the spares to close with the worker');
  });

  it('opens a socket per channel against an engine that does not take spares', async () => {
    // The engine says nothing of spares to a worker whose workerregistered frame lacks the field: a
    // relay in front of the bridge strips it, as an older engine would never send it.
    const engine = await startTestEngine();
    const { WebSocketServer, default: WebSocket } = await import('ws');
    const relay = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    track(() => new Promise<void>((resolve) => relay.close(() => resolve())));
    await once(relay, 'listening');
    const upstreams: string[] = [];
    relay.on('connection', (client, req) => {
      upstreams.push(req.url ?? '');
      const up = new WebSocket(engine.bridgeUrl.replace(/\/+$/, '') + (req.url ?? '/'));
      const early: [Buffer, boolean][] = [];
      client.on('message', (d, bin) => (up.readyState === up.OPEN ? up.send(d, { binary: bin }) : early.push([d as Buffer, bin])));
      up.on('open', () => {
        for (const [d, bin] of early) up.send(d, { binary: bin });
      });
      up.on('message', (d, bin) => {
        if (bin) return client.send(d, { binary: true });
        const frame = JSON.parse(d.toString());
        if (frame.type === 'workerregistered') delete frame.spare_channels;
        client.send(JSON.stringify(frame));
      });
      up.on('close', () => client.close());
      client.on('close', () => up.close());
    });
    const port = (relay.address() as { port: number }).port;
    const worker = registerWorker(`ws://127.0.0.1:${port}`, { workerName: 'old-engine' });
    track(() => worker.shutdown());
    await worker.waitConnected();
    for (let i = 0; i < 3; i++) {
      const { writer, reader } = await worker.createChannel();
      const done = reader.readAll();
      writer.stream.end(Buffer.from(`round ${i}`));
      expect((await done).toString()).toBe(`round ${i}`);
    }
    expect(upstreams.filter((u) => u.startsWith(SPARE_CHANNEL_PATH))).toEqual([]);
    expect(upstreams.filter((u) => u.startsWith('/ws/channels/'))).toHaveLength(6);
    expect(engine.stats().spareChannelSockets).toBe(0);
  });
});
