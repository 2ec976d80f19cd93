import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EngineLink } from '../engine-link.js';
import type { ConsoleOptions } from '../options.js';
import { badRequest } from './failure.js';
import { readJson } from './json.js';

/** What a route handler gets. */
export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The JSON body (read once, on demand). */
  body(): Promise<Record<string, unknown>>;
  link: EngineLink;
  options: ConsoleOptions;
}

/** A handler's answer is sent as JSON with status 200, unless it wrote the response itself. */
export type RouteHandler = (ctx: RouteContext) => Promise<unknown> | unknown;

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** `/_console/states/:scope/:key`: each `:name` matches one path segment (percent-decoded). */
  path: string;
  handler: RouteHandler;
}

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

/** Matches a request to a route; `allowed` lists the methods of a path that matched with another method (for 405). */
export class Router {
  private readonly routes: CompiledRoute[];

  constructor(routes: Route[]) {
    this.routes = routes.map((r) => {
      const names: string[] = [];
      const source = r.path
        .split('/')
        .map((part) => {
          if (!part.startsWith(':')) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          names.push(part.slice(1));
          return '([^/]+)';
        })
        .join('/');
      return { ...r, regex: new RegExp(`^${source}$`), names };
    });
  }

  match(method: string, pathname: string): { route: Route; params: Record<string, string> } | { allowed: string[] } {
    const allowed: string[] = [];
    for (const route of this.routes) {
      const m = route.regex.exec(pathname);
      if (!m) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        try {
          params[name] = decodeURIComponent(m[i + 1] as string);
        } catch {
          throw badRequest(`the path segment ${m[i + 1]} is not valid percent-encoding`);
        }
      });
      return { route, params };
    }
    return { allowed };
  }
}

/** A lazily read JSON body. */
export function bodyReader(req: IncomingMessage): () => Promise<Record<string, unknown>> {
  let body: Promise<Record<string, unknown>> | undefined;
  return () => {
    body ??= readJson(req);
    return body;
  };
}
