import { type Server, createServer } from 'node:http';
import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { type HttpConfig, httpConfigSchema } from './config.js';
import { HttpPipeline } from './pipeline.js';
import { RouteTable } from './routes.js';

/** `flint-http`: HTTP routes from `http` triggers, with middleware, conditions and streamed responses. */
class HttpModule implements EngineModule {
  readonly name = 'flint-http';
  private server: Server | undefined;
  private url = '';
  readonly routes = new RouteTable();

  constructor(private readonly config: HttpConfig) {}

  async start(ctx: ModuleContext): Promise<void> {
    const pipeline = new HttpPipeline(ctx, this.config, this.routes, ctx.logger);
    ctx.registerTriggerType(
      {
        id: 'http',
        description: 'HTTP route: api_path, http_method, optional condition_function_id and middleware_function_ids',
        trigger_request_format: {
          type: 'object',
          required: ['api_path', 'http_method'],
          properties: {
            api_path: { type: 'string' },
            http_method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] },
            condition_function_id: { type: 'string' },
            middleware_function_ids: { type: 'array', items: { type: 'string' } },
          },
        },
      },
      {
        registerTrigger: (t) => {
          this.routes.add(t);
          ctx.logger.debug({ trigger_id: t.id, function_id: t.function_id }, 'route added');
        },
        unregisterTrigger: (t) => this.routes.remove(t.id),
      },
    );
    const server = createServer({ noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => pipeline.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.port, this.config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : this.config.port;
    this.url = `http://${this.config.host.includes(':') ? `[${this.config.host}]` : this.config.host}:${port}`;
  }

  drain(): void {
    this.server?.close();
    this.server?.closeIdleConnections();
  }

  stop(): void {
    this.server?.closeAllConnections();
  }

  listeners(): { name: string; url: string }[] {
    return this.url ? [{ name: 'http', url: this.url }] : [];
  }
}

export const httpModule: ModuleDefinition<HttpConfig> = {
  name: 'flint-http',
  aliases: ['modules::api::RestApiModule'],
  configSchema: httpConfigSchema,
  create: (config) => new HttpModule(config),
};
