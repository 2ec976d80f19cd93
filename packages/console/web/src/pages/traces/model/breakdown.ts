/** Where a trace's time went, by service and by function (pure: no DOM). */
import { type TraceModel, operationOf } from './tree.js';

export interface BreakdownRow {
  /** `service` for a service row; `service` + NUL + `operation` for a function row. */
  key: string;
  service: string;
  /** The function id (or span name) of a function row; undefined for a service row. */
  operation?: string;
  /** Spans counted. */
  count: number;
  errors: number;
  /** The sum of the spans' durations (ns); nested spans of one service count more than once. */
  totalNs: number;
  /** The sum of the spans' self times (ns): time in the span while no child of it ran. Adds up to at most the trace's work. */
  selfNs: number;
  /** The longest span (ns). */
  maxNs: number;
}

export interface Breakdown {
  services: BreakdownRow[];
  functions: BreakdownRow[];
  /** The sum of all self times (ns): the denominator of the shares. */
  selfTotalNs: number;
}

/** Time per service and per function, each list by self time, largest first (then by key). */
export function serviceBreakdown(model: TraceModel): Breakdown {
  const services = new Map<string, BreakdownRow>();
  const functions = new Map<string, BreakdownRow>();
  let selfTotalNs = 0;
  const add = (map: Map<string, BreakdownRow>, key: string, service: string, operation: string | undefined, duration: number, self: number, error: boolean) => {
    let row = map.get(key);
    if (!row) {
      row = { key, service, count: 0, errors: 0, totalNs: 0, selfNs: 0, maxNs: 0 };
      if (operation !== undefined) row.operation = operation;
      map.set(key, row);
    }
    row.count++;
    if (error) row.errors++;
    row.totalNs += duration;
    row.selfNs += self;
    if (duration > row.maxNs) row.maxNs = duration;
  };
  for (const node of model.nodes) {
    const service = node.span.service_name;
    const operation = operationOf(node.span);
    const duration = node.end - node.start;
    const error = node.span.status === 'error';
    selfTotalNs += node.self;
    add(services, service, service, undefined, duration, node.self, error);
    add(functions, `${service}\u0000${operation}`, service, operation, duration, node.self, error);
  }
  const order = (a: BreakdownRow, b: BreakdownRow) => b.selfNs - a.selfNs || b.totalNs - a.totalNs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  return { services: [...services.values()].sort(order), functions: [...functions.values()].sort(order), selfTotalNs };
}
