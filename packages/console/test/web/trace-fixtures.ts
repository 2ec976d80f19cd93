/** Hand-built traces for the Traces page's model tests (times in ms from an instant exactly held by a JS number). */
import type { TraceSpan } from '../../src/api-types.js';

export const T0 = 1e15;
const MS = 1e6;

export function span(id: string, parent: string | null, startMs: number, endMs: number, extra: Partial<TraceSpan> = {}): TraceSpan {
  return {
    trace_id: 'abc',
    span_id: id,
    parent_span_id: parent,
    name: `call ${id}`,
    start_time_unix_nano: T0 + startMs * MS,
    end_time_unix_nano: T0 + endMs * MS,
    status: 'ok',
    attributes: [['function_id', `fn::${id}`]],
    service_name: 'flint',
    events: [],
    links: [],
    ...extra,
  };
}

/**
 * root 0–100 ├ a 0–40
 *            ├ b 10–90 ├ c 20–50
 *            │         └ d 55–85
 *            └ e 60–70
 */
export function classicTrace(): TraceSpan[] {
  return [
    span('d', 'b', 55, 85, { service_name: 'db' }),
    span('root', null, 0, 100, { name: 'GET /orders', attributes: [['function_id', 'fn::root']] }),
    span('e', 'root', 60, 70),
    span('b', 'root', 10, 90, { service_name: 'shop' }),
    span('a', 'root', 0, 40, { service_name: 'shop', status: 'error' }),
    span('c', 'b', 20, 50, { service_name: 'db' }),
  ];
}
