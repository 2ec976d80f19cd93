import type { QueueBackend } from '../../adapters/queue/types.js';
import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { QueueCatalog } from './catalog.js';
import { type QueueConfig, queueConfigSchema } from './config.js';
import { registerQueueFunctions } from './functions.js';
import { NamedQueues } from './named-queues.js';
import { CounterTable } from './rates.js';
import { subscriberConfigSchema } from './subscriber-config.js';
import { Subscribers } from './subscribers.js';
import { Unrouted } from './unrouted.js';

/** `flint-queue`: durable topics (`flint::durable::publish`, `durable:subscriber`) and named function queues. */
class QueueModule implements EngineModule {
  readonly name = 'flint-queue';
  private subscribers: Subscribers | undefined;
  private named: NamedQueues | undefined;

  constructor(private readonly config: QueueConfig) {}

  async start(ctx: ModuleContext): Promise<void> {
    // A backend that cannot be reached stops start-up (never a silent fall-back to memory); the engine
    // closes it after the module has stopped.
    const backend: QueueBackend = await ctx.adapter('queue', this.config.adapter);
    const counters = new CounterTable();
    const unrouted = new Unrouted(backend, this.config.unrouted_max, ctx.logger);
    const subscribers = new Subscribers(ctx, backend, this.config.defaults, counters);
    this.subscribers = subscribers;
    ctx.registerTriggerType(
      {
        id: 'durable:subscriber',
        description: 'Handles every message published to a topic: config topic, condition_function_id?, queue_config?',
        trigger_request_format: {
          type: 'object',
          required: ['topic'],
          properties: { topic: { type: 'string', minLength: 1 }, condition_function_id: { type: 'string' }, queue_config: { type: 'object' } },
        },
        call_request_format: { description: 'exactly the published data' },
        configSchema: subscriberConfigSchema,
      },
      subscribers,
    );
    const named = new NamedQueues(ctx, backend, this.config.queue_configs, counters);
    this.named = named;
    named.start();
    registerQueueFunctions({ ctx, backend, catalog: new QueueCatalog(backend, subscribers, this.config.queue_configs, counters, unrouted), unrouted });
    const queues = Object.keys(this.config.queue_configs).length;
    ctx.logger.info(
      `queue backend: ${backend.kind}${backend.kind === 'in_memory' ? ' (lost on restart)' : ''}${queues > 0 ? `, ${queues} named queue${queues === 1 ? '' : 's'}` : ''}`,
    );
  }

  /** Takes no new messages and waits for the handlers running; messages not taken stay queued. */
  async drain(): Promise<void> {
    await Promise.all([this.subscribers?.drain(), this.named?.drain()]);
  }
}

export const queueModule: ModuleDefinition<QueueConfig> = {
  name: 'flint-queue',
  aliases: ['modules::queue::QueueModule', 'iii-queue'],
  configSchema: queueConfigSchema,
  adapters: { adapter: 'queue' },
  create: (config) => new QueueModule(config),
};
