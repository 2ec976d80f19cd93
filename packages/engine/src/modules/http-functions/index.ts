import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { type HttpFunctionsConfig, httpFunctionsConfigSchema } from './config.js';
import { HttpCaller } from './http-call.js';
import { compileAllowlist, parseInvocation } from './invocation.js';

/**
 * `flint-http-functions`: a worker's function whose implementation is an HTTP endpoint
 * (`registerfunction` with `invocation: {url, method?, timeout_ms?, headers?, auth?}`). The engine
 * checks the invocation when it is registered and calls the URL for every call; the function goes
 * when its worker does.
 */
class HttpFunctionsModule implements EngineModule {
  readonly name = 'flint-http-functions';
  private caller: HttpCaller | undefined;

  constructor(private readonly config: HttpFunctionsConfig) {}

  start(ctx: ModuleContext): void {
    const { config } = this;
    const env = process.env;
    const allowed = compileAllowlist(config.security.url_allowlist);
    const caller = new HttpCaller(config.security, env);
    this.caller = caller;
    // A refused registration is logged by the engine (one line, the worker gets the message as an `error` frame).
    ctx.delegateFunctions((fn) => {
      const invocation = parseInvocation(fn.invocation, config, allowed, env);
      ctx.logger.debug({ function_id: fn.id, worker_id: fn.worker_id, method: invocation.method, url: invocation.shownUrl }, 'HTTP function registered');
      return (data, call) => caller.call(invocation, call.functionId, data, call);
    });
    const s = config.security;
    const rules = [
      s.url_allowlist.length > 0 ? `${s.url_allowlist.length} allowed URL pattern(s)` : 'any URL',
      s.block_private_addresses ? 'private addresses blocked' : 'private addresses allowed',
      ...(s.require_https ? ['https only'] : []),
    ];
    ctx.logger.info(`http functions: ${rules.join(', ')}`);
  }

  stop(): void {
    this.caller?.close();
  }
}

export const httpFunctionsModule: ModuleDefinition<HttpFunctionsConfig> = {
  name: 'flint-http-functions',
  aliases: ['modules::http_functions::HttpFunctionsModule'],
  configSchema: httpFunctionsConfigSchema,
  create: (config) => new HttpFunctionsModule(config),
};
