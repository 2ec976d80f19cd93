import { type Attributes, type HrTime, type Link, type SpanContext, SpanKind, type SpanStatus, SpanStatusCode } from '@opentelemetry/api';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { type Json, arrayOf, attributesOf, idOf, isObject, nanosOf, text } from './otlp-json.js';

/** Spans of one `OTLP` frame that could not be read are counted here, the readable ones kept. */
export interface SdkSpanBatch {
  spans: ReadableSpan[];
  rejected: number;
}

/**
 * The spans of an OTLP/JSON `ExportTraceServiceRequest` (what iii-sdk and other SDKs send in `OTLP`
 * frames) as ReadableSpans, so that they go through the same processors as the engine's own: the span
 * store and the OTLP exporter. A span without valid trace and span ids is rejected; the rest is read
 * leniently (a missing time is 0, an unknown kind is internal).
 */
export function readSdkSpans(request: unknown): SdkSpanBatch {
  const spans: ReadableSpan[] = [];
  let rejected = 0;
  for (const rs of arrayOf(isObject(request) ? request.resourceSpans : undefined)) {
    if (!isObject(rs)) continue;
    const resource = resourceFromAttributes(attributesOf(isObject(rs.resource) ? rs.resource.attributes : undefined) as Attributes);
    for (const ss of arrayOf(rs.scopeSpans ?? rs.instrumentationLibrarySpans)) {
      if (!isObject(ss)) continue;
      const scopeJson = isObject(ss.scope) ? ss.scope : isObject(ss.instrumentationLibrary) ? ss.instrumentationLibrary : {};
      const scope = { name: text(scopeJson.name) ?? 'unknown', version: text(scopeJson.version) };
      for (const s of arrayOf(ss.spans)) {
        const span = isObject(s) ? spanOf(s, resource, scope) : undefined;
        if (span) spans.push(span);
        else rejected++;
      }
    }
  }
  return { spans, rejected };
}

function spanOf(s: Json, resource: Resource, instrumentationScope: { name: string; version: string | undefined }): ReadableSpan | undefined {
  const traceId = idOf(s.traceId, 32);
  const spanId = idOf(s.spanId, 16);
  if (!traceId || !spanId) return undefined;
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

function hrTime(nanos: number): HrTime {
  const seconds = Math.floor(nanos / 1e9);
  return [seconds, Math.min(999_999_999, Math.round(nanos - seconds * 1e9))];
}
