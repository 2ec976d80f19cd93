/**
 * Streaming channels (reference/protocol.md §5.1–5.3): `/ws/channels/<id>` with both SDKs' channel
 * classes and raw sockets.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Engine } from '@flint/engine';
import { type ChannelRef, EngineFunctions } from '@flint/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cleanup } from '../support/cleanup.js';
import { type AnyChannelEnd, SDK_KINDS, type SdkKind, startTestEngine, startWorker } from '../support/harness.js';
import { RawClient, upgradeStatus } from '../support/raw-client.js';
import { waitFor, within } from '../support/util.js';

afterEach(cleanup);

const CHUNKS = 256;
const CHUNK_SIZE = 4096; // 256 × 4 KiB = 1 MiB

/** Chunk i is filled with a pattern that depends on i, so reordering or loss changes the digest. */
function chunk(i: number): Buffer {
  const b = Buffer.alloc(CHUNK_SIZE);
  for (let j = 0; j < CHUNK_SIZE; j++) b[j] = (i * 31 + j) & 0xff;
  b.writeUInt32BE(i, 0);
  return b;
}

const expected = Buffer.concat(Array.from({ length: CHUNKS }, (_, i) => chunk(i)));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function writeAll(writer: AnyChannelEnd): Promise<void> {
  const stream = writer.stream as NodeJS.WritableStream;
  for (let i = 0; i < CHUNKS; i++) {
    if (!stream.write(chunk(i))) await once(stream, 'drain');
  }
  stream.end();
  await once(stream, 'finish');
}

describe.each(SDK_KINDS)('channels with %s', (kind: SdkKind) => {
  let engine: Engine;

  it('carries 1 MiB written in many pieces to the reader in order, then the channel is removed', async () => {
    engine = await startTestEngine();
    const w = await startWorker(kind, engine);
    const { writer, reader } = await w.createChannel();
    expect(engine.stats().channels).toBe(1);
    const received = reader.readAll() as Promise<Buffer>;
    await within(writeAll(writer), 5000, 'writing 1 MiB');
    const data = await within(received, 5000, 'reading 1 MiB');
    expect(data.length).toBe(expected.length);
    expect(sha(data)).toBe(sha(expected));
    await waitFor(() => engine.stats().channels === 0, 2000, 'the channel to be removed');
  });

  it('delivers text messages from sendMessage to onMessage', async () => {
    engine = await startTestEngine();
    const w = await startWorker(kind, engine);
    const { writer, reader } = await w.createChannel();
    const messages: string[] = [];
    reader.onMessage((m: string) => messages.push(m));
    const done = reader.readAll() as Promise<Buffer>;
    writer.sendMessage('{"type":"set_status","status_code":201}');
    writer.sendMessage('second');
    await waitFor(() => messages.length === 2, 2000, 'two messages');
    writer.stream.end();
    const rest = await within(done, 3000, 'end of channel');
    expect(rest.length).toBe(0);
    expect(messages).toEqual(['{"type":"set_status","status_code":201}', 'second']);
    await waitFor(() => engine.stats().channels === 0, 2000, 'the channel to be removed');
  });

  it.each(SDK_KINDS)('hands a reader to a %s worker through a readerRef in the payload', async (consumerKind: SdkKind) => {
    engine = await startTestEngine();
    await startWorker(consumerKind, engine, (x) =>
      x.registerFunction('ch::consume', async (d: { label: string; input: AnyChannelEnd }) => {
        const body = (await d.input.readAll()) as Buffer;
        return { label: d.label, length: body.length, sha: sha(body) };
      }),
    );
    const producer = await startWorker(kind, engine);
    const { writer, readerRef } = await producer.createChannel();
    const result = producer.trigger({ function_id: 'ch::consume', payload: { label: 'upload', input: readerRef } });
    await within(writeAll(writer), 5000, 'writing');
    expect(await within(result, 5000, 'the consumer')).toEqual({ label: 'upload', length: expected.length, sha: sha(expected) });
    await waitFor(() => engine.stats().channels === 0, 2000, 'the channel to be removed');
  });

  it('hands a writer to another worker through a writerRef in the payload', async () => {
    engine = await startTestEngine();
    await startWorker(kind, engine, (x) =>
      x.registerFunction('ch::produce', async (d: { output: AnyChannelEnd; count: number }) => {
        const stream = d.output.stream as NodeJS.WritableStream;
        for (let i = 0; i < d.count; i++) stream.write(Buffer.from(`line ${i}\n`));
        stream.end();
        await once(stream, 'finish');
        return 'written';
      }),
    );
    const caller = await startWorker(kind, engine);
    const { reader, writerRef } = await caller.createChannel();
    const text = (reader.readAll() as Promise<Buffer>).then((b) => b.toString());
    expect(await caller.trigger({ function_id: 'ch::produce', payload: { output: writerRef, count: 100 } })).toBe('written');
    expect(await within(text, 3000, 'reading')).toBe(Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join(''));
  });
});

