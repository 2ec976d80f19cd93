/** Message counters of one stream, or of all of them. */
export interface StreamCounters {
  /** Frames received from clients (joins and leaves). */
  messages_in: number;
  /** Frames sent to clients (syncs, changes, custom events). */
  messages_out: number;
  bytes_in: number;
  bytes_out: number;
  /** Changes and custom events published (set, update, delete, send), from this engine or, when shared, others. */
  events: number;
}

/** What `engine::streams::stats` returns and the `flint:streams:stats` stream carries. */
export interface StreamStatsSnapshot {
  timestamp: number;
  totals: StreamCounters & {
    connections: number;
    subscriptions: number;
    /** Bytes queued for clients and not yet written to their sockets. */
    buffered_bytes: number;
    /** Connections closed with 1013 because they could not keep up. */
    slow_disconnects: number;
  };
  /** Sorted by name. */
  streams: (StreamCounters & { name: string; subscriptions: number })[];
}

/** Streams counted one by one; the rest share the line `OTHER` (names are chosen by clients, so unbounded). */
export const MAX_COUNTED_STREAMS = 1000;
const OTHER = '(other)';

const zero = (): StreamCounters => ({ messages_in: 0, messages_out: 0, bytes_in: 0, bytes_out: 0, events: 0 });

/** The live counters of the stream module on this engine (since it started). */
export class StreamStats {
  private readonly totals = zero();
  private readonly byStream = new Map<string, StreamCounters>();
  private slowDisconnects = 0;

  received(stream: string | undefined, bytes: number): void {
    this.totals.messages_in++;
    this.totals.bytes_in += bytes;
    if (stream === undefined) return;
    const counters = this.of(stream);
    counters.messages_in++;
    counters.bytes_in += bytes;
  }

  /** `count` frames of `bytes` each were sent for `stream`. */
  sent(stream: string, count: number, bytes: number): void {
    if (count === 0) return;
    this.totals.messages_out += count;
    this.totals.bytes_out += count * bytes;
    const counters = this.of(stream);
    counters.messages_out += count;
    counters.bytes_out += count * bytes;
  }

  published(stream: string): void {
    this.totals.events++;
    this.of(stream).events++;
  }

  slowDisconnect(): void {
    this.slowDisconnects++;
  }

  snapshot(live: { connections: number; bufferedBytes: number; subscriptions: Map<string, number> }): StreamStatsSnapshot {
    let subscriptions = 0;
    for (const n of live.subscriptions.values()) subscriptions += n;
    const names = new Set([...this.byStream.keys(), ...live.subscriptions.keys()]);
    return {
      timestamp: Date.now(),
      totals: {
        ...this.totals,
        connections: live.connections,
        subscriptions,
        buffered_bytes: live.bufferedBytes,
        slow_disconnects: this.slowDisconnects,
      },
      streams: [...names].sort().map((name) => ({ name, ...(this.byStream.get(name) ?? zero()), subscriptions: live.subscriptions.get(name) ?? 0 })),
    };
  }

  private of(stream: string): StreamCounters {
    let counters = this.byStream.get(stream);
    if (!counters) {
      const key = this.byStream.size < MAX_COUNTED_STREAMS ? stream : OTHER;
      counters = this.byStream.get(key) ?? zero();
      this.byStream.set(key, counters);
    }
    return counters;
  }
}
