import type { IncomingMessage, ServerResponse } from 'node:http';
import { FlintError } from '@flint/protocol';
import type { Logger } from '../../core/logger.js';
import type { ModuleContext } from '../../core/module-api.js';
import { type RequestParts, apiRequestJson, triggerOf } from './api-request.js';
import { BodyTooLarge, InvalidJson, hasBody, isJsonContentType, readJson, streamBody } from './body.js';
import type { HttpConfig } from './config.js';
import { corsHeaders, preflightHeaders } from './cors.js';
import { type Headers, newErrorId, sendError, sendInternalError, sendResult } from './respond.js';
import type { Route, RouteTable } from './routes.js';
import { streamResponse } from './stream-response.js';

type StringMap = Record<string, string>;

/** A matched request and the CORS headers its answers carry. */
interface MatchedRequest extends RequestParts {
  cors: Headers;
}

interface MiddlewareInput {
  phase: 'preHandler';
  request: { path_params: StringMap; query_params: StringMap; headers: StringMap; method: string };
  context: Record<string, never>;
}

/** The request lifecycle: match → global middleware → condition → route middleware → body → handler. */
export class HttpPipeline {
  private readonly globalMiddleware: readonly string[];
  private readonly emptyReaderJson: string;

  constructor(
    private readonly ctx: ModuleContext,
    private readonly config: HttpConfig,
    private readonly routes: RouteTable,
    private readonly logger: Logger,
  ) {
    // Ascending priority; ties keep config order (Array.prototype.sort is stable).
    this.globalMiddleware = [...config.middleware].sort((a, b) => a.priority - b.priority).map((m) => m.function_id);
    this.emptyReaderJson = JSON.stringify(ctx.channels.emptyReaderRef);
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

    if (method === 'OPTIONS') return this.options(req, res, path);
    const match = this.routes.find(method === 'HEAD' ? 'GET' : method, path);
    if (!match) return this.notMatched(req, res, path, method, cors);
    const route = match.route;
    if (!this.ctx.hasFunction(route.functionId)) {
      return sendError(res, 503, 'function_unavailable', `No worker provides ${route.functionId} right now`, {}, cors);
    }
    const request: MatchedRequest = {
      path_params: match.params,
      query_params: q < 0 ? EMPTY : Object.fromEntries(new URLSearchParams(url.slice(q + 1))),
      headers: flattenHeaders(req),
      method,
      path,
      route,
      cors,
    };
    const bodyIsJson = isJsonContentType(request.headers['content-type']);
    const jsonBody = bodyIsJson && hasBody(req);
    if (this.globalMiddleware.length === 0 && !route.conditionFunctionId && route.middlewareFunctionIds.length === 0 && !jsonBody) {
      if (this.tooLarge(req, res, cors)) return;
      return this.invokeHandler(req, res, request, null, !bodyIsJson && hasBody(req));
    }
    this.run(req, res, request, bodyIsJson).catch((err: unknown) => this.internalError(req, res, err));
  }

