import { FlintError } from '@flint/sdk';
import type { MetricsResponse, RecentError, RecentErrorsResponse } from '../api-types.js';
import type { TraceSpan } from '../flow-edges.js';
import type { Route } from '../http/router.js';
import { metricsHistoryOf } from '../metrics-history.js';
import { queryInt } from './fields.js';

const attributeOf = (span: TraceSpan, key: string): string | null => span.attributes.find(([k]) => k === key)?.[1] ?? null;

/** A failed root span as the Dashboard lists it. */
export function recentErrorOf(span: TraceSpan): RecentError {
  return {
    trace_id: span.trace_id,
    span_id: span.span_id,
    name: span.name,
    function_id: attributeOf(span, 'function_id'),
    trigger_type: attributeOf(span, 'flint.trigger.type'),
    code: attributeOf(span, 'error.type'),
    message: span.status_description ?? null,
    service_name: span.service_name,
    start_ms: Math.round(span.start_time_unix_nano / 1e6),
    duration_ms: Math.round(((span.end_time_unix_nano - span.start_time_unix_nano) / 1e6) * 1000) / 1000,
  };
}

/** The Dashboard: the metrics history the console keeps, and the newest failed traces. */
export const metricsRoutes: Route[] = [
  {
    method: 'GET',
    path: '/_console/metrics',
    handler: async ({ link, query }): Promise<MetricsResponse> => {
      const answer = await metricsHistoryOf(link).current();
      // The per-function counts can be long (one entry per function ever called): left out on request.
      if (query.get('by_function') === 'false' && answer.latest) {
        answer.latest = { ...answer.latest, invocations: { ...answer.latest.invocations, by_function: {} } };
      }
      return answer;
    },
  },
  {
    method: 'GET',
    path: '/_console/metrics/errors',
    handler: async ({ link, query }): Promise<RecentErrorsResponse> => {
      const limit = Math.max(1, queryInt(query, 'limit', 10, 100));
      let list: { spans: TraceSpan[] } | undefined;
      try {
        list = await link.callOptional<{ spans: TraceSpan[] }>('engine::traces::list', { status: 'error', sort_by: 'start_time', sort_order: 'desc', limit });
      } catch (err) {
        if (err instanceof FlintError && err.code === 'memory_exporter_not_enabled') {
          return { available: false, reason: 'traces_not_stored', detail: err.message, errors: [] };
        }
        throw err;
      }
      if (list === undefined) {
        return {
          available: false,
          reason: 'module_not_loaded',
          detail: 'flint-observability is not loaded: add it to the modules of flint-config.yaml to keep traces',
          errors: [],
        };
      }
      return { available: true, errors: list.spans.map(recentErrorOf) };
    },
  },
];
