import { type Attributes, type HrTime, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Span, SpanEvent, SpanLink, SpanStatus } from './span.js';
import { LazySpan } from './span-store.js';

/**
 * What the store keeps of a span the OpenTelemetry SDK ended, until a query reads it: its fields, and its
 * attributes, events and links as the SDK made them (shared, not copied). Keeping this rather than the
 * SDK's span lets the span and its context, times and status objects die young.
 */
export class EndedSpan extends LazySpan {
  readonly trace_id: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly flags: number;
  readonly name: string;
  readonly start: number;
  readonly end_time_unix_nano: number;
  readonly statusCode: number;
  readonly statusMessage: string | undefined;
  readonly attributes: Attributes;
  readonly events: ReadableSpan['events'];
  readonly links: ReadableSpan['links'];
  readonly scope: ReadableSpan['instrumentationScope'];
  readonly serviceName: string;

  constructor(s: ReadableSpan) {
    super();
    const context = s.spanContext();
    this.trace_id = context.traceId;
    this.spanId = context.spanId;
    this.parentSpanId = s.parentSpanContext?.spanId ?? null;
    this.flags = context.traceFlags;
    this.name = s.name;
    this.start = nanos(s.startTime);
    this.end_time_unix_nano = nanos(s.endTime);
    this.statusCode = s.status.code;
    this.statusMessage = s.status.message;
    this.attributes = s.attributes;
    this.events = s.events;
    this.links = s.links;
    this.scope = s.instrumentationScope;
    this.serviceName = String(s.resource.attributes['service.name'] ?? 'unknown');
  }

  protected make(): Span {
    return spanOfEnded(this);
  }
}

/** An ended span as the store gives it to `engine::traces::*`. */
export function spanOfEnded(s: EndedSpan): Span {
  const span: Span = {
    trace_id: s.trace_id,
    span_id: s.spanId,
    parent_span_id: s.parentSpanId,
    name: s.name,
    start_time_unix_nano: s.start,
    end_time_unix_nano: s.end_time_unix_nano,
    status: STATUS[s.statusCode] ?? 'unset',
    attributes: pairsOf(s.attributes),
    service_name: s.serviceName,
    events: s.events.length === 0 ? [] : s.events.map(eventOf),
    links: s.links.length === 0 ? [] : s.links.map(linkOf),
    instrumentation_scope_name: s.scope.name,
    flags: s.flags,
  };
  if (s.statusMessage) span.status_description = s.statusMessage;
  if (s.scope.version !== undefined) span.instrumentation_scope_version = s.scope.version;
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
