import { createServer } from 'node:http';
import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { type HttpConfig, httpConfigSchema } from './config.js';
import { HttpPipeline } from './pipeline.js';
import { RouteTable } from './routes.js';
import { httpTriggerConfigSchema, httpTriggerRequestFormat } from './trigger-config.js';

/** `flint-http`: HTTP routes from `http` triggers, with middleware, conditions and streamed responses. */
class HttpModule implements EngineModule {
  readonly name = 'flint-http';
  readonly routes = new RouteTable();

  constructor(private readonly config: HttpConfig) {}

  async start(ctx: ModuleContext): Promise<void> {
    const pipeline = new HttpPipeline(ctx, this.config, this.routes, ctx.logger);
    ctx.registerTriggerType(
      {
        id: 'http',
        description: 'HTTP route: api_path, http_method, optional condition_function_id and middleware_function_ids',
        trigger_request_format: httpTriggerRequestFormat,
        configSchema: httpTriggerConfigSchema,
      },
      {
        registerTrigger: (t) => {
          this.routes.add(t);
          ctx.logger.debug({ trigger_id: t.id, function_id: t.function_id }, 'route added');
        },
        unregisterTrigger: (t) => this.routes.remove(t.id),
      },
    );
    const { host, port, max_connections, headers_timeout_ms, request_timeout_ms, keep_alive_timeout_ms } = this.config;
    const server = createServer({ noDelay: true, keepAliveTimeout: keep_alive_timeout_ms, requestTimeout: request_timeout_ms }, (req, res) =>
      pipeline.handle(req, res),
    );
    await ctx.listen({
      name: 'http',
      host,
      port,
      portKey: 'port',
      server,
      maxConnections: max_connections,
      maxConnectionsKey: 'max_connections',
      headersTimeoutMs: headers_timeout_ms,
    });
  }
}

export const httpModule: ModuleDefinition<HttpConfig> = {
  name: 'flint-http',
  aliases: ['modules::api::RestApiModule'],
  configSchema: httpConfigSchema,
  create: (config) => new HttpModule(config),
};
