import { PreparedJson } from '../../core/module-api.js';
import type { Route } from './routes.js';

type StringMap = Record<string, string>;

/** What goes into a handler's ApiRequest besides the route's own (precomputed) pieces. */
export interface ApiRequestParts {
  path_params: StringMap;
  query_params: StringMap;
  headers: StringMap;
  method: string;
  path: string;
  route: Route;
  body: unknown;
  /** JSON text of the two channel refs. */
  requestBody: string;
  response: string;
}

/**
 * The handler's input (ApiRequest, protocol §5.4) as JSON text. It is the largest part of every
 * invocation frame flint-http sends: splicing the route's precomputed JSON (pattern, trigger) and the
 * channel refs into the text costs a third of JSON.stringify of the whole object.
 */
export function apiRequestJson(p: ApiRequestParts): PreparedJson {
  const route = p.route;
  const trigger = p.method === route.method ? route.triggerJson : JSON.stringify({ type: 'http', path: route.pattern, method: p.method });
  return new PreparedJson(
    `{"path_params":${mapJson(p.path_params)},"query_params":${mapJson(p.query_params)},"headers":${JSON.stringify(p.headers)},"method":${JSON.stringify(p.method)},"body":${JSON.stringify(p.body ?? null)},"path":${JSON.stringify(p.path)},"route":${route.patternJson},"trigger":${trigger},"request_body":${p.requestBody},"response":${p.response}}`,
  );
}

function mapJson(map: StringMap): string {
  for (const _ in map) return JSON.stringify(map);
  return '{}';
}
