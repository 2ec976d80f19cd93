import type { LogRecord, LogsResponse, LogsUnavailableReason } from '../api-types.js';
import { badRequest } from '../http/failure.js';
import type { Route } from '../http/router.js';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const STRING_FILTERS = ['trace_id', 'span_id', 'severity_text', 'text', 'service_name'] as const;
const MAX_LIMIT = 1000;

const UNAVAILABLE: Record<LogsUnavailableReason, string> = {
  module_not_loaded: 'flint-observability is not loaded, so the engine keeps no log records.',
  logs_disabled: 'flint-observability runs with logs_enabled: false, so no log records are kept.',
  logs_not_stored: 'flint-observability runs with logs_exporter: otlp: records go to the collector and are not kept in memory.',
};

/** The filters of a POST /_console/logs body, checked, as `engine::logs::list` takes them (absent and empty fields left out). */
function logsQuery(body: Record<string, unknown>): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const key of ['start_time', 'end_time'] as const) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw badRequest(`${key} must be a time in epoch milliseconds`);
    query[key] = v;
  }
  if (typeof query.start_time === 'number' && typeof query.end_time === 'number' && query.start_time > query.end_time) {
    throw badRequest('start_time must not be after end_time');
  }
  for (const key of STRING_FILTERS) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw badRequest(`${key} must be a string`);
    const text = key === 'text' ? v : v.trim();
    if (text !== '') query[key] = text;
  }
  const severity = body.severity_min;
  if (severity !== undefined && severity !== null && severity !== '') {
    if (typeof severity === 'number') {
      if (!Number.isInteger(severity) || severity < 1 || severity > 24) throw badRequest('severity_min must be a severity number from 1 to 24 or a level name');
      query.severity_min = severity;
    } else if (typeof severity === 'string' && LEVELS.includes(severity.toLowerCase())) {
      query.severity_min = severity.toLowerCase();
    } else {
      throw badRequest(`severity_min must be a level name (${LEVELS.join(', ')}) or a severity number from 1 to 24`);
    }
  }
  for (const [key, max] of [
    ['offset', 1e9],
    ['limit', MAX_LIMIT],
  ] as const) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) throw badRequest(`${key} must be an integer from 0 to ${max}`);
    query[key] = v;
  }
  return query;
}

interface EngineLogList {
  logs: LogRecord[];
  total: number;
  query?: Record<string, unknown>;
}

/** The Logs page, through flint-observability's `engine::logs::list`. */
export const logsRoutes: Route[] = [
  {
    method: 'POST',
    path: '/_console/logs',
    handler: async ({ link, body }): Promise<LogsResponse> => {
      const query = logsQuery(await body());
      const answer = await link.callOptional<EngineLogList>('engine::logs::list', query);
      const unavailable = (reason: LogsUnavailableReason): LogsResponse => ({ available: false, reason, detail: UNAVAILABLE[reason], logs: [], total: 0 });
      if (answer === undefined) return unavailable('module_not_loaded');
      // Without a log store the engine answers an empty list at once, without reading the filters (its echoed query has no limit).
      if (answer.query === undefined || !('limit' in answer.query)) {
        const health = await link.callOptional<{ components?: { logs?: { status?: string } } }>('engine::health::check', {}).catch(() => undefined);
        return unavailable(health?.components?.logs?.status === 'disabled' ? 'logs_disabled' : 'logs_not_stored');
      }
      return { available: true, logs: answer.logs, total: answer.total };
    },
  },
];
