import type { Span } from '../../../dist/modules/observability/span.js';

/** The instant the test spans are placed from: 2026-01-01T00:00:00Z, in ms since the epoch. */
export const T0_MS = Date.parse('2026-01-01T00:00:00Z');

/** `ms` milliseconds after T0, in nanoseconds since the epoch. */
export const nanoAt = (ms: number): number => (T0_MS + ms) * 1e6;

export interface SpanSpec {
  trace_id: string;
  span_id: string;
  parent?: string | null;
  name?: string;
  /** Start, ms after T0. */
  start?: number;
  /** End, ms after T0. */
  end?: number;
  status?: Span['status'];
  service?: string;
  attributes?: [string, string][];
}

/** A span with the given fields, the others plain defaults (times in ms after T0). */
export function span(spec: SpanSpec): Span {
  const start = spec.start ?? 0;
  return {
    trace_id: spec.trace_id,
    span_id: spec.span_id,
    parent_span_id: spec.parent ?? null,
    name: spec.name ?? spec.span_id,
    start_time_unix_nano: nanoAt(start),
    end_time_unix_nano: nanoAt(spec.end ?? start + 1),
    status: spec.status ?? 'unset',
    attributes: spec.attributes ?? [],
    service_name: spec.service ?? 'test',
    events: [],
    links: [],
  };
}

/** The size estimate a SpanStore gives a span. */
export { spanSize as sizeOf } from '../../../dist/modules/observability/span-store.js';

/** A deterministic pseudo-random sequence in [0, 1): a 32-bit linear congruential generator. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}
