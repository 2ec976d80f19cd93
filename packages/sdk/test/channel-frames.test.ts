/**
 * A channel writer's byte stream coalesces: chunks written while an earlier one is on its way leave
 * together as one frame (many small writes, such as SSE events, would otherwise cost a frame and a
 * socket write each on both ends). The bytes and their order are unchanged.
 */
import { once } from 'node:events';
import { channelPath } from '@flint/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cleanup, startTestEngine, startWorker, within } from './support.js';

afterEach(cleanup);

describe('channel writer stream', () => {
  it('sends the chunks written in one go in at most two frames, bytes in order', async () => {
    const engine = await startTestEngine();
    const worker = startWorker(engine.bridgeUrl);
    await worker.waitConnected();
    const channel = await worker.createChannel();
    const reader = new WebSocket(engine.bridgeUrl + channelPath(channel.readerRef));
    const frames: Buffer[] = [];
    reader.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) frames.push(data);
    });
    const closed = once(reader, 'close');
    await once(reader, 'open');

    const chunks = Array.from({ length: 100 }, (_, i) => `event ${i}\n`);
    const stream = channel.writer.stream;
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
    await within(closed, 5000, 'the reader to see the end');

    expect(Buffer.concat(frames).toString('utf8')).toBe(chunks.join(''));
    // The first chunk leaves on its own (it opens the socket); the other 99 wait for it and follow as one.
    expect(frames.length).toBeLessThanOrEqual(2);
  });
});
