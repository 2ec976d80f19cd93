import type { IncomingMessage, ServerResponse } from 'node:http';
import { FlintError, formatError, toErrorBody } from '@flint/protocol';
import type { Logger } from '../../core/logger.js';
import type { AttributeValue, ModuleContext, TriggerFiring } from '../../core/module-api.js';
import { errorMessage } from '../../lib/errors.js';
import { type RequestParts, apiRequestJson, triggerOf } from './api-request.js';
import { BodyTooLarge, InvalidJson, hasBody, isJsonContentType, readJson, streamBody } from './body.js';
import type { HttpConfig } from './config.js';
import { corsHeaders, preflightHeaders } from './cors.js';
import { Guards, type MiddlewareInput } from './guards.js';
import { closeGracefully } from './linger.js';
import { AnsweredFiring } from './request-firing.js';
import { type Headers, newErrorId, sendError, sendInternalError, sendResult } from './respond.js';
import type { Route, RouteTable } from './routes.js';
import { streamResponse } from './stream-response.js';

type StringMap = Record<string, string>;

/** A matched request, the CORS headers its answers carry and its trigger firing (for invocation hooks). */
interface MatchedRequest extends RequestParts {
  cors: Headers;
  firing: TriggerFiring;
}

/** The request lifecycle: match → global middleware → condition → route middleware → body → handler. */
export class HttpPipeline {
  private readonly globalMiddleware: readonly string[];
  private readonly emptyReaderJson: string;
  private readonly guards: Guards;
  /** The shared span attributes of each route without parameters (see firingAttributes). */
  private readonly sharedAttributes = new WeakMap<Route, Readonly<Record<string, AttributeValue>>>();

