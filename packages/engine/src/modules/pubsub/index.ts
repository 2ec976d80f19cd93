import { FlintError } from '@flint/protocol';
import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { jsonWithin } from '../../lib/json-size.js';
import { payloadObject } from '../../lib/payload.js';
import { type PubSubConfig, pubsubConfigSchema } from './config.js';
import { type Envelope, Subscribers, subscribeTriggerConfigSchema } from './subscribers.js';

/** `flint-pubsub`: non-durable topics: `publish` reaches every `subscribe` trigger of the topic listening at that moment. */
class PubSubModule implements EngineModule {
  readonly name = 'flint-pubsub';

  constructor(private readonly config: PubSubConfig) {}

  async start(ctx: ModuleContext): Promise<void> {
    const bus = await ctx.adapter('pubsub', this.config.adapter);
    const subscribers = new Subscribers(ctx, bus);
    ctx.registerTriggerType(
      {
        id: 'subscribe',
        description: 'Runs with every message published to a topic (not durable: see flint-queue for that). Config: topic, condition_function_id?',
        trigger_request_format: {
          type: 'object',
          required: ['topic'],
          additionalProperties: false,
          properties: { topic: { type: 'string' }, condition_function_id: { type: 'string' } },
        },
        configSchema: subscribeTriggerConfigSchema,
      },
      subscribers,
    );
    const max = this.config.max_message_bytes;
    ctx.registerFunction(
      {
        id: 'publish',
        description: 'Send data to every subscriber of a topic listening now (no storage, no retry)',
        request_format: { type: 'object', required: ['topic'], properties: { topic: { type: 'string', minLength: 1 }, data: {} } },
      },
      async (input, call) => {
        const d = payloadObject(input);
        if (typeof d.topic !== 'string' || d.topic === '')
          throw new FlintError('invalid_payload', d.topic === undefined || d.topic === null ? 'topic is required' : 'topic must be a non-empty string');
        const envelope: Envelope = { data: d.data ?? null, traceparent: call.traceparent, baggage: call.baggage };
        // The message's size is that of what travels: the data with its trace context.
        await bus.publish(d.topic, jsonWithin('data', envelope, max, 'max_message_bytes'));
        return null;
      },
    );
    ctx.registerFunction(
      { id: 'engine::pubsub::topics', description: 'Topics with subscribers on this engine: [{topic, subscribers}]', request_format: { type: 'object' } },
      async () => ({ topics: subscribers.counts(), adapter: bus.kind }),
    );
    ctx.logger.info(`pubsub: ${bus.kind}${bus.shared ? ' (every engine on it)' : ' (this engine only)'}`);
  }
}

export const pubsubModule: ModuleDefinition<PubSubConfig> = {
  name: 'flint-pubsub',
  aliases: ['modules::pubsub::PubSubModule'],
  configSchema: pubsubConfigSchema,
  adapters: { adapter: 'pubsub' },
  create: (config) => new PubSubModule(config),
};
