/**
 * The Flow page's edges, learned from traces: which function called which, what a function published
 * and who got it, from the span trees of `engine::traces::tree`. Pure functions over spans; see
 * docs/observability.md for the spans the engine makes:
 *
 * - `call <function>` for every call (attribute `function_id`); a worker's `handle <function>` under it;
 * - a trigger firing's span (`GET /orders`, `process orders`, `state:created carts`, `<type> <id>`), with
 *   `flint.trigger.type` and `flint.trigger.id`, and the `call` of the trigger's function under it;
 * - a queue message's delivery `process <topic>` under the publisher's `call flint::durable::publish`
 *   (`messaging.destination.name`), a state trigger's firing under the `call state::set` of the write
 *   (`flint.state.scope`), a named queue's delivery (`enqueue` trigger) under its enqueuer's span.
 */
import type { FlowEdgeKind } from './api-types.js';

/** A span as `engine::traces::list` returns it (the fields used here). */
export interface TraceSpan {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  start_time_unix_nano: number;
  end_time_unix_nano: number;
  status: string;
  status_description?: string;
  attributes: [string, string][];
  service_name: string;
}

/** A span of `engine::traces::tree`, with the spans under it. */
export interface TraceTreeSpan extends TraceSpan {
  children: TraceTreeSpan[];
}

/** One sighting of an edge in one trace. */
export interface EdgeObservation {
  kind: FlowEdgeKind;
  /** Node ids (`fn:…`, `trigger:…`, `topic:…`, `scope:…`). */
  source: string;
  target: string;
  via?: string;
  trace_id: string;
  /** The duration of the span that stands for the edge (the called function's call, the delivery…). */
  duration_ms: number;
  error: boolean;
  /** Epoch milliseconds. */
  start_ms: number;
}

/** What a trace says about a trigger that is not (or no longer) in the registry. */
export interface TriggerSighting {
  trigger_id: string;
  trigger_type: string;
  function_id: string | undefined;
  /** The firing span's name (`GET /orders`, `process orders`…). */
  name: string;
}

export interface TraceEdges {
  observations: EdgeObservation[];
  triggers: TriggerSighting[];
}

/** Functions whose calls hand data to subscribers of a topic or a state scope: shown as topic and scope nodes. */
export const PUBLISH_FUNCTIONS: ReadonlySet<string> = new Set(['flint::durable::publish', 'iii::durable::publish', 'publish']);
export const STATE_WRITE_FUNCTIONS: ReadonlySet<string> = new Set(['state::set', 'state::update', 'state::delete']);

export const fnNode = (id: string) => `fn:${id}`;
export const triggerNode = (id: string) => `trigger:${id}`;
export const topicNode = (name: string) => `topic:${name}`;
export const scopeNode = (name: string) => `scope:${name}`;

const attributeOf = (span: TraceSpan, key: string): string | undefined => {
  for (const [k, v] of span.attributes) if (k === key) return v;
  return undefined;
};

/** A firing span of the walk, for the calls directly under it. */
interface Firing {
  spanId: string;
  triggerId: string;
  triggerType: string;
  functionId: string | undefined;
  /** The function whose work fired it (a named queue's enqueuer), if any. */
  outer: string | undefined;
  queue: string | undefined;
}

/** Where a span sits: the function whose code runs there, and the one that called it. */
interface Frame {
  span: TraceTreeSpan;
  /** The function running here (the nearest `call`/`handle` span above, or this one). */
  fn: string | undefined;
  /** The function that called `fn` (for a publish: the publisher). */
  caller: string | undefined;
  /** The `call` span of `fn`. */
  callSpan: TraceTreeSpan | undefined;
  /** Set on the frames of a firing span's children. */
  firing: Firing | undefined;
}

const durationMs = (s: TraceSpan) => Math.max(0, (s.end_time_unix_nano - s.start_time_unix_nano) / 1e6);

/**
 * Every edge a trace shows (see the top of this file). Calls of a function to itself are left out, and
 * so are calls of a trigger's condition or an HTTP route's middleware. Spans are walked without
 * recursion, so any depth is fine.
 */
