import type { ChannelModel } from 'amqplib';

/** What this needs of amqplib's connection (not part of its typed API; checked before use). */
interface Internals {
  connection?: {
    muxer?: { _readIncoming?: (this: unknown) => void };
    stream?: { cork?: () => void; uncork?: () => void };
  };
}

/**
 * Makes amqplib send what its channels queued in one turn as one socket write.
 *
 * amqplib queues each frame (a publish, an ack) in its channel's buffer and, once per turn of the event
 * loop, a multiplexer moves them to the socket with one `write` per frame: under load that is a system
 * call per message, and it was a quarter of the engine's CPU time with the rabbitmq backend. Corking the
 * socket for that move turns them into one `writev`. Nothing is held back: the socket is uncorked before
 * the move returns.
 *
 * amqplib does not expose its multiplexer: when its shape is not the expected one (another version), the
 * connection is left as it is and this returns false.
 */
export function coalesceWrites(model: ChannelModel): boolean {
  const connection = (model as unknown as Internals).connection;
  const muxer = connection?.muxer;
  const stream = connection?.stream;
  const move = muxer?._readIncoming;
  if (!muxer || !stream || typeof move !== 'function' || typeof stream.cork !== 'function' || typeof stream.uncork !== 'function') return false;
  const cork = stream.cork.bind(stream);
  const uncork = stream.uncork.bind(stream);
  muxer._readIncoming = function (this: unknown) {
    cork();
    try {
      move.call(this);
    } finally {
      uncork();
    }
  };
  return true;
}
