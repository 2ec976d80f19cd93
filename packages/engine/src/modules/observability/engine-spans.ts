import { type Attributes, type SpanContext, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import type { AttributeValue, InvocationEvent, TriggerOrigin } from '../../core/module-api.js';
import { wordHex } from './id-generator.js';
import { hrTime } from './otlp-json.js';
import type { Span, SpanStatus } from './span.js';
import { LazySpan } from './span-store.js';

/** A span's ids as 32-bit words (see PooledIdGenerator): its trace id's four and its own span id's two. */
export interface SpanWords {
  readonly t0: number;
  readonly t1: number;
  readonly t2: number;
  readonly t3: number;
  readonly s0: number;
  readonly s1: number;
}

/** The span a new span runs under, as the tracer found it. */
export interface SpanParent extends SpanWords {
  flags: number;
  /** The parent lives in another process (a caller's traceparent), not in this engine. */
  remote: boolean;
}

/** Where the engine's spans come from: the resource's service name and the instrumentation scope. */
export interface SpanOrigin {
  readonly resource: Resource;
  readonly serviceName: string;
  readonly scope: { readonly name: string; readonly version: string };
}

/**
 * One of the engine's own spans (an invocation or a trigger firing), recorded as plain fields. The engine
 * knows every attribute's type, so it needs none of the checks, limits and context objects of the
 * OpenTelemetry SDK's span; what it records is the same. The attributes are kept as what they come from
 * (function, trigger, caller, worker, the module's own objects) and assembled only when the span is read:
 * most spans of a busy engine pass through the store unread. The store keeps the span as it is (a Span is
 * made when a query first reads it) and the OTLP export gets it as a ReadableSpan (`readable`).
 */
export class EngineSpan extends LazySpan {
  // The ids as 32-bit words: numbers are kept in the object itself, so that a span used again for
  // another (see SpanStoreOptions.recycle) points at no new object. The hex text is made when read.
  t0 = 0;
  t1 = 0;
  t2 = 0;
  t3 = 0;
  s0 = 0;
  s1 = 0;
  /** The parent's span id (when `hasParent`), flags, and whether it lives in another process. */
  p0 = 0;
  p1 = 0;
  hasParent = false;
  parentFlags = 0;
  parentRemote = false;
  /** A trigger firing's span (named by its module, else `<type> <id>`), not an invocation's (`call <function>`). */
  firing = false;
  /** The module's name for a firing (`GET /users/:id`). */
  givenName: string | undefined = undefined;
  kind: SpanKind = SpanKind.INTERNAL;
  start_time_unix_nano = 0;
  functionId = '';
  trigger: TriggerOrigin | undefined = undefined;
  caller: string | undefined = undefined;
  /** What the module said at the start (`http.request.method`, …): its object, kept, not copied. */
  startAttributes: Readonly<Record<string, AttributeValue>> | undefined = undefined;
  end_time_unix_nano = 0;
  status: SpanStatusCode = SpanStatusCode.UNSET;
  /** A failed call's error code (`error.type`, the `exception` event's type) and message. */
  errorCode: string | undefined = undefined;
  errorMessage: string | undefined = undefined;
  /** A trigger firing whose condition said no. */
  skipped = false;
  workerId: string | undefined = undefined;
  workerName: string | undefined = undefined;
  /** What the module learnt by the end (`http.response.status_code`, …): its object, kept, not copied. */
  endAttributes: Readonly<Record<string, AttributeValue>> | undefined = undefined;

  constructor(readonly origin: SpanOrigin) {
    super();
  }

  /**
   * Starts the span for a call or firing: every field is set, so that the object may be one the store
   * dropped (see SpanStoreOptions.recycle). Only sampled spans are recorded.
   */
  open(ids: SpanWords, parent: SpanParent | undefined, firing: boolean, kind: SpanKind, startNanos: number, event: InvocationEvent): this {
    this.forget();
    this.t0 = ids.t0;
    this.t1 = ids.t1;
    this.t2 = ids.t2;
    this.t3 = ids.t3;
    this.s0 = ids.s0;
    this.s1 = ids.s1;
    if (parent) {
      this.p0 = parent.s0;
      this.p1 = parent.s1;
      this.hasParent = true;
      this.parentFlags = parent.flags;
      this.parentRemote = parent.remote;
    } else {
      this.hasParent = false;
      this.parentFlags = 0;
      this.parentRemote = false;
    }
    this.firing = firing;
    this.givenName = firing ? event.name : undefined;
    this.kind = kind;
    this.start_time_unix_nano = startNanos;
    this.functionId = event.functionId;
    this.trigger = event.trigger;
    this.caller = event.caller;
    this.startAttributes = event.attributes;
    this.end_time_unix_nano = startNanos;
    this.status = SpanStatusCode.UNSET;
    this.errorCode = undefined;
    this.errorMessage = undefined;
    this.skipped = false;
    this.workerId = undefined;
    this.workerName = undefined;
    this.endAttributes = undefined;
    return this;
  }

  get trace_id(): string {
    return wordHex(this.t0) + wordHex(this.t1) + wordHex(this.t2) + wordHex(this.t3);
  }

  get spanId(): string {
    return wordHex(this.s0) + wordHex(this.s1);
  }

  /** The parent's span id; none for the first span of a trace. */
  get parentSpanId(): string | undefined {
    return this.hasParent ? wordHex(this.p0) + wordHex(this.p1) : undefined;
  }

  /** A firing's name (its module's, else `<type> <id>`); `call <function>` for an invocation. */
  get name(): string {
    if (!this.firing) return `call ${this.functionId}`;
    return this.givenName ?? `${this.trigger?.type} ${this.trigger?.id}`;
  }

  /** `code: message` of a failed call. */
  get statusMessage(): string | undefined {
    return this.errorCode === undefined ? undefined : `${this.errorCode}: ${this.errorMessage ?? ''}`;
  }

  /**
   * The span's attributes, in the order they were learnt: the function and trigger (OpenTelemetry's FaaS
   * conventions and Flint's own), the caller, the module's, the worker that ran it, the module's at the
   * end, then the error type or `flint.skipped`.
   */
  get attributes(): Record<string, AttributeValue> {
    const { functionId, trigger, caller, startAttributes, workerId, workerName } = this;
    const a: Record<string, AttributeValue> = { 'faas.invoked_name': functionId, function_id: functionId };
    if (trigger) {
      a['faas.trigger'] = FAAS_TRIGGER[trigger.type] ?? 'other';
      a['flint.trigger.type'] = trigger.type;
      a['flint.trigger.id'] = trigger.id;
    } else a['faas.trigger'] = 'other';
    if (caller !== undefined) a['flint.caller'] = caller;
    if (startAttributes) Object.assign(a, startAttributes);
    if (workerId !== undefined) {
      a['flint.worker.id'] = workerId;
      if (workerName !== undefined) a['flint.worker.name'] = workerName;
    }
    if (this.endAttributes) Object.assign(a, this.endAttributes);
    if (this.errorCode !== undefined) a['error.type'] = this.errorCode;
    else if (this.skipped) a['flint.skipped'] = true;
    return a;
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
      events: this.errorCode !== undefined ? [{ name: 'exception', timestamp_unix_nano: this.end_time_unix_nano, attributes: this.exceptionAttributes() }] : [],
      links: [],
      instrumentation_scope_name: this.origin.scope.name,
      instrumentation_scope_version: this.origin.scope.version,
      flags: SAMPLED,
    };
    const description = this.statusMessage;
    if (description) span.status_description = description;
    return span;
  }

  /** About the length of the span's JSON once stored (as spanSize estimates a Span), without assembling it. */
  size(): number {
    const { functionId, trigger, caller, startAttributes, workerId, workerName } = this;
    let n = BASE_SIZE + this.nameLength() + this.origin.serviceName.length + this.origin.scope.name.length;
    // faas.invoked_name, function_id and faas.trigger (its value at most 10 characters).
    n += 2 * functionId.length + 74;
    if (trigger) n += trigger.type.length + trigger.id.length + 42;
    if (caller !== undefined) n += caller.length + 19;
    if (workerId !== undefined) n += workerId.length + 22;
    if (workerName !== undefined) n += workerName.length + 24;
    if (startAttributes) n += attributesSize(startAttributes);
    if (this.endAttributes) n += attributesSize(this.endAttributes);
    // A failure: its status description (`code: message`), its error.type and its exception event.
    if (this.errorCode !== undefined) n += 2 * this.errorCode.length + (this.errorMessage?.length ?? 0) + 25 + 18 + 120;
    else if (this.skipped) n += 25;
    return n;
  }

  /** The length of `name`, without making it. */
  private nameLength(): number {
    if (!this.firing) return 5 + this.functionId.length;
    if (this.givenName !== undefined) return this.givenName.length;
    return this.name.length;
  }

  private exceptionAttributes(): Record<string, string> {
    return { 'exception.type': this.errorCode ?? '', 'exception.message': this.errorMessage ?? '' };
  }

  /** The span as the OpenTelemetry SDK's exporters take it. */
  readable(): ReadableSpan {
    const traceId = this.trace_id;
    const context: SpanContext = { traceId, spanId: this.spanId, traceFlags: SAMPLED };
    const parentId = this.parentSpanId;
    const status: ReadableSpan['status'] = { code: this.status };
    const message = this.statusMessage;
    if (message !== undefined) status.message = message;
    const events: TimedEvent[] =
      this.errorCode !== undefined
        ? [{ name: 'exception', time: hrTime(this.end_time_unix_nano), attributes: this.exceptionAttributes(), droppedAttributesCount: 0 }]
        : [];
    return {
      name: this.name,
      kind: this.kind,
      spanContext: () => context,
      parentSpanContext: parentId === undefined ? undefined : { traceId, spanId: parentId, traceFlags: this.parentFlags, isRemote: this.parentRemote },
      startTime: hrTime(this.start_time_unix_nano),
      endTime: hrTime(this.end_time_unix_nano),
      duration: hrTime(this.end_time_unix_nano - this.start_time_unix_nano),
      status,
      attributes: this.attributes as Attributes,
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

/** W3C trace flags of a recorded span: sampled. */
const SAMPLED = 1;

/** The JSON text of a stored span with empty strings (see spanSize), plus its 32- and 16-digit ids, parent and scope version. */
const BASE_SIZE = 218 + 32 + 16 + 16 + 40;

const STATUS: Record<SpanStatusCode, SpanStatus> = {
  [SpanStatusCode.UNSET]: 'unset',
  [SpanStatusCode.OK]: 'ok',
  [SpanStatusCode.ERROR]: 'error',
};

/** The `faas.trigger` value (OpenTelemetry's FaaS conventions) of each trigger type. */
const FAAS_TRIGGER: Readonly<Record<string, string>> = {
  http: 'http',
  'durable:subscriber': 'pubsub',
  enqueue: 'pubsub',
  cron: 'timer',
  state: 'datasource',
};

/** What attributes add to a span's JSON (as spanSize counts them). */
function attributesSize(attributes: Readonly<Record<string, AttributeValue>>): number {
  let n = 0;
  for (const key in attributes) {
    const value = attributes[key];
    n += key.length + 8 + (typeof value === 'string' ? value.length : 12);
  }
  return n;
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

  /** Wall-clock nanoseconds of a `performance.now()` reading taken just before. */
  nanos(perfNow: number): number {
    if (perfNow - this.checkedAt > ANCHOR_CHECK_MS) this.check(perfNow);
    return (this.origin + perfNow) * 1e6;
  }

  private check(perfNow: number): void {
    this.checkedAt = perfNow;
    const drift = Date.now() - (this.origin + perfNow);
    if (Math.abs(drift) > ANCHOR_DRIFT_MS) this.origin += drift;
  }
}
