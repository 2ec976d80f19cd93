import { type Attributes, type HrTime, type SpanContext, type SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import type { AttributeValue } from '../../core/module-api.js';
import type { Span, SpanStatus } from './span.js';
import { LazySpan } from './span-store.js';

/** Where the engine's spans come from: the resource's service name and the instrumentation scope. */
export interface SpanOrigin {
  readonly resource: Resource;
  readonly serviceName: string;
  readonly scope: { readonly name: string; readonly version: string };
}

/**
 * One of the engine's own spans (an invocation or a trigger firing), recorded as plain fields. The engine
 * sets its attributes itself (string, number or boolean values, never more than a few dozen), so it needs
 * none of the checks, limits and context objects of the OpenTelemetry SDK's span; what it records is the
 * same. The store keeps it as it is (a Span is made when a query first reads it) and the OTLP export
 * gets it as a ReadableSpan (`readable`).
 */
export class EngineSpan extends LazySpan {
  end_time_unix_nano = 0;
  status: SpanStatusCode = SpanStatusCode.UNSET;
  statusMessage: string | undefined = undefined;
  /** A failed call's `exception` event: its type and message (at the span's end). */
  exception: { type: string; message: string } | undefined = undefined;
  readonly attributes: Record<string, AttributeValue> = {};

  constructor(
    readonly trace_id: string,
    readonly spanId: string,
    /** Sampled (W3C flags bit 0): always, as only sampled spans are recorded; kept for the flags. */
    readonly flags: number,
    /** The parent's span id (none for the first span of a trace), flags, and whether it lives in another process. */
    readonly parentSpanId: string | undefined,
    readonly parentFlags: number,
    readonly parentRemote: boolean,
    readonly name: string,
    readonly kind: SpanKind,
    readonly start_time_unix_nano: number,
    readonly origin: SpanOrigin,
  ) {
    super();
  }

  protected make(): Span {
    const span: Span = {
      trace_id: this.trace_id,
      span_id: this.spanId,
      parent_span_id: this.parentSpanId ?? null,
      name: this.name,
      start_time_unix_nano: this.start_time_unix_nano,
      end_time_unix_nano: this.end_time_unix_nano,
      status: STATUS[this.status],
      attributes: pairsOf(this.attributes),
      service_name: this.origin.serviceName,
      events: this.exception ? [{ name: 'exception', timestamp_unix_nano: this.end_time_unix_nano, attributes: exceptionAttributes(this.exception) }] : [],
      links: [],
      instrumentation_scope_name: this.origin.scope.name,
      instrumentation_scope_version: this.origin.scope.version,
      flags: this.flags,
    };
    if (this.statusMessage) span.status_description = this.statusMessage;
    return span;
  }

  /** About the length of the span's JSON once stored (as spanSize estimates a Span). */
  size(): number {
    let n = BASE_SIZE + this.name.length + this.origin.serviceName.length + this.origin.scope.name.length;
    if (this.statusMessage !== undefined) n += this.statusMessage.length + 23;
    const attributes = this.attributes;
    for (const key in attributes) {
      const value = attributes[key];
      n += key.length + 8 + (typeof value === 'string' ? value.length : 12);
    }
    return this.exception ? n + 120 : n;
  }

  /** The span as the OpenTelemetry SDK's exporters take it. */
  readable(): ReadableSpan {
    const context: SpanContext = { traceId: this.trace_id, spanId: this.spanId, traceFlags: this.flags };
    const parentId = this.parentSpanId;
    const status: ReadableSpan['status'] = { code: this.status };
    if (this.statusMessage !== undefined) status.message = this.statusMessage;
    const events: TimedEvent[] = this.exception
      ? [{ name: 'exception', time: hrTime(this.end_time_unix_nano), attributes: exceptionAttributes(this.exception), droppedAttributesCount: 0 }]
      : [];
    return {
      name: this.name,
      kind: this.kind,
      spanContext: () => context,
      parentSpanContext:
        parentId === undefined ? undefined : { traceId: this.trace_id, spanId: parentId, traceFlags: this.parentFlags, isRemote: this.parentRemote },
      startTime: hrTime(this.start_time_unix_nano),
      endTime: hrTime(this.end_time_unix_nano),
      duration: hrTime(this.end_time_unix_nano - this.start_time_unix_nano),
      status,
      attributes: { ...this.attributes } as Attributes,
      links: [],
      events,
      ended: true,
      resource: this.origin.resource,
      instrumentationScope: this.origin.scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }
}

/** The JSON text of a stored span with empty strings (see spanSize), plus its 32- and 16-digit ids, parent and scope version. */
const BASE_SIZE = 218 + 32 + 16 + 16 + 40;

const STATUS: Record<SpanStatusCode, SpanStatus> = {
  [SpanStatusCode.UNSET]: 'unset',
  [SpanStatusCode.OK]: 'ok',
  [SpanStatusCode.ERROR]: 'error',
};

function exceptionAttributes(e: { type: string; message: string }): Record<string, string> {
  return { 'exception.type': e.type, 'exception.message': e.message };
}

/** Attributes as `[key, text]` pairs: strings as they are, numbers and booleans as text. */
function pairsOf(attributes: Record<string, AttributeValue>): [string, string][] {
  const pairs: [string, string][] = [];
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null) continue;
    pairs.push([key, typeof value === 'string' ? value : String(value)]);
  }
  return pairs;
}

function hrTime(nanos: number): HrTime {
  const seconds = Math.floor(nanos / 1e9);
  return [seconds, Math.min(999_999_999, Math.max(0, Math.round(nanos - seconds * 1e9)))];
}

/** Re-anchored at most this often (ms of the monotonic clock). */
const ANCHOR_CHECK_MS = 10_000;
/** The wall clock may drift this far from the monotonic one before spans follow it (ms). */
const ANCHOR_DRIFT_MS = 20;

/**
 * Wall-clock nanoseconds of `performance.now()` readings. The monotonic clock gives sub-microsecond spans
 * that never run backwards; it is anchored to the wall clock, and re-anchored when the two drift more than
 * 20 ms apart (an NTP step, a suspended machine), checked at most every 10 s.
 */
export class SpanClock {
  private origin = performance.timeOrigin;
  private checkedAt = performance.now();

  nanos(perfNow: number): number {
    if (perfNow - this.checkedAt > ANCHOR_CHECK_MS) this.check();
    return (this.origin + perfNow) * 1e6;
  }

  private check(): void {
    const now = performance.now();
    this.checkedAt = now;
    const drift = Date.now() - (this.origin + now);
    if (Math.abs(drift) > ANCHOR_DRIFT_MS) this.origin += drift;
  }
}
