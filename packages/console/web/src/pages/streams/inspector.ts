import type { FrameDirection } from './search.js';

/** The most frames the inspector lists (and, separately, holds while paused); the oldest go first. */
export const MAX_FRAMES = 1000;
/** Changes are shown at most this often (a burst of frames is one render). */
const FLUSH_MS = 60;

export interface InspectorFrame {
  seq: number;
  /** When the page received or sent it (ms). */
  at: number;
  dir: FrameDirection;
  /** The event type of an inbound frame (`sync`, `create`, `update`, `delete`, `event`, `unauthorized`), or `join`/`leave` for what the page sent. */
  kind: string;
  /** A custom event's own type (`event` frames). */
  eventType?: string;
  /** The item, or null for the group. */
  id: string | null;
  /** Bytes on the wire (UTF-8). */
  size: number;
  /** The whole frame, parsed (the text when it is not JSON). */
  message: unknown;
}

export type InspectorStatus = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface InspectorCounters {
  /** Frames received from the engine. */
  inbound: number;
  /** Frames the page sent (joins and leaves). */
  outbound: number;
  bytesIn: number;
  bytesOut: number;
}

export interface InspectorSnapshot {
  status: InspectorStatus;
  /** Newest first, at most MAX_FRAMES. */
  frames: InspectorFrame[];
  paused: boolean;
  /** Frames received while paused, waiting to be listed on Resume. */
  held: number;
  /** Frames dropped while paused because more than MAX_FRAMES were waiting. */
  dropped: number;
  /** Counters of this socket (and its earlier connections) since the inspector opened; Clear does not reset them. */
  counters: InspectorCounters;
  /** Bytes of the frames the inspector holds: those listed and those waiting while paused. */
  heldBytes: number;
  /** The WebSocket's `bufferedAmount`: bytes the page sent that are not on the wire yet. */
  socketBuffered: number;
  /** Connections opened (1 after the first). */
  connections: number;
  /** The last close, while reconnecting. */
  lastClose?: { code: number; reason: string };
  /** When the next connection attempt is due (ms), while reconnecting. */
  retryAt?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function describe(message: unknown, dir: FrameDirection): Pick<InspectorFrame, 'kind' | 'eventType' | 'id'> {
  const m = (message && typeof message === 'object' ? message : {}) as Record<string, unknown>;
  if (dir === 'out') {
    const data = (m.data && typeof m.data === 'object' ? m.data : {}) as Record<string, unknown>;
    return { kind: typeof m.type === 'string' ? m.type : 'text', id: typeof data.id === 'string' ? data.id : null };
  }
  const event = (m.event && typeof m.event === 'object' ? m.event : {}) as Record<string, unknown>;
  const custom = (event.event && typeof event.event === 'object' ? event.event : {}) as Record<string, unknown>;
  return {
    kind: typeof event.type === 'string' ? event.type : typeof m.type === 'string' ? m.type : 'text',
    eventType: typeof custom.type === 'string' ? custom.type : undefined,
    id: typeof m.id === 'string' ? m.id : null,
  };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A live inspector of one stream group: a WebSocket to the console's stream proxy (`/_console/streams`,
 * same origin), which joins the group on every (re)connection and keeps the newest MAX_FRAMES frames
 * both ways. Reconnects with a back-off (0.5 s doubling to 10 s) when the socket drops. Paused, frames
 * are still received and counted but held aside (at most MAX_FRAMES, the oldest dropped) and listed on
 * Resume. An external store for `useSyncExternalStore`.
 */
export class StreamInspector {
  private ws: WebSocket | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private attempt = 0;
  private disposed = false;
  private seq = 0;
  private readonly subscriptionId = `console-inspector-${Math.random().toString(36).slice(2, 10)}`;
  private listed: InspectorFrame[] = [];
  /** Frames to add to the list at the next flush (oldest first). */
  private incoming: InspectorFrame[] = [];
  /** Frames received while paused (oldest first). */
  private waiting: InspectorFrame[] = [];
  /** What the changes so far make of the snapshot; published (as `published`) only by flush, so that the counters and the list a render reads always belong together. */
  private draft: InspectorSnapshot = {
    status: 'connecting',
    frames: [],
    paused: false,
    held: 0,
    dropped: 0,
    counters: { inbound: 0, outbound: 0, bytesIn: 0, bytesOut: 0 },
    heldBytes: 0,
    socketBuffered: 0,
    connections: 0,
  };
  private published: InspectorSnapshot = this.draft;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly stream: string,
    readonly group: string,
    /** The console's stream proxy: `ws(s)://<the page's host>/_console/streams`. */
    private readonly url: string,
  ) {
    this.connect();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): InspectorSnapshot => this.published;