  constructor(
    private readonly ctx: ModuleContext,
    private readonly config: HttpConfig,
    private readonly routes: RouteTable,
    private readonly logger: Logger,
  ) {
    // Ascending priority; ties keep config order (Array.prototype.sort is stable).
    this.globalMiddleware = [...config.middleware].sort((a, b) => a.priority - b.priority).map((m) => m.function_id);
    this.emptyReaderJson = JSON.stringify(ctx.channels.emptyReaderRef);
    this.guards = new Guards(ctx, config, logger);
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      this.start(req, res);
    } catch (err) {
      this.internalError(req, res, err);
    }
  }

  /**
   * The synchronous part: match, checks, and (for a route with no middleware or condition and no JSON
   * body to read, the common case) the handler call itself, without a promise in the way.
   */
  private start(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    const cors = corsHeaders(this.config.cors, req);
    const withBody = hasBody(req);
    if (withBody) closeGracefully(req); // an answer before the body was read must reach the client

    if (method === 'OPTIONS') return this.options(req, res, path);
    const match = this.routes.find(method === 'HEAD' ? 'GET' : method, path);
    if (!match) return this.notMatched(req, res, path, method, cors);
    const route = match.route;
    if (!this.ctx.registry.hasFunction(route.functionId)) {
      return sendError(res, 'function_unavailable', formatError('function_unavailable', { function_id: route.functionId }), {}, cors);
    }
    const request: MatchedRequest = {
      path_params: match.params,
      query_params: q < 0 ? EMPTY : Object.fromEntries(new URLSearchParams(url.slice(q + 1))),
      headers: flattenHeaders(req),
      method,
      path,
      route,
      cors,
      firing: this.begin(req, res, route, method, path),
    };
    const bodyIsJson = isJsonContentType(request.headers['content-type']);
    const jsonBody = bodyIsJson && withBody;
    if (this.globalMiddleware.length === 0 && !route.conditionFunctionId && route.middlewareFunctionIds.length === 0 && !jsonBody) {
      if (this.tooLarge(req, res, request)) return;
      return this.invokeHandler(req, res, request, null, !bodyIsJson && withBody);
    }
    this.run(req, res, request, bodyIsJson).catch((err: unknown) => this.internalError(req, res, err));
  }

  /**
   * The request's trigger firing, continuing the caller's trace when the request carries a `traceparent`
   * header. When observed, it ends once the answer is sent, with the answer's status.
   */
  private begin(req: IncomingMessage, res: ServerResponse, route: Route, method: string, path: string): TriggerFiring {
    const h = req.headers;
    const traceparent = h.traceparent;
    const baggage = h.baggage;
    const sameMethod = method === route.method;
    const firing = this.ctx.beginTrigger(route.origin, route.functionId, {
      traceparent: typeof traceparent === 'string' ? traceparent : undefined,
      baggage: typeof baggage === 'string' ? baggage : undefined,
      name: sameMethod ? route.spanName : `${method} ${route.pattern}`,
      attributes: this.firingAttributes(route, method, path, req.socket.localPort ?? this.config.port, sameMethod),
    });
    return firing.observed ? new AnsweredFiring(firing, res) : firing;
  }

  /**
   * The attributes of a request's span. Tracers keep the object with the span: a request to a route
   * without parameters, made with the route's own method, gets the same frozen object as the requests
   * before it (kept per route), so that stored spans point at no object made for their request.
   */
  private firingAttributes(route: Route, method: string, path: string, port: number, sameMethod: boolean): Readonly<Record<string, AttributeValue>> {
    const shared = sameMethod && path === route.staticPath;
    if (shared) {
      const cached = this.sharedAttributes.get(route);
      if (cached !== undefined && cached['server.port'] === port) return cached;
    }
    const attributes = { 'http.request.method': method, 'http.route': route.pattern, 'url.path': path, 'server.port': port };
    if (shared) this.sharedAttributes.set(route, Object.freeze(attributes));
    return attributes;
  }

  /** The rest of the lifecycle when there is middleware, a condition or a JSON body to wait for. */
  private async run(req: IncomingMessage, res: ServerResponse, request: MatchedRequest, bodyIsJson: boolean): Promise<void> {
    const { route } = request;
    const guarded = { res, cors: request.cors, firing: request.firing };
    const middlewareInput = (): MiddlewareInput => ({
      phase: 'preHandler',
      request: { path_params: request.path_params, query_params: request.query_params, headers: request.headers, method: request.method },
      context: {},
    });
    for (const fn of this.globalMiddleware) if (!(await this.guards.middleware(fn, middlewareInput(), guarded))) return;
    if (this.tooLarge(req, res, request)) return;

    let body: unknown = null;
    let bodyRead = false;
    const readBody = async (): Promise<boolean> => {
      bodyRead = true;
      if (!bodyIsJson || !hasBody(req)) return true;
      try {
        body = await readJson(req, this.config.max_body_bytes);
        return true;
      } catch (err) {
        this.bodyError(err, req, res, request);
        return false;
      }
    };

    if (route.conditionFunctionId) {
      if (!(await readBody())) return;
      const input = {
        path_params: request.path_params,
        query_params: request.query_params,
        headers: request.headers,
        method: request.method,
        body,
        path: request.path,
        route: route.pattern,
        trigger: triggerOf(route, request.method),
      };
      if (!(await this.guards.condition(route, input, guarded))) return;
    }
    for (const fn of route.middlewareFunctionIds) if (!(await this.guards.middleware(fn, middlewareInput(), guarded))) return;
    if (!bodyRead && !(await readBody())) return;
    this.invokeHandler(req, res, request, body, !bodyIsJson && hasBody(req));
  }

  /**
   * Calls the route's function with the ApiRequest (built once, with the two channel refs of protocol
   * §5.4; a request without a raw body to stream gets the shared, already-ended reader) and answers
   * from its result or its response channel.
   */
  private invokeHandler(req: IncomingMessage, res: ServerResponse, request: MatchedRequest, body: unknown, streamsBody: boolean): void {
    const { route, cors, firing } = request;
    const requestBody = streamsBody ? this.ctx.channels.create() : undefined;
    const response = this.ctx.channels.create();
    const payload = apiRequestJson(request, body, requestBody ? requestBody.refJson('read') : this.emptyReaderJson, response.refJson('write'));
    const cleanup = () => {
      requestBody?.destroy();
      response.destroy();
    };
    if (firing instanceof AnsweredFiring) firing.cleanup = cleanup;
    else res.on('close', cleanup);
    if (requestBody) {
      streamBody(req, requestBody, this.config.max_body_bytes).catch((err: unknown) => {
        this.bodyError(err, req, res, request);
        cleanup();
      });
    }
    const timeoutMs = this.config.default_timeout_ms;
    const onOutcome = streamResponse({
      res,
      channel: response,
      headDeadline: Date.now() + timeoutMs,
      baseHeaders: cors,
      firing,
      onResult: (value) => {
        const problem = sendResult(res, value, cors);
        if (problem) sendInternalError(res, this.logger, 'handler_error', problem, { function_id: route.functionId }, cors);
      },
      onError: (error) => this.handlerError(res, route, error, cors),
      onTimeout: () => this.handlerTimeout(res, route, cors),
      onStreamError: (error) => {
        this.logger.error(
          { function_id: route.functionId, error_id: newErrorId() },
          `handler failed while its response was being sent: ${errorMessage(error)}`,
        );
      },
      onDone: cleanup,
    });
    const { traceparent, baggage } = firing.trace;
    this.ctx.invokeWith(route.functionId, payload, { timeoutMs, trigger: route.origin, traceparent, baggage }, onOutcome);
  }

  private internalError(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    sendInternalError(res, this.logger, 'handler_error', formatError('internal_error', { reason: errorMessage(err) }), { url: req.url });
  }

  private handlerTimeout(res: ServerResponse, route: Route, cors: Headers): void {
    sendError(res, 'handler_timeout', formatError('handler_timeout', { function_id: route.functionId, timeout_ms: this.config.default_timeout_ms }), {}, cors);
  }

  /**
   * The route's call failed. Routing codes here are about the route's own function (a handler's nested
   * failures arrive as `invocation_failed` with a `cause`); a handler's own code is answered as is.
   */
  private handlerError(res: ServerResponse, route: Route, error: unknown, cors: Headers): void {
    const failure = error instanceof FlintError ? error : undefined;
    const code = failure?.code ?? 'internal_error';
    const functionId = route.functionId;
    if (code === 'invocation_timeout') return this.handlerTimeout(res, route, cors);
    if (code === 'function_not_found' || code === 'invocation_stopped' || code === 'function_not_invokable') {
      return sendError(res, 'function_unavailable', `${functionId} became unavailable (${code})`, {}, cors);
    }
    if (code === 'engine_shutting_down' || code === 'worker_overloaded' || code === 'invalid_payload') {
      return sendError(res, code, errorMessage(error), {}, cors);
    }
    const cause = failure?.cause instanceof FlintError ? failure.cause.toBody() : undefined;
    const answerCode = code === 'invocation_failed' || code === 'internal_error' ? 'handler_error' : code;
    const context = cause ? { function_id: functionId, failure: code, cause } : { function_id: functionId, failure: code };
    sendInternalError(res, this.logger, answerCode, errorMessage(error), context, cors, cause ? { cause } : {});
  }

  private tooLarge(req: IncomingMessage, res: ServerResponse, request: MatchedRequest): boolean {
    const length = Number(req.headers['content-length'] ?? 0);
    if (length <= this.config.max_body_bytes) return false;
    this.bodyError(new BodyTooLarge(), req, res, request);
    return true;
  }

  private bodyError(err: unknown, req: IncomingMessage, res: ServerResponse, { cors, firing }: MatchedRequest): void {
    firing.end({ error: toErrorBody(err) });
    if (err instanceof BodyTooLarge) {
      // Nobody gets the rest of the body: answer, then close (gracefully: closeGracefully) without reading it.
      if (res.headersSent) {
        // The handler answered first: after a complete answer, close; one still streaming is cut.
        if (res.writableEnded) req.socket.destroySoon();
        else req.destroy();
        return;
      }
      res.setHeader('connection', 'close');
      sendError(res, 'payload_too_large', formatError('payload_too_large', { limit: this.config.max_body_bytes }), {}, cors);
    } else if (err instanceof InvalidJson) {
      sendError(res, 'invalid_json', formatError('invalid_json', { reason: err.message }), {}, cors);
    } else {
      req.destroy();
    }
  }

  private options(req: IncomingMessage, res: ServerResponse, path: string): void {
    const methods = this.routes.allowedMethods(path);
    if (methods.length === 0) return sendError(res, 'route_not_found', `No route for ${path}`);
    const allow = allowHeader(methods, this.config.cors !== undefined);
    const preflight = this.config.cors && req.headers['access-control-request-method'] ? preflightHeaders(this.config.cors, req, methods) : undefined;
    res.writeHead(204, { ...(preflight ?? {}), allow, 'content-length': '0' });
    res.end();
  }

  private notMatched(_req: IncomingMessage, res: ServerResponse, path: string, method: string, cors: Headers): void {
    const methods = this.routes.allowedMethods(path);
    if (methods.length === 0) return sendError(res, 'route_not_found', formatError('route_not_found', { method, path }), {}, cors);
    sendError(
      res,
      'method_not_allowed',
      formatError('method_not_allowed', { method, path }),
      { allowed: methods },
      { ...cors, allow: allowHeader(methods, this.config.cors !== undefined) },
    );
  }
}

function allowHeader(methods: string[], withOptions: boolean): string {
  const all = methods.includes('GET') ? [...methods, 'HEAD'] : [...methods];
  if (withOptions) all.push('OPTIONS');
  return all.join(', ');
}

const EMPTY: StringMap = Object.freeze({}) as StringMap;

/** Header names are already lower-case; only `set-cookie` can be an array (joined like the others). */
function flattenHeaders(req: IncomingMessage): StringMap {
  const headers = req.headers;
  if (headers['set-cookie'] === undefined) return headers as StringMap;
  const out: StringMap = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
