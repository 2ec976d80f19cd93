import { once } from 'node:events';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { FLUSH_EVERY, FrameBatcher, HEAVY_TURN_FRAMES } from '@flint/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// A real loopback socket pair: `writer` is what a bridge connection writes to, `received` what the peer
// got. Whether a write has left is read from the writer's own queue (writableLength: bytes held in
// Node, corked or waiting for the kernel), never from a clock.
let server: Server;
let writer: Socket;
let peer: Socket;
let received: string;

beforeEach(async () => {
  server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'connection');
  writer = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await once(writer, 'connect');
  [peer] = (await accepted) as [Socket];
  received = '';
  peer.setEncoding('utf8');
  peer.on('data', (chunk: string) => {
    received += chunk;
  });
});

afterEach(async () => {
  writer.destroy();
  peer.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const microtask = () => new Promise<void>((resolve) => queueMicrotask(resolve));
const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function send(batcher: FrameBatcher, frame: string): void {
  batcher.beforeWrite();
  writer.write(frame);
  batcher.afterWrite();
}

async function waitReceived(text: string): Promise<void> {
  while (received.length < text.length) await once(peer, 'data');
  expect(received).toBe(text);
}

describe('FrameBatcher', () => {
  it('holds a burst while it is being written, then sends it in one write without waiting for the end of the turn', async () => {
    let flushes = 0;
    const batcher = new FrameBatcher(writer, { afterFlush: () => flushes++ });
    send(batcher, 'a');
    send(batcher, 'b');
    send(batcher, 'c');
    expect(writer.writableLength).toBe(3);
    // The promise callbacks of this burst come first (they may write more), then the burst leaves.
    await microtask();
    await microtask();
    expect(writer.writableLength).toBe(0);
    expect(flushes).toBe(1);
    await waitReceived('abc');
  });

  it('firstFrameAhead, idle: the first frame of a turn leaves at once; the rest of its burst follows in one write right after its handling', async () => {
    let flushes = 0;
    const batcher = new FrameBatcher(writer, { afterFlush: () => flushes++, firstFrameAhead: true });
    send(batcher, 'a');
    // Written as it came: the peer can start on it while this process writes the rest.
    expect(writer.writableLength).toBe(0);
    send(batcher, 'b');
    send(batcher, 'c');
    expect(writer.writableLength).toBe(2);
    // The promise callbacks of this burst come first (they may write more), then the rest leaves,
    // without waiting for the end of the turn.
    await microtask();
    await microtask();
    expect(writer.writableLength).toBe(0);
    // Back-pressure is judged after the frame that went ahead and after the rest.
    expect(flushes).toBe(2);
    await waitReceived('abc');
  });

  it('firstFrameAhead, under load (a second burst in the same turn): bursts share one write at the end of the turn until a turn has one burst', async () => {
    let flushes = 0;
    const batcher = new FrameBatcher(writer, { afterFlush: () => flushes++, firstFrameAhead: true });
    send(batcher, '1');
    expect(writer.writableLength).toBe(0);
    await microtask();
    await microtask();
    // A second and a third burst in the same turn: held until the end of the turn, then one write.
    send(batcher, '2');
    await microtask();
    send(batcher, '3');
    await microtask();
    await microtask();
    expect(writer.writableLength).toBe(2);
    await endOfTurn();
    expect(writer.writableLength).toBe(0);
    expect(flushes).toBe(2);
    // The next turn is still under load: its one burst waits for the end of the turn.
    send(batcher, '4');
    await microtask();
    await microtask();
    expect(writer.writableLength).toBe(1);
    await endOfTurn();
    expect(writer.writableLength).toBe(0);
    // That turn had one burst only: idle again, the next turn's first frame leaves as it is written.
    send(batcher, '5');
    expect(writer.writableLength).toBe(0);
    await waitReceived('12345');
  });

  it(`firstFrameAhead: after a heavy turn (${HEAVY_TURN_FRAMES} frames or more) the next turn's first frame waits for its burst`, async () => {
    const batcher = new FrameBatcher(writer, { firstFrameAhead: true });
    const heavy = Array.from({ length: HEAVY_TURN_FRAMES }, (_, i) => `<${i}>`);
    for (const frame of heavy) send(batcher, frame);
    await endOfTurn();
    expect(writer.writableLength).toBe(0);
    send(batcher, 'x');
    send(batcher, 'y');
    expect(writer.writableLength).toBe(2);
    await microtask();
    await microtask();
    expect(writer.writableLength).toBe(0);
    await endOfTurn();
    // That turn was light: the next one's first frame goes ahead again.
    send(batcher, 'z');
    expect(writer.writableLength).toBe(0);
    await waitReceived(`${heavy.join('')}xyz`);
  });

  it(`a burst of ${FLUSH_EVERY} frames leaves at once, in order`, async () => {
    const batcher = new FrameBatcher(writer);
    const frames = Array.from({ length: FLUSH_EVERY + 3 }, (_, i) => `<${i}>`);
    for (const frame of frames.slice(0, FLUSH_EVERY)) send(batcher, frame);
    expect(writer.writableLength).toBe(0);
    for (const frame of frames.slice(FLUSH_EVERY)) send(batcher, frame);
    expect(writer.writableLength).toBeGreaterThan(0);
    await waitReceived(frames.join(''));
  });
});