  pause(): void {
    if (this.draft.paused) return;
    this.flush();
    this.update({ paused: true });
  }

  resume(): void {
    if (!this.draft.paused) return;
    this.incoming.push(...this.waiting);
    this.waiting = [];
    this.draft = { ...this.draft, paused: false, held: 0, dropped: 0 };
    this.flush();
  }

  /** Empties the list (and what waits while paused); the counters go on. */
  clear(): void {
    this.listed = [];
    this.incoming = [];
    this.waiting = [];
    this.draft = { ...this.draft, held: 0, dropped: 0 };
    this.flush();
  }

  /** Leaves the group and closes the socket for good. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    clearTimeout(this.flushTimer);
    const ws = this.ws;
    this.ws = undefined;
    if (ws?.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ type: 'leave', data: { subscriptionId: this.subscriptionId, streamName: this.stream, groupId: this.group } }));
    }
    ws?.close();
    this.listeners.clear();
  }

  private connect(): void {
    if (this.disposed) return;
    const ws = new WebSocket(this.url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    this.update({ status: this.draft.connections === 0 ? 'connecting' : 'reconnecting' });
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.update({ status: 'open', connections: this.draft.connections + 1, lastClose: undefined, retryAt: undefined });
      this.send({ type: 'join', data: { subscriptionId: this.subscriptionId, streamName: this.stream, groupId: this.group } });
    };
    ws.onmessage = (e: MessageEvent) => {
      if (this.ws !== ws) return;
      const text = typeof e.data === 'string' ? e.data : decoder.decode(e.data as ArrayBuffer);
      const size = typeof e.data === 'string' ? encoder.encode(e.data).byteLength : (e.data as ArrayBuffer).byteLength;
      this.record('in', parse(text), size);
    };
    ws.onclose = (e: { code: number; reason: string }) => {
      if (this.ws !== ws || this.disposed) return;
      const delay = Math.min(10_000, 500 * 2 ** this.attempt++);
      this.update({ status: 'reconnecting', lastClose: { code: e.code, reason: e.reason }, retryAt: Date.now() + delay });
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }

  /** Sends on the open socket; a socket already closing (dropped as it opened) sends nothing: its close starts the reconnection, which joins again. */
  private send(message: unknown): void {
    if (this.ws?.readyState !== WebSocket.OPEN) return;
    const text = JSON.stringify(message);
    this.ws.send(text);
    this.record('out', message, encoder.encode(text).byteLength);
  }

  private record(dir: FrameDirection, message: unknown, size: number): void {
    const frame: InspectorFrame = { seq: ++this.seq, at: Date.now(), dir, size, message, ...describe(message, dir) };
    const c = this.draft.counters;
    const counters =
      dir === 'in' ? { ...c, inbound: c.inbound + 1, bytesIn: c.bytesIn + size } : { ...c, outbound: c.outbound + 1, bytesOut: c.bytesOut + size };
    if (this.draft.paused) {
      this.waiting.push(frame);
      let dropped = this.draft.dropped;
      if (this.waiting.length > MAX_FRAMES) {
        dropped += this.waiting.length - MAX_FRAMES;
        this.waiting.splice(0, this.waiting.length - MAX_FRAMES);
      }
      this.draft = { ...this.draft, counters, held: this.waiting.length, dropped };
    } else {
      this.incoming.push(frame);
      this.draft = { ...this.draft, counters };
    }
    this.schedule();
  }

  private update(patch: Partial<InspectorSnapshot>): void {
    this.draft = { ...this.draft, ...patch };
    this.schedule();
  }

  private schedule(): void {
    if (this.flushTimer !== undefined || this.disposed) return;
    this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Moves the incoming frames into the list and publishes a new snapshot. */
  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.incoming.length > 0) {
      const added = this.incoming.reverse();
      this.incoming = [];
      this.listed = added.concat(this.listed);
      if (this.listed.length > MAX_FRAMES) this.listed = this.listed.slice(0, MAX_FRAMES);
    }
    let bytes = 0;
    for (const f of this.listed) bytes += f.size;
    for (const f of this.waiting) bytes += f.size;
    this.draft = { ...this.draft, frames: this.listed, heldBytes: bytes, socketBuffered: this.ws?.bufferedAmount ?? 0 };
    this.published = this.draft;
    for (const l of this.listeners) l();
  }
}