  /** The rest of the lifecycle when there is middleware, a condition or a JSON body to wait for. */
  private async run(req: IncomingMessage, res: ServerResponse, request: MatchedRequest, bodyIsJson: boolean): Promise<void> {
    const { route, cors } = request;
    const middlewareInput = (): MiddlewareInput => ({
      phase: 'preHandler',
      request: { path_params: request.path_params, query_params: request.query_params, headers: request.headers, method: request.method },
      context: {},
    });
    for (const fn of this.globalMiddleware) if (!(await this.middleware(fn, middlewareInput(), res, cors))) return;
    if (this.tooLarge(req, res, cors)) return;

    let body: unknown = null;
    let bodyRead = false;
    const readBody = async (): Promise<boolean> => {
      bodyRead = true;
      if (!bodyIsJson || !hasBody(req)) return true;
      try {
        body = await readJson(req, this.config.max_body_bytes);
        return true;
      } catch (err) {
        this.bodyError(err, req, res, cors);
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
      if (!(await this.condition(route, input, res, cors))) return;
    }
    for (const fn of route.middlewareFunctionIds) if (!(await this.middleware(fn, middlewareInput(), res, cors))) return;
    if (!bodyRead && !(await readBody())) return;
    this.invokeHandler(req, res, request, body, !bodyIsJson && hasBody(req));
  }

  /**
   * Calls the route's function with the ApiRequest (built once, with the two channel refs of protocol
   * §5.4; a request without a raw body to stream gets the shared, already-ended reader) and answers
   * from its result or its response channel.
   */
  private invokeHandler(req: IncomingMessage, res: ServerResponse, request: MatchedRequest, body: unknown, streamsBody: boolean): void {
    const { route, cors } = request;
    const requestBody = streamsBody ? this.ctx.channels.create() : undefined;
    const response = this.ctx.channels.create();
    const payload = apiRequestJson(request, body, requestBody ? requestBody.refJson('read') : this.emptyReaderJson, response.refJson('write'));
    const cleanup = () => {
      requestBody?.destroy();
      response.destroy();
    };
    res.on('close', cleanup);
    if (requestBody) {
      streamBody(req, requestBody, this.config.max_body_bytes).catch((err: unknown) => {
        this.bodyError(err, req, res, cors);
        cleanup();
      });
    }
    const timeoutMs = this.config.default_timeout_ms;
    const onOutcome = streamResponse({
      res,
      channel: response,
      headDeadline: Date.now() + timeoutMs,
      baseHeaders: cors,
      onResult: (value) => {
        const problem = sendResult(res, value, cors);
        if (problem) sendInternalError(res, this.logger, 'handler_error', problem, { function_id: route.functionId }, cors);
      },
      onError: (error) => this.handlerError(res, route, error, cors),
      onTimeout: () => sendError(res, 504, 'handler_timeout', `${route.functionId} did not answer within ${timeoutMs} ms`, {}, cors),
      onStreamError: (error) => {
        const message = error instanceof Error ? error.message : String(error);
        this.logger.error({ function_id: route.functionId, error_id: newErrorId() }, `handler failed while its response was being sent: ${message}`);
      },
      onDone: cleanup,
    });
    this.ctx.dispatch(route.functionId, payload, { timeoutMs }, onOutcome);
  }

  private internalError(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    sendInternalError(res, this.logger, 'handler_error', `internal error: ${err instanceof Error ? err.message : String(err)}`, { url: req.url });
  }

  private handlerError(res: ServerResponse, route: Route, error: unknown, cors: Headers): void {
    const code = error instanceof FlintError ? error.code : 'internal_error';
    const message = error instanceof Error ? error.message : String(error);
    if (code === 'invocation_timeout') {
      return sendError(res, 504, 'handler_timeout', `${route.functionId} did not answer within ${this.config.default_timeout_ms} ms`, {}, cors);
    }
    if (code === 'function_not_found' || code === 'invocation_stopped') {
      return sendError(res, 503, 'function_unavailable', `${route.functionId} became unavailable (${code})`, {}, cors);
    }
    sendInternalError(res, this.logger, 'handler_error', message, { function_id: route.functionId, cause: code }, cors);
  }

  /** Runs one middleware; false when it answered the request (or failed). */
  private async middleware(functionId: string, input: MiddlewareInput, res: ServerResponse, cors: Headers): Promise<boolean> {
    let result: unknown;
    try {
      result = await this.ctx.invoke(functionId, input, { timeoutMs: this.config.middleware_timeout_ms });
    } catch (err) {
      if (err instanceof FlintError && err.code === 'invocation_timeout') {
        sendError(res, 504, 'middleware_timeout', `middleware ${functionId} did not answer within ${this.config.middleware_timeout_ms} ms`, {}, cors);
      } else {
        const message = err instanceof Error ? err.message : String(err);
        sendInternalError(res, this.logger, 'middleware_error', `middleware ${functionId} failed: ${message}`, { function_id: functionId }, cors);
      }
      return false;
    }
    const action = (result as { action?: unknown } | null | undefined)?.action;
    if (action === 'continue') return true;
    if (action === 'respond') {
      const response = (result as { response?: unknown }).response ?? {};
      const problem = sendResult(res, { body: null, ...(response as object) }, cors);
      if (problem) sendInternalError(res, this.logger, 'middleware_error', `middleware ${functionId}: ${problem}`, { function_id: functionId }, cors);
      return false;
    }
    this.logger.warn(
      { function_id: functionId },
      `middleware returned ${result === undefined || result === null ? 'no result' : `an unrecognised action ${JSON.stringify(action ?? null)}`}: continuing`,
    );
    return true;
  }

  /** Runs the route's condition; false when the request was answered (422 or an error). */
  private async condition(route: Route, input: unknown, res: ServerResponse, cors: Headers): Promise<boolean> {
    const fn = route.conditionFunctionId as string;
    try {
      const passed = await this.ctx.invoke(fn, input, { timeoutMs: this.config.middleware_timeout_ms });
      if (passed === false) {
        sendError(res, 422, 'condition_failed', 'Request condition not met', { skipped: true }, cors);
        return false;
      }
      return true;
    } catch (err) {
      if (err instanceof FlintError && err.code === 'invocation_timeout') {
        sendError(res, 504, 'condition_timeout', `condition ${fn} did not answer within ${this.config.middleware_timeout_ms} ms`, {}, cors);
      } else {
        sendInternalError(
          res,
          this.logger,
          'condition_error',
          `condition ${fn} failed: ${err instanceof Error ? err.message : String(err)}`,
          { function_id: fn },
          cors,
        );
      }
      return false;
    }
  }

  private tooLarge(req: IncomingMessage, res: ServerResponse, cors: Headers): boolean {
    const length = Number(req.headers['content-length'] ?? 0);
    if (length <= this.config.max_body_bytes) return false;
    this.bodyError(new BodyTooLarge(), req, res, cors);
    return true;
  }

  private bodyError(err: unknown, req: IncomingMessage, res: ServerResponse, cors: Headers): void {
    if (err instanceof BodyTooLarge) {
      // Do not read the rest: answer, then close the connection.
      res.setHeader('connection', 'close');
      sendError(res, 413, 'payload_too_large', `Request body is larger than ${this.config.max_body_bytes} bytes`, {}, cors);
      res.once('finish', () => req.destroy());
    } else if (err instanceof InvalidJson) {
      sendError(res, 400, 'invalid_json', `Request body is not valid JSON: ${err.message}`, {}, cors);
    } else {
      req.destroy();
    }
  }

  private options(req: IncomingMessage, res: ServerResponse, path: string): void {
    const methods = this.routes.allowedMethods(path);
    if (methods.length === 0) return sendError(res, 404, 'route_not_found', `No route for ${path}`);
    const allow = allowHeader(methods, this.config.cors !== undefined);
    const preflight = this.config.cors && req.headers['access-control-request-method'] ? preflightHeaders(this.config.cors, req, methods) : undefined;
    res.writeHead(204, { ...(preflight ?? {}), allow, 'content-length': '0' });
    res.end();
  }

  private notMatched(_req: IncomingMessage, res: ServerResponse, path: string, method: string, cors: Headers): void {
    const methods = this.routes.allowedMethods(path);
    if (methods.length === 0) return sendError(res, 404, 'route_not_found', `No route for ${method} ${path}`, {}, cors);
    sendError(
      res,
      405,
      'method_not_allowed',
      `${method} is not allowed on ${path}`,
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
