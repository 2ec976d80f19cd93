import { closeReason, parseBindChannel } from '@flint/protocol';
import type { RawData, WebSocket } from 'ws';
import { toBuffer } from '../../lib/buffers.js';
import type { RemoteChannels } from '../api/channels.js';
import type { ChannelManager } from '../channels.js';
import type { Logger } from '../logger.js';

/** Serves one end of a channel on a socket that is already open. */
export type ServeEnd = (ws: WebSocket) => void;

/**
 * What a socket asking for a channel end gets: the end (served at once, or once another engine of the
 * cluster answered for it), a clean close for a channel that ended a moment ago, or nothing.
 */
export type ChannelEnd = { kind: 'serve'; serve: ServeEnd } | { kind: 'remote'; serve: Promise<ServeEnd | undefined> } | { kind: 'ended' } | { kind: 'none' };

export interface ChannelEndDeps {
  channels: ChannelManager;
  cluster?: { channels?: RemoteChannels };
}

/** Finds the `dir` end of channel `id` for a socket presenting `key`. */
export function findChannelEnd(deps: ChannelEndDeps, id: string, key: string | null, dir: 'read' | 'write'): ChannelEnd {
  const { channels } = deps;
  const channel = channels.lookup(id, key);
  if (channel) {
    return {
      kind: 'serve',
      serve: (ws) => {
        if (dir === 'read' ? channel.readerTaken : channel.writerTaken) return ws.close(1008, closeReason(1008, { direction: dir }));
        if (dir === 'read') channels.serveReader(channel, ws);
        else channels.serveWriter(channel, ws);
      },
    };
  }
  // A worker arriving just after the engine finished with a channel (e.g. the HTTP client left) gets
  // a clean close instead of an error its stream may not handle.
  if (channels.wasClosed(id, key)) return { kind: 'ended' };
  // Another engine of the cluster may hold it (it made the channel for a call it sent here).
  const remote = deps.cluster?.channels;
  if (remote) return { kind: 'remote', serve: remote.relay(id, key, dir) };
  return { kind: 'none' };
}

/**
 * Serves a spare channel socket (`SPARE_CHANNEL_PATH`, a Flint addition): its first frame must be a
 * `bindchannel` frame naming a channel end, which the socket then serves as if it had been opened for
 * it. The frames the worker sent right behind the bind (a response's head and first bytes) are kept
 * while the end is looked up and handed over in order. A socket not bound within `idleMs` is closed.
 */
export function serveSpareChannel(ws: WebSocket, deps: ChannelEndDeps, idleMs: number, log: Logger): void {
  let queued: [RawData, boolean][] | undefined;
  let waiting = true;
  const unspare = () => {
    if (!waiting) return;
    waiting = false;
    deps.channels.spareSockets--;
    clearTimeout(idle);
  };
  deps.channels.spareSockets++;
  const idle = setTimeout(() => ws.close(4000, closeReason(4000, { limit: idleMs })), idleMs);
  idle.unref();
  const hold = (data: RawData, isBinary: boolean) => {
    queued?.push([data, isBinary]);
  };
  const handOver = (serve: ServeEnd) => {
    ws.off('message', hold);
    serve(ws);
    const frames = queued ?? [];
    queued = undefined;
    for (const [data, isBinary] of frames) ws.emit('message', data, isBinary);
  };
  ws.once('close', unspare);
  ws.on('error', (err) => log.debug(`spare channel socket error: ${err.message}`));
  ws.once('message', (data, isBinary) => {
    unspare();
    const ref = isBinary ? undefined : parseBindChannel(toBuffer(data).toString('utf8'));
    if (!ref) return ws.close(4400, closeReason(4400));
    const end = findChannelEnd(deps, ref.channel_id, ref.access_key, ref.direction);
    switch (end.kind) {
      case 'serve':
        return end.serve(ws);
      case 'ended':
        return ws.close(1000, 'channel closed');
      case 'none':
        return ws.close(4404, closeReason(4404));
      case 'remote': {
        // The worker may have sent its whole body and closed before the other engine answered: its
        // frames and its close are kept, and handed to the end once it is there.
        queued = [];
        let closed: [number, Buffer] | undefined;
        const holdClose = (code: number, reason: Buffer) => {
          closed = [code, reason];
        };
        ws.on('message', hold);
        ws.once('close', holdClose);
        const refuse = () => {
          ws.off('close', holdClose);
          ws.off('message', hold);
          if (!closed) ws.close(4404, closeReason(4404));
        };
        end.serve.then((serve) => {
          if (!serve) return refuse();
          ws.off('close', holdClose);
          handOver(serve);
          if (closed) ws.emit('close', ...closed);
        }, refuse);
      }
    }
  });
}
