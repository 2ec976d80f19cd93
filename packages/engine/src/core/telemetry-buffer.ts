import { TELEMETRY_PREFIXES, type TelemetryKind } from '@flint/protocol';
import type { TelemetryFrame, TelemetrySource } from './api/channels.js';

/** Bounded buffer of OTLP/MTRC/LOGS frames received on `/otel`, kept for the observability module. */
export class TelemetryBuffer implements TelemetrySource {
  private readonly buffer: TelemetryFrame[] = [];
  private readonly listeners = new Set<(frame: TelemetryFrame) => void>();
  dropped = 0;
  ignored = 0;

  constructor(private readonly capacity: number) {}

  /** Accepts one binary frame; returns false when it has no known prefix. */
  accept(data: Buffer): boolean {
    const prefix = data.subarray(0, 4).toString('latin1');
    if (!(TELEMETRY_PREFIXES as readonly string[]).includes(prefix)) {
      this.ignored++;
      return false;
    }
    const frame: TelemetryFrame = { kind: prefix as TelemetryKind, payload: data.subarray(4), receivedAt: Date.now() };
    this.buffer.push(frame);
    if (this.buffer.length > this.capacity) {
      this.buffer.shift();
      this.dropped++;
    }
    for (const listener of this.listeners) listener(frame);
    return true;
  }

  frames(): readonly TelemetryFrame[] {
    return this.buffer;
  }

  subscribe(listener: (frame: TelemetryFrame) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
