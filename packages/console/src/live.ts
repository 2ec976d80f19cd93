import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { LiveEvent } from './api-types.js';
import type { EngineLink } from './engine-link.js';

/** Events are gathered for this long and sent as one burst, duplicates merged (a bulk import is one refresh). */
const COALESCE_MS = 100;
/** A page that does not read its socket is dropped rather than buffered without end. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

const keyOf = (e: LiveEvent): string => (e.type === 'state' ? `state:${e.scope}` : e.type);

/** WS /_console/live: pushes registry, state and bridge changes to every open page. */
export class LiveHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  private pending = new Map<string, LiveEvent>();
  private timer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;

  constructor(private readonly link: EngineLink) {
    this.unsubscribe = link.onEvent((event) => this.queue(event));
    // Pages only listen; anything they send is ignored.
    this.wss.on('connection', (ws) => {
      ws.send(JSON.stringify({ type: 'bridge', state: this.link.bridgeState } satisfies LiveEvent));
      ws.on('error', () => ws.terminate());
    });
  }

  get clients(): number {
    return this.wss.clients.size;
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  close(): void {
    this.unsubscribe();
    clearTimeout(this.timer);
    for (const ws of this.wss.clients) ws.close(1001, 'console stopping');
    this.wss.close();
  }

  private queue(event: LiveEvent): void {
    if (event.type === 'bridge') {
      // The connection pill changes at once.
      this.send([event]);
      return;
    }
    this.pending.set(keyOf(event), event);
    this.timer ??= setTimeout(() => this.flush(), COALESCE_MS);
  }

  private flush(): void {
    this.timer = undefined;
    const events = [...this.pending.values()];
    this.pending = new Map();
    this.send(events);
  }

  private send(events: LiveEvent[]): void {
    const frames = events.map((e) => JSON.stringify(e));
    for (const ws of this.wss.clients) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        ws.terminate();
        continue;
      }
      for (const frame of frames) ws.send(frame);
    }
  }
}
