import { type Attributes, type Link, type SpanContext, SpanKind, type SpanStatus, SpanStatusCode } from '@opentelemetry/api';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { type Json, arrayOf, attributesOf, hrTime, idOf, isObject, nanosOf, text } from './otlp-json.js';
import type { Span } from './span.js';
import { LazySpan } from './span-store.js';

/** The resource and scope a span of an SDK's frame was sent under (shared by the spans of one batch). */
export interface SdkSpanOrigin {
  attributes: Record<string, unknown>;
  serviceName: string;
  scope: { name: string; version: string | undefined };
  /** Made on first use, for the OTLP export. */
  resource?: Resource;
}

/** One span of an SDK's frame whose ids are valid, as sent (OTLP/JSON), with its origin; a Span once read. */
export class SdkSpan extends LazySpan {
  readonly end_time_unix_nano: number;

  constructor(
    readonly json: Json,
    readonly trace_id: string,
    readonly spanId: string,
    readonly origin: SdkSpanOrigin,
  ) {
    super();
    this.end_time_unix_nano = Math.max(nanosOf(json.startTimeUnixNano), nanosOf(json.endTimeUnixNano));
  }

  protected make(): Span {
    return spanOfSdk(this);
  }
}

/**
 * Calls `visit` for each span of an OTLP/JSON `ExportTraceServiceRequest` (what iii-sdk, @flint/sdk and
 * other SDKs send in `OTLP` frames) that has valid trace and span ids; returns how many it rejected.
 * Nothing is converted here: the span store keeps the JSON as it came (see spanOfSdk), and only an OTLP
 * export builds ReadableSpans (readableOfSdk).
 */
export function forEachSdkSpan(request: unknown, visit: (span: SdkSpan) => void): number {
  let rejected = 0;
  for (const rs of arrayOf(isObject(request) ? request.resourceSpans : undefined)) {
    if (!isObject(rs)) continue;
    const attributes = attributesOf(isObject(rs.resource) ? rs.resource.attributes : undefined);
    const serviceName = typeof attributes['service.name'] === 'string' ? attributes['service.name'] : 'unknown';
    for (const ss of arrayOf(rs.scopeSpans ?? rs.instrumentationLibrarySpans)) {
      if (!isObject(ss)) continue;
      const scopeJson = isObject(ss.scope) ? ss.scope : isObject(ss.instrumentationLibrary) ? ss.instrumentationLibrary : {};
      const origin: SdkSpanOrigin = { attributes, serviceName, scope: { name: text(scopeJson.name) ?? 'unknown', version: text(scopeJson.version) } };
      for (const s of arrayOf(ss.spans)) {
        const traceId = isObject(s) ? idOf(s.traceId, 32) : undefined;
        const spanId = traceId && isObject(s) ? idOf(s.spanId, 16) : undefined;
        if (traceId && spanId) visit(new SdkSpan(s as Json, traceId, spanId, origin));
        else rejected++;
      }
    }
  }
  return rejected;
}

/** An SDK's span as the store and `engine::traces::*` give it. */
export function spanOfSdk(span: SdkSpan): Span {
  const s = span.json;
  const status = isObject(s.status) ? s.status : {};
  const out: Span = {
    trace_id: span.trace_id,
    span_id: span.spanId,
    parent_span_id: idOf(s.parentSpanId, 16) ?? null,
    name: text(s.name) ?? '(unnamed)',
    start_time_unix_nano: nanosOf(s.startTimeUnixNano),
    end_time_unix_nano: span.end_time_unix_nano,
    status: STATUS_TEXT[statusCode(status.code)] ?? 'unset',
    attributes: Object.entries(attributesOf(s.attributes)).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    service_name: span.origin.serviceName,
    events: arrayOf(s.events).flatMap((e) =>
      isObject(e) ? [{ name: text(e.name) ?? 'event', timestamp_unix_nano: nanosOf(e.timeUnixNano), attributes: attributesOf(e.attributes) }] : [],
    ),
    links: arrayOf(s.links).flatMap((l) => {
      if (!isObject(l)) return [];
      const traceId = idOf(l.traceId, 32);
      const spanId = idOf(l.spanId, 16);
      return traceId && spanId ? [{ trace_id: traceId, span_id: spanId, attributes: attributesOf(l.attributes) }] : [];
    }),
    instrumentation_scope_name: span.origin.scope.name,
    flags: typeof s.flags === 'number' ? (s.flags & 0xff) | 1 : 1,
  };
  const message = text(status.message);
  if (message) out.status_description = message;
  if (span.origin.scope.version !== undefined) out.instrumentation_scope_version = span.origin.scope.version;
  return out;
}

