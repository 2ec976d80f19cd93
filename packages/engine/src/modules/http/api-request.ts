import { jsonString } from '@flint/protocol';
import { PreparedJson } from '../../core/module-api.js';
import type { Route } from './routes.js';

type StringMap = Record<string, string>;

/** What the lifecycle knows of a matched request before its body is read. */
export interface RequestParts {
  path_params: StringMap;
  query_params: StringMap;
  headers: StringMap;
  method: string;
  /** The concrete path. */
  path: string;
  route: Route;
}

/**
 * The handler's input (ApiRequest, protocol §5.4, with the JSON text of its two channel refs) as JSON text. It is the largest part of every
 * invocation frame flint-http sends: splicing the route's precomputed JSON (pattern, trigger) and the
 * channel refs into the text costs a third of JSON.stringify of the whole object.
 */
export function apiRequestJson(p: RequestParts, body: unknown, requestBodyRefJson: string, responseRefJson: string): PreparedJson {
  const route = p.route;
  const trigger = p.method === route.method ? route.triggerJson : JSON.stringify(triggerOf(route, p.method));
  return new PreparedJson(
    `{"path_params":${mapJson(p.path_params)},"query_params":${mapJson(p.query_params)},"headers":${JSON.stringify(p.headers)},"method":${jsonString(p.method)},"body":${body === null || body === undefined ? 'null' : JSON.stringify(body)},"path":${jsonString(p.path)},"route":${route.patternJson},"trigger":${trigger},"request_body":${requestBodyRefJson},"response":${responseRefJson}}`,
  );
}

/** The request's `trigger` field: the route's own, except that a HEAD request answered by a GET route says HEAD. */
export function triggerOf(route: Route, method: string): Route['trigger'] {
  return method === route.method ? route.trigger : { type: 'http', path: route.pattern, method };
}

function mapJson(map: StringMap): string {
  for (const _ in map) return JSON.stringify(map);
  return '{}';
}
