import type { ChannelRef } from '@flint/protocol';
import type { WebSocket } from 'ws';

/** One item of a channel: a text frame or a binary frame. */
export type ChannelItem = { kind: 'text'; text: string } | { kind: 'binary'; data: Buffer };

/** One end of a channel held inside the engine (e.g. by the HTTP module). */
export interface EngineChannel {
  readonly id: string;
  readonly readerRef: ChannelRef;
  readonly writerRef: ChannelRef;
  /** `readerRef` or `writerRef` as JSON text, for a PreparedJson (cheaper than JSON.stringify of the ref). */
  refJson(direction: 'read' | 'write'): string;
  /** Engine writes an item; false means the buffer is full and the writer should wait for `drained()`. */
  write(item: ChannelItem): boolean;
  drained(): Promise<void>;
  end(): void;
  /** Engine reads the next item; null at the end of the channel. */
  read(): Promise<ChannelItem | null>;
  /**
   * Callback form of `read()` for hot paths: `callback` gets the next item (null at the end) at once
   * when one is buffered, else when it arrives. One reader at a time.
   */
  next(callback: (item: ChannelItem | null) => void): void;
  /** True when the channel ended abnormally (its writer dropped, or it was destroyed with an error code). */
  readonly aborted: boolean;
  /** Removes the channel and closes any sockets attached to it (close `code`, default 1000). */
  destroy(reason?: string, code?: number): void;
}

/**
 * The channels of the other engines of a cluster. A socket for a channel this engine does not hold
 * (a worker connected here got the ref of a channel another engine made, e.g. for an HTTP request it
 * serves) is relayed to the engine that holds it.
 */
export interface RemoteChannels {
  /**
   * Takes the `dir` end of channel `id` (checked with `key`) on the engine that holds it; resolves with
   * what serves the socket then, or undefined when no engine holds that end free.
   */
  relay(id: string, key: string | null, dir: 'read' | 'write'): Promise<((ws: WebSocket) => void) | undefined>;
}

export interface ChannelService {
  /**
   * A new channel. With `owner` (the connection id of the worker it is made for), it counts towards
   * that worker's `channels.max_per_worker` until it closes or expires; past the cap this throws a
   * FlintError `too_many_channels`.
   */
  create(bufferSize?: number, owner?: string): EngineChannel;
  /** A reader ref that any number of readers may take and that is always already ended (an empty body). */
  readonly emptyReaderRef: ChannelRef;
}

export interface TelemetryFrame {
  kind: 'OTLP' | 'MTRC' | 'LOGS';
  payload: Buffer;
  receivedAt: number;
}

/**
 * OTLP/MTRC/LOGS frames workers send on the bridge's `/otel` endpoint (or in-band). A module that
 * subscribes consumes telemetry: only while at least one subscription is open does the engine keep
 * frames (within `telemetry.buffer_frames` and `telemetry.buffer_bytes`); with none, every frame is
 * counted (engine.stats()) and dropped at once.
 */
export interface TelemetrySource {
  /** Frames kept while a module is subscribed, oldest first (bounded; oldest dropped first; empty with no subscriber). */
  frames(): readonly TelemetryFrame[];
  /**
   * Consumes telemetry: `listener` gets each new frame, and frames are kept for `frames()`, until the
   * returned function is called (or the module stops). When the last subscription ends, the kept
   * frames are let go. With `keepFrames: false` the subscriber only reads frames as they come (and must
   * not hold on to their payload): frames are kept only while some subscriber asks for them.
   */
  subscribe(listener: (frame: TelemetryFrame) => void, options?: { keepFrames?: boolean }): () => void;
}
