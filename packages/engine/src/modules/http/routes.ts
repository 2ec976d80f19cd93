import { FlintError } from '@flint/protocol';
import FindMyWay from 'find-my-way';
import type { TriggerRecord } from '../../core/module-api.js';
import { HTTP_METHODS, type HttpMethod } from './config.js';
import type { HttpTriggerConfig } from './trigger-config.js';

/** A route compiled at registration: everything a request needs, nothing computed per request. */
export interface Route {
  triggerId: string;
  functionId: string;
  method: HttpMethod;
  /** The api_path as registered (what handlers see as `route`). */
  pattern: string;
  conditionFunctionId: string | undefined;
  middlewareFunctionIds: readonly string[];
  /** The `trigger` field of a request for this route made with its own method (frozen: shared by every request). */
  trigger: Readonly<{ type: 'http'; path: string; method: string }>;
  /** JSON of `pattern` and of `trigger`, spliced into every ApiRequest. */
  patternJson: string;
  triggerJson: string;
  /** The trigger as invocation hooks see it (frozen: shared by every request). */
  origin: Readonly<{ id: string; type: string }>;
  /** The name of a request's span (`GET /users/:id`) for a request made with the route's own method. */
  spanName: string;
  /** The path every request to this route has when the route has no `:param` segment (else undefined). */
  staticPath: string | undefined;
}

const PARAM = /^:[A-Za-z_][A-Za-z0-9_]*$/;
// Unreserved and sub-delim characters only: a percent-encoded segment could never match (paths are
// compared decoded), so it is refused rather than registered unreachable.
const STATIC = /^[A-Za-z0-9\-._~!$&'+,;=@]+$/;

/** Splits an api_path into segments, refusing anything but static segments and whole `:name` segments. */
export function normalizePath(apiPath: string): string[] {
  const segments = apiPath.split('/').filter((s) => s !== '');
  const names = new Set<string>();
  for (const segment of segments) {
    if (segment.startsWith(':')) {
      if (!PARAM.test(segment)) throw new FlintError('trigger_registration_failed', `api_path segment "${segment}" is not a valid :name parameter`);
      if (names.has(segment)) throw new FlintError('trigger_registration_failed', `api_path uses the parameter ${segment} twice`);
      names.add(segment);
    } else if (!STATIC.test(segment)) {
      throw new FlintError('trigger_registration_failed', `api_path segment "${segment}" contains characters that are not allowed`);
    }
  }
  return segments;
}

/** Compiles an http trigger (its config already checked by the trigger's schema) into a Route, or throws a FlintError naming the problem. */
export function compileRoute(trigger: TriggerRecord<HttpTriggerConfig>): { route: Route; path: string } {
  const config = trigger.config;
  const method = config.http_method;
  const segments = normalizePath(config.api_path);
  const path = `/${segments.join('/')}`;
  const requestTrigger = Object.freeze({ type: 'http' as const, path: config.api_path, method });
  return {
    path,
    route: {
      triggerId: trigger.id,
      functionId: trigger.function_id,
      method,
      pattern: config.api_path,
      conditionFunctionId: config.condition_function_id,
      middlewareFunctionIds: Object.freeze([...(config.middleware_function_ids ?? [])]),
      trigger: requestTrigger,
      patternJson: JSON.stringify(config.api_path),
      triggerJson: JSON.stringify(requestTrigger),
      origin: Object.freeze({ id: trigger.id, type: 'http' }),
      spanName: `${method} ${config.api_path}`,
      staticPath: segments.some((s) => s.startsWith(':')) ? undefined : path,
    },
  };
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

const newRouter = () => FindMyWay({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 2048 });

/**
 * The route table: a radix tree per method (find-my-way), one route per method + path shape.
 * find-my-way rebuilds its tree on every removal, so removals only mark the tree stale and it is
 * rebuilt once, on the next lookup (a worker with 1,000 routes leaving costs one rebuild, not 1,000).
 */
export class RouteTable {
  private router = newRouter();
  private stale = false;
  /** Key = method + path with parameter names erased, so /u/:id and /u/:uid conflict. */
  private readonly byShape = new Map<string, { route: Route; path: string }>();
  private readonly byTrigger = new Map<string, string>();

  get size(): number {
    return this.byShape.size;
  }

  add(trigger: TriggerRecord<HttpTriggerConfig>): void {
    const { route, path } = compileRoute(trigger);
    const shape = `${route.method} ${path.replace(/:[A-Za-z0-9_]+/g, ':')}`;
    const existing = this.byShape.get(shape);
    if (existing && existing.route.triggerId !== trigger.id) {
      throw new FlintError(
        'trigger_registration_failed',
        `route ${route.method} ${path} is already served by function ${existing.route.functionId} (trigger ${existing.route.triggerId})`,
      );
    }
    this.remove(trigger.id);
    this.byShape.set(shape, { route, path });
    this.byTrigger.set(trigger.id, shape);
    if (!this.stale) this.router.on(route.method, path, noop, route);
  }

  remove(triggerId: string): void {
    const shape = this.byTrigger.get(triggerId);
    if (shape === undefined) return;
    this.byTrigger.delete(triggerId);
    this.byShape.delete(shape);
    this.stale = true;
  }

  find(method: string, path: string): RouteMatch | undefined {
    const found = this.current().find(method as HttpMethod, path);
    if (!found) return undefined;
    return { route: found.store as Route, params: found.params as Record<string, string> };
  }

  /** Methods served at a path (for 405 `Allow` and CORS preflight). */
  allowedMethods(path: string): HttpMethod[] {
    const router = this.current();
    return HTTP_METHODS.filter((m) => router.find(m, path) !== null);
  }

  private current(): ReturnType<typeof newRouter> {
    if (this.stale) {
      const router = newRouter();
      for (const { route, path } of this.byShape.values()) router.on(route.method, path, noop, route);
      this.router = router;
      this.stale = false;
    }
    return this.router;
  }
}

function noop(): void {}
