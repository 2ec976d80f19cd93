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
  /**
   * The engine's spans still open, by the traceparent they hand on. Most calls are children of one of
   * them (an HTTP request's call, a worker's nested call carrying the engine's context back): their
   * parent is found here instead of parsing and checking the traceparent text again.
   */
  private readonly open = new Map<string, Scope>();

  constructor(private readonly tracer: Tracer) {}

  start(event: InvocationEvent): TraceScope | undefined {
    if (event.kind === 'invocation' && event.functionId.startsWith('engine::')) return undefined;
    const trigger = event.trigger;
    const firing = event.kind === 'trigger';
    const name = firing ? (event.name ?? `${trigger?.type} ${trigger?.id}`) : `call ${event.functionId}`;
    const kind = firing ? (FIRING_KIND[trigger?.type ?? ''] ?? SpanKind.INTERNAL) : SpanKind.CLIENT;
    // Attributes are set on the span itself, and only when it records: handing them to startSpan would
    // have the SDK copy and check them twice, and an unsampled call needs none.
    const span = this.tracer.startSpan(name, { kind }, this.parentOf(event.traceparent));
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
    const scope = new Scope(span, event.baggage, this.open);
    // A scope left open by mistake must not make the map grow for ever: its children parse instead.
    if (this.open.size >= MAX_OPEN) this.open.clear();
    this.open.set(scope.traceparent, scope);
    return scope;
  }

  /** The context a traceparent names (a remote parent), or the root context when there is none or it is malformed. */
  private parentOf(traceparent: string | undefined): Context {
    if (traceparent === undefined) return ROOT_CONTEXT;
    const scope = this.open.get(traceparent);
    if (scope) return scope.context();
    const parent = parseTraceParent(traceparent);
    return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  }
}

/** Open engine spans kept for their children at most (far above the calls in flight of a busy engine). */
const MAX_OPEN = 100_000;

class Scope implements TraceScope {
  readonly traceparent: string;
  private asParent: Context | undefined;

  constructor(
    private readonly span: OtelSpan,
    readonly baggage: string | undefined,
    private readonly open: Map<string, Scope>,
  ) {
    const c = span.spanContext();
    this.traceparent = `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 1) === 1 ? '01' : '00'}`;
  }

  /** The context whose span is this one, for a child (made once). */
  context(): Context {
    this.asParent ??= trace.setSpan(ROOT_CONTEXT, this.span);
    return this.asParent;
  }

  end(event: InvocationEvent, end: InvocationEnd): void {
    this.open.delete(this.traceparent);
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