export function edgesOfTrace(roots: readonly TraceTreeSpan[]): TraceEdges {
  const observations: EdgeObservation[] = [];
  const triggers = new Map<string, TriggerSighting>();
  // One `publish`/`write` sighting per publishing call and destination, however many subscribers got it.
  const published = new Set<string>();
  const observe = (kind: FlowEdgeKind, source: string, target: string, span: TraceSpan, via?: string) => {
    const o: EdgeObservation = {
      kind,
      source,
      target,
      trace_id: span.trace_id,
      duration_ms: Math.round(durationMs(span) * 1000) / 1000,
      error: span.status === 'error',
      start_ms: Math.round(span.start_time_unix_nano / 1e6),
    };
    if (via !== undefined) o.via = via;
    observations.push(o);
  };

  const stack: Frame[] = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push({ span: roots[i]!, fn: undefined, caller: undefined, callSpan: undefined, firing: undefined });
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const span = frame.span;
    const functionId = attributeOf(span, 'function_id');
    const triggerId = attributeOf(span, 'flint.trigger.id');
    const triggerType = attributeOf(span, 'flint.trigger.type');
    const isCall = functionId !== undefined && span.name === `call ${functionId}`;
    const isHandle = functionId !== undefined && span.name === `handle ${functionId}`;
    // What the children of this span see.
    let child: Omit<Frame, 'span'> = { fn: frame.fn, caller: frame.caller, callSpan: frame.callSpan, firing: undefined };

    if (isCall) {
      const firing = frame.firing;
      if (firing && firing.triggerType === 'enqueue') {
        if (functionId === firing.functionId && firing.outer !== undefined && firing.outer !== functionId)
          observe('enqueue', fnNode(firing.outer), fnNode(functionId), span, firing.queue);
      } else if (firing) {
        // The trigger's function (not its condition or a middleware).
        if (functionId === firing.functionId) observe('trigger', triggerNode(firing.triggerId), fnNode(functionId), span);
      } else if (frame.fn !== undefined && frame.fn !== functionId && !PUBLISH_FUNCTIONS.has(functionId) && !STATE_WRITE_FUNCTIONS.has(functionId)) {
        observe('call', fnNode(frame.fn), fnNode(functionId), span);
      }
      child = { fn: functionId, caller: frame.fn, callSpan: span, firing: undefined };
    } else if (isHandle) {
      if (frame.fn !== functionId) child = { fn: functionId, caller: frame.fn, callSpan: undefined, firing: undefined };
    } else if (triggerId !== undefined && triggerType !== undefined) {
      const target = triggerNode(triggerId);
      if (triggerType !== 'enqueue' && !triggers.has(triggerId))
        triggers.set(triggerId, { trigger_id: triggerId, trigger_type: triggerType, function_id: functionId, name: span.name });
      const topic = attributeOf(span, 'messaging.destination.name');
      const scope = attributeOf(span, 'flint.state.scope');
      const runningFn = frame.fn;
      if (triggerType === 'enqueue') {
        // Handled at the call of the enqueued function, just below.
      } else if (runningFn !== undefined && PUBLISH_FUNCTIONS.has(runningFn) && topic !== undefined) {
        const node = topicNode(topic);
        const key = `${frame.callSpan?.span_id ?? ''}|${node}`;
        if (!published.has(key)) {
          published.add(key);
          if (frame.caller !== undefined && frame.callSpan) observe('publish', fnNode(frame.caller), node, frame.callSpan);
        }
        observe('deliver', node, target, span);
      } else if (runningFn !== undefined && STATE_WRITE_FUNCTIONS.has(runningFn) && scope !== undefined) {
        const node = scopeNode(scope);
        const key = `${frame.callSpan?.span_id ?? ''}|${node}`;
        if (!published.has(key)) {
          published.add(key);
          if (frame.caller !== undefined && frame.callSpan) observe('write', fnNode(frame.caller), node, frame.callSpan);
        }
        observe('deliver', node, target, span);
      } else if (runningFn !== undefined) {
        observe('fires', fnNode(runningFn), target, span);
      } else if (topic !== undefined && attributeOf(span, 'messaging.operation.type') === 'process') {
        // A message published outside any function (the console, a script): the topic still reached the trigger.
        observe('deliver', topicNode(topic), target, span);
      }
      child = {
        fn: frame.fn,
        caller: frame.caller,
        callSpan: frame.callSpan,
        firing: { spanId: span.span_id, triggerId, triggerType, functionId, outer: runningFn, queue: topic },
      };
    }

    for (let i = span.children.length - 1; i >= 0; i--) stack.push({ span: span.children[i]!, ...child });
  }
  return { observations, triggers: [...triggers.values()] };
}

/** The edges' figures, summed over observations. */
export interface EdgeTotals {
  kind: FlowEdgeKind;
  source: string;
  target: string;
  via?: string;
  calls: number;
  errors: number;
  totalMs: number;
  lastTraceId?: string;
  lastErrorTraceId?: string;
  lastSeenMs?: number;
  lastErrorMs?: number;
}

export const edgeId = (source: string, kind: FlowEdgeKind, target: string) => `${source}|${kind}|${target}`;

/** Sums observations per edge (source, kind, target), keeping the newest trace and the newest failed one. */
export function aggregateEdges(observations: Iterable<EdgeObservation>, into = new Map<string, EdgeTotals>()): Map<string, EdgeTotals> {
  for (const o of observations) {
    const id = edgeId(o.source, o.kind, o.target);
    let e = into.get(id);
    if (!e) {
      e = { kind: o.kind, source: o.source, target: o.target, calls: 0, errors: 0, totalMs: 0 };
      if (o.via !== undefined) e.via = o.via;
      into.set(id, e);
    }
    e.calls++;
    e.totalMs += o.duration_ms;
    if (e.lastSeenMs === undefined || o.start_ms >= e.lastSeenMs) {
      e.lastSeenMs = o.start_ms;
      e.lastTraceId = o.trace_id;
    }
    if (o.error) {
      e.errors++;
      if (e.lastErrorMs === undefined || o.start_ms >= e.lastErrorMs) {
        e.lastErrorMs = o.start_ms;
        e.lastErrorTraceId = o.trace_id;
      }
    }
  }
  return into;
}
