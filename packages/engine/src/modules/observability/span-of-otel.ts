import { type Attributes, type HrTime, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Span, SpanEvent, SpanLink, SpanStatus } from './span.js';

/** A span as the store and `engine::traces::*` hold it, from a span the OpenTelemetry SDK ended (or an SDK's). */
export function spanOfOtel(s: ReadableSpan): Span {
  const context = s.spanContext();
  const span: Span = {
    trace_id: context.traceId,
    span_id: context.spanId,
    parent_span_id: s.parentSpanContext?.spanId ?? null,
    name: s.name,
    start_time_unix_nano: nanos(s.startTime),
    end_time_unix_nano: nanos(s.endTime),
    status: STATUS[s.status.code] ?? 'unset',
    attributes: pairsOf(s.attributes),
    service_name: String(s.resource.attributes['service.name'] ?? 'unknown'),
    events: s.events.length === 0 ? [] : s.events.map(eventOf),
    links: s.links.length === 0 ? [] : s.links.map(linkOf),
    instrumentation_scope_name: s.instrumentationScope.name,
    flags: context.traceFlags,
  };
  if (s.status.message) span.status_description = s.status.message;
  if (s.instrumentationScope.version !== undefined) span.instrumentation_scope_version = s.instrumentationScope.version;
  return span;
}

const STATUS: Record<number, SpanStatus> = {
  [SpanStatusCode.UNSET]: 'unset',
  [SpanStatusCode.OK]: 'ok',
  [SpanStatusCode.ERROR]: 'error',
};

/** Nanoseconds since the epoch of an HrTime, in a JS number (exact to about 0.25 µs at today's dates). */
export function nanos(time: HrTime): number {
  return time[0] * 1e9 + time[1];
}

/** Attributes as `[key, text]` pairs: strings as they are, other values as JSON. */
function pairsOf(attributes: Attributes): [string, string][] {
  const pairs: [string, string][] = [];
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined) continue;
    pairs.push([key, typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)]);
  }
  return pairs;
}

function eventOf(e: ReadableSpan['events'][number]): SpanEvent {
  return { name: e.name, timestamp_unix_nano: nanos(e.time), attributes: { ...e.attributes } };
}

function linkOf(l: ReadableSpan['links'][number]): SpanLink {
  const link: SpanLink = { trace_id: l.context.traceId, span_id: l.context.spanId, attributes: { ...l.attributes } };
  const state = l.context.traceState?.serialize();
  if (state) link.trace_state = state;
  return link;
}