/** About the length of the span's JSON once stored (see spanSize), from the JSON it came in. */
export function sdkSpanSize(span: SdkSpan): number {
  const s = span.json;
  let n = 218 + 32 + 16 + 16 + 60 + span.origin.serviceName.length + span.origin.scope.name.length;
  if (typeof s.name === 'string') n += s.name.length;
  for (const kv of arrayOf(s.attributes)) {
    if (!isObject(kv) || typeof kv.key !== 'string') continue;
    const v = isObject(kv.value) ? kv.value.stringValue : undefined;
    n += kv.key.length + 8 + (typeof v === 'string' ? v.length : 12);
  }
  const more = arrayOf(s.events).length + arrayOf(s.links).length;
  return more > 0 ? n + 120 * more : n;
}

const STATUS_TEXT: Record<number, Span['status']> = { 0: 'unset', 1: 'ok', 2: 'error' };

function statusCode(code: unknown): SpanStatusCode {
  if (code === 1 || code === 'STATUS_CODE_OK') return SpanStatusCode.OK;
  if (code === 2 || code === 'STATUS_CODE_ERROR') return SpanStatusCode.ERROR;
  return SpanStatusCode.UNSET;
}

/** An SDK's span as a ReadableSpan, for the OTLP export (the same processor as the engine's own). */
export function readableOfSdk(span: SdkSpan): ReadableSpan {
  span.origin.resource ??= resourceFromAttributes(span.origin.attributes as Attributes);
  return spanOf(span.json, span.trace_id, span.spanId, span.origin.resource, span.origin.scope);
}

function spanOf(
  s: Json,
  traceId: string,
  spanId: string,
  resource: Resource,
  instrumentationScope: { name: string; version: string | undefined },
): ReadableSpan {
  const flags = typeof s.flags === 'number' ? s.flags & 0xff : 1;
  const context: SpanContext = { traceId, spanId, traceFlags: flags | 1, traceState: undefined };
  const parentId = idOf(s.parentSpanId, 16);
  const startNanos = nanosOf(s.startTimeUnixNano);
  const endNanos = Math.max(startNanos, nanosOf(s.endTimeUnixNano));
  const status = isObject(s.status) ? s.status : {};
  const code =
    status.code === 1 || status.code === 'STATUS_CODE_OK'
      ? SpanStatusCode.OK
      : status.code === 2 || status.code === 'STATUS_CODE_ERROR'
        ? SpanStatusCode.ERROR
        : SpanStatusCode.UNSET;
  const spanStatus: SpanStatus = { code };
  const message = text(status.message);
  if (message) spanStatus.message = message;
  return {
    name: text(s.name) ?? '(unnamed)',
    kind: kindOf(s.kind),
    spanContext: () => context,
    parentSpanContext: parentId ? { traceId, spanId: parentId, traceFlags: 1, isRemote: true } : undefined,
    startTime: hrTime(startNanos),
    endTime: hrTime(endNanos),
    duration: hrTime(endNanos - startNanos),
    status: spanStatus,
    attributes: attributesOf(s.attributes) as Attributes,
    links: arrayOf(s.links).flatMap((l) => linkOf(l)),
    events: arrayOf(s.events).flatMap((e) => eventOf(e)),
    ended: true,
    resource,
    instrumentationScope,
    droppedAttributesCount: numberOf(s.droppedAttributesCount),
    droppedEventsCount: numberOf(s.droppedEventsCount),
    droppedLinksCount: numberOf(s.droppedLinksCount),
  };
}

/** OTLP's kind (0 unspecified, 1 internal … 5 consumer, or its enum name) as the API's (0 internal … 4 consumer). */
function kindOf(kind: unknown): SpanKind {
  const names = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];
  const n = typeof kind === 'number' ? kind : typeof kind === 'string' ? names.indexOf(kind) : 0;
  return n >= 2 && n <= 5 ? ((n - 1) as SpanKind) : SpanKind.INTERNAL;
}

function eventOf(e: unknown): TimedEvent[] {
  if (!isObject(e)) return [];
  return [
    { name: text(e.name) ?? 'event', time: hrTime(nanosOf(e.timeUnixNano)), attributes: attributesOf(e.attributes) as Attributes, droppedAttributesCount: 0 },
  ];
}

function linkOf(l: unknown): Link[] {
  if (!isObject(l)) return [];
  const traceId = idOf(l.traceId, 32);
  const spanId = idOf(l.spanId, 16);
  if (!traceId || !spanId) return [];
  return [{ context: { traceId, spanId, traceFlags: 1 }, attributes: attributesOf(l.attributes) as Attributes }];
}

function numberOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
