import { TELEMETRY_PREFIXES, type TelemetryKind } from '@flint/protocol';
import { errorMessage } from '../lib/errors.js';
import { LogThrottle } from '../lib/log-throttle.js';
import type { TelemetryFrame, TelemetrySource } from './api/channels.js';
import type { Logger } from './logger.js';

export interface TelemetryLimits {
  /** Frames kept at most (`telemetry.buffer_frames`). */
  maxFrames: number;
  /** Bytes of frames kept at most (`telemetry.buffer_bytes`). */
  maxBytes: number;
}

/** What the buffer holds and what it dropped since the engine started (engine.stats()). */
export interface TelemetryCounts {
  frames: number;
  bytes: number;
  droppedFrames: number;
  droppedBytes: number;
}

/** Drops are logged at most this often (debug), after one info line the first time. */
const DROP_LOG_INTERVAL_MS = 60_000;

/**
 * OTLP/MTRC/LOGS frames received on `/otel` (or in-band), for the modules that consume telemetry.
 * Frames are kept only while at least one module is subscribed, within a frame and a byte cap (oldest
 * dropped first); with no subscriber each frame is counted and dropped at once, so a worker sending
 * telemetry to an engine that does not read it costs no memory.
 */
export class TelemetryBuffer implements TelemetrySource {
  private buffer: TelemetryFrame[] = [];
  /** Bytes of the frames in `buffer` (each charged its length on the wire, prefix included). */
  private bytes = 0;
  private readonly listeners = new Set<(frame: TelemetryFrame) => void>();
  /** Subscribers that want frames kept for `frames()`. */
  private keepers = 0;
  private droppedFrames = 0;
  private droppedBytes = 0;
  private toldOnce = false;
  private readonly dropLog = new LogThrottle(DROP_LOG_INTERVAL_MS);
  ignored = 0;

  constructor(
    private readonly limits: TelemetryLimits,
    private readonly logger: Logger,
  ) {}

  get counts(): TelemetryCounts {
    return { frames: this.buffer.length, bytes: this.bytes, droppedFrames: this.droppedFrames, droppedBytes: this.droppedBytes };
  }

  /** Accepts one binary frame; returns false when it has no known prefix (it is not telemetry). */
  accept(data: Buffer): boolean {
    const prefix = data.subarray(0, 4).toString('latin1');
    if (!(TELEMETRY_PREFIXES as readonly string[]).includes(prefix)) {
      this.ignored++;
      return false;
    }
    if (this.listeners.size === 0) {
      this.drop(1, data.length);
      return true;
    }
    const keep = this.keepers > 0 && data.length <= this.limits.maxBytes;
    const payload = data.subarray(4);
    const frame: TelemetryFrame = { kind: prefix as TelemetryKind, payload: keep ? detach(payload) : payload, receivedAt: Date.now() };
    if (keep) this.keep(frame, data.length);
    else if (this.keepers > 0) this.drop(1, data.length);
    for (const listener of this.listeners) {
      try {
        listener(frame);
      } catch (err) {
        this.logger.error(`a telemetry subscriber failed: ${errorMessage(err)}`);
      }
    }
    return true;
  }

  frames(): readonly TelemetryFrame[] {
    return this.buffer;
  }

  subscribe(listener: (frame: TelemetryFrame) => void, options: { keepFrames?: boolean } = {}): () => void {
    const own = (frame: TelemetryFrame) => listener(frame);
    const keeps = options.keepFrames !== false;
    this.listeners.add(own);
    if (keeps) this.keepers++;
    return () => {
      if (!this.listeners.delete(own)) return;
      if (keeps) this.keepers--;
      if (this.keepers > 0) return;
      // Nothing wants frames kept any more: let go of what was kept.
      this.buffer = [];
      this.bytes = 0;
    };
  }

  private keep(frame: TelemetryFrame, size: number): void {
    this.buffer.push(frame);
    this.bytes += size;
    let evictedFrames = 0;
    let evictedBytes = 0;
    while (this.buffer.length > this.limits.maxFrames || this.bytes > this.limits.maxBytes) {
      const oldest = this.buffer.shift() as TelemetryFrame;
      const oldestSize = oldest.payload.length + 4;
      this.bytes -= oldestSize;
      evictedFrames++;
      evictedBytes += oldestSize;
    }
    if (evictedFrames > 0) this.drop(evictedFrames, evictedBytes);
  }

  private drop(frames: number, bytes: number): void {
    this.droppedFrames += frames;
    this.droppedBytes += bytes;
    if (!this.dropLog.due()) return;
    const totals = { dropped_frames: this.droppedFrames, dropped_bytes: this.droppedBytes };
    if (this.listeners.size > 0) {
      this.logger.debug(totals, 'telemetry buffer full (telemetry.buffer_frames, telemetry.buffer_bytes): oldest frames dropped');
    } else if (!this.toldOnce) {
      this.toldOnce = true;
      this.logger.info(totals, 'telemetry from workers is counted and dropped: no module consumes it');
    } else {
      this.logger.debug(totals, 'telemetry dropped: no module consumes it');
    }
  }
}

/**
 * A kept frame gets its own memory: a frame received with others shares their buffer (ws hands out
 * views of the socket's read buffer), which keeping the view would keep alive in full.
 */
function detach(view: Buffer): Buffer {
  if (view.byteOffset === 0 && view.byteLength === view.buffer.byteLength) return view;
  const copy = Buffer.allocUnsafeSlow(view.length);
  view.copy(copy);
  return copy;
}