describe('channel endpoint (raw sockets)', () => {
  let engine: Engine;

  async function createRefs(raw: RawClient): Promise<{ reader: ChannelRef; writer: ChannelRef }> {
    const r = await raw.invoke(EngineFunctions.CREATE_CHANNEL, {});
    expect(r.error).toBeUndefined();
    return r.result as { reader: ChannelRef; writer: ChannelRef };
  }

  const path = (id: string, key: string, dir: string) => `/ws/channels/${encodeURIComponent(id)}?key=${encodeURIComponent(key)}&dir=${dir}`;

  it('engine::channels::create returns a reader and a writer sharing id and key', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const refs = await createRefs(raw);
    expect(refs.reader.direction).toBe('read');
    expect(refs.writer.direction).toBe('write');
    expect(refs.reader.channel_id).toBe(refs.writer.channel_id);
    expect(refs.reader.access_key).toBe(refs.writer.access_key);
    expect(refs.reader.access_key).not.toBe(refs.reader.channel_id);
  });

  it('refuses an unknown channel or a wrong key with 404 and a bad dir with 400', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const { reader } = await createRefs(raw);
    const base = engine.bridgeUrl;
    expect(await upgradeStatus(base + path('00000000-0000-4000-8000-000000000000', reader.access_key, 'read'))).toBe(404);
    expect(await upgradeStatus(base + path(reader.channel_id, 'wrong-key', 'read'))).toBe(404);
    expect(await upgradeStatus(base + path(reader.channel_id, reader.access_key, 'bogus'))).toBe(400);
    // The refusals did not consume the channel: the right key still works.
    const ok = await RawClient.connect(base, path(reader.channel_id, reader.access_key, 'read'));
    expect(ok.isClosed).toBe(false);
  });

  it('closes a second socket for an end that is already taken', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const { reader, writer } = await createRefs(raw);
    const first = await RawClient.connect(engine.bridgeUrl, path(reader.channel_id, reader.access_key, 'read'));
    const second = await RawClient.connect(engine.bridgeUrl, path(reader.channel_id, reader.access_key, 'read'));
    const closed = await within(second.closed, 2000, 'second reader closed');
    expect(closed.code).not.toBe(1000);
    expect(first.isClosed).toBe(false);

    // The first reader still works: text and binary items arrive in order, then a close at the end.
    const w = await RawClient.connect(engine.bridgeUrl, path(writer.channel_id, writer.access_key, 'write'));
    const got: (string | Buffer)[] = [];
    first.ws.on('message', (data, isBinary) => got.push(isBinary ? Buffer.from(data as Buffer) : data.toString()));
    w.ws.send('hello');
    w.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    w.ws.close(1000, 'stream_complete');
    await within(first.closed, 2000, 'reader end of channel');
    expect(got).toEqual(['hello', Buffer.from([1, 2, 3])]);
    await waitFor(() => engine.stats().channels === 0, 2000, 'the channel to be removed');
  });

  it('closes a late socket for a channel that was just removed cleanly (1000); a wrong key still gets 404', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const { reader, writer } = await createRefs(raw);
    const other = await createRefs(raw);
    // Ids are UUID-shaped and distinct per channel; keys are distinct too.
    expect(reader.channel_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(other.reader.channel_id).not.toBe(reader.channel_id);
    expect(other.reader.access_key).not.toBe(reader.access_key);

    const r = await RawClient.connect(engine.bridgeUrl, path(reader.channel_id, reader.access_key, 'read'));
    const w = await RawClient.connect(engine.bridgeUrl, path(writer.channel_id, writer.access_key, 'write'));
    w.ws.close(1000, 'done');
    await within(r.closed, 2000, 'reader end');
    await waitFor(() => engine.stats().channels === 1, 2000, 'the channel to be removed');

    const late = await RawClient.connect(engine.bridgeUrl, path(writer.channel_id, writer.access_key, 'write'));
    expect(await within(late.closed, 2000, 'the late socket to be closed')).toEqual({ code: 1000, reason: 'channel closed' });
    expect(await upgradeStatus(engine.bridgeUrl + path(writer.channel_id, other.writer.access_key, 'write'))).toBe(404);
    expect(await upgradeStatus(engine.bridgeUrl + path(other.writer.channel_id, 'wrong-key', 'write'))).toBe(404);
  });

  it('remembers only the last 16,384 channels: a late socket for an older closed channel gets 404', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const { reader, writer } = await createRefs(raw);
    const r = await RawClient.connect(engine.bridgeUrl, path(reader.channel_id, reader.access_key, 'read'));
    const w = await RawClient.connect(engine.bridgeUrl, path(writer.channel_id, writer.access_key, 'write'));
    w.ws.close(1000, 'done');
    await within(r.closed, 2000, 'reader end');
    await waitFor(() => engine.stats().channels === 0, 2000, 'the channel to be removed');
    for (let i = 0; i < 16_384; i++) await engine.invoke(EngineFunctions.CREATE_CHANNEL, {});
    expect(await upgradeStatus(engine.bridgeUrl + path(writer.channel_id, writer.access_key, 'write'))).toBe(404);
  });

  it('ends the channel for the reader when the writer socket drops', async () => {
    engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const { reader, writer } = await createRefs(raw);
    const r = await RawClient.connect(engine.bridgeUrl, path(reader.channel_id, reader.access_key, 'read'));
    const w = new WebSocket(engine.bridgeUrl + path(writer.channel_id, writer.access_key, 'write'));
    await once(w, 'open');
    w.send(Buffer.from('partial'), { binary: true });
    w.terminate();
    await within(r.closed, 2000, 'reader end');
    await waitFor(() => engine.stats().channels === 0, 2000, 'the channel to be removed');
  });
});
