import { type Context, type Span as OtelSpan, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import type { InvocationEnd, InvocationEvent, InvocationTracer, TraceScope } from '../../core/module-api.js';

/** The `faas.trigger` value (OpenTelemetry's FaaS conventions) of each trigger type. */
const FAAS_TRIGGER: Readonly<Record<string, string>> = {
  http: 'http',
  'durable:subscriber': 'pubsub',
  enqueue: 'pubsub',
  cron: 'timer',
  state: 'datasource',
};

/** Firings of these trigger types open spans of these kinds (a message delivery consumes); the rest are internal. */
const FIRING_KIND: Readonly<Record<string, SpanKind>> = {
  http: SpanKind.SERVER,
  'durable:subscriber': SpanKind.CONSUMER,
  enqueue: SpanKind.CONSUMER,
};

/**
 * The engine's spans, one per invocation (`call <function>`, a client span: the engine calls the
 * provider) and one per trigger firing (named by the module, e.g. `GET /users/:id`, else `<type> <id>`),
 * opened with the OpenTelemetry SDK's tracer under the context the call came with. The span's own
 * context is what the call carries on, so a worker's spans and nested calls sit under it.
 *
 * The engine's introspection functions (`engine::*`: log calls, listings, the console's queries) are
 * not traced: they would bury the application's traces.
 */
export class EngineTracer implements InvocationTracer {
  constructor(private readonly tracer: Tracer) {}

  start(event: InvocationEvent): TraceScope | undefined {
    if (event.kind === 'invocation' && event.functionId.startsWith('engine::')) return undefined;
    const trigger = event.trigger;
    const firing = event.kind === 'trigger';
    const name = firing ? (event.name ?? `${trigger?.type} ${trigger?.id}`) : `call ${event.functionId}`;
    const kind = firing ? (FIRING_KIND[trigger?.type ?? ''] ?? SpanKind.INTERNAL) : SpanKind.CLIENT;
    // Attributes are set on the span itself, and only when it records: handing them to startSpan would
    // have the SDK copy and check them twice, and an unsampled call needs none.
    const span = this.tracer.startSpan(name, { kind }, parentOf(event.traceparent));
    if (span.isRecording()) {
      span.setAttribute('faas.invoked_name', event.functionId);
      span.setAttribute('function_id', event.functionId);
      if (trigger) {
        span.setAttribute('faas.trigger', FAAS_TRIGGER[trigger.type] ?? 'other');
        span.setAttribute('flint.trigger.type', trigger.type);
        span.setAttribute('flint.trigger.id', trigger.id);
      } else span.setAttribute('faas.trigger', 'other');
      if (event.caller !== undefined) span.setAttribute('flint.caller', event.caller);
      if (event.attributes) span.setAttributes(event.attributes);
    }
    return new Scope(span, event.baggage);
  }
}

class Scope implements TraceScope {
  readonly traceparent: string;

  constructor(
    private readonly span: OtelSpan,
    readonly baggage: string | undefined,
  ) {
    const c = span.spanContext();
    this.traceparent = `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 1) === 1 ? '01' : '00'}`;
  }

  end(event: InvocationEvent, end: InvocationEnd): void {
    const span = this.span;
    if (!span.isRecording()) return span.end();
    if (event.workerId !== undefined) {
      span.setAttribute('flint.worker.id', event.workerId);
      if (event.workerName !== undefined) span.setAttribute('flint.worker.name', event.workerName);
    }
    if (end.attributes) span.setAttributes(end.attributes);
    if (end.error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: `${end.error.code}: ${end.error.message}` });
      span.setAttribute('error.type', end.error.code);
      span.addEvent('exception', { 'exception.type': end.error.code, 'exception.message': end.error.message });
    } else {
      if (end.skipped) span.setAttribute('flint.skipped', true);
      span.setStatus({ code: SpanStatusCode.OK });
    }
    span.end();
  }
}

/** The context a traceparent names (a remote parent), or the root context when there is none or it is malformed. */
function parentOf(traceparent: string | undefined): Context {
  if (traceparent === undefined) return ROOT_CONTEXT;
  const parent = parseTraceParent(traceparent);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}
