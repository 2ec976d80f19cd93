import type { EngineModule, ModuleContext, ModuleDefinition } from '../../core/module-api.js';
import { jsonWithin } from '../../lib/json-size.js';
import { type StreamConfig, streamConfigSchema } from './config.js';
import { registerStreamFunctions } from './functions.js';
import { StreamHub } from './hub.js';
import { StreamItems } from './items.js';
import { StreamListener } from './listener.js';
import { StreamSessions } from './sessions.js';
import { JoinLeaveTriggers, StreamTriggers, joinLeaveTriggerConfigSchema, streamTriggerConfigSchema } from './triggers.js';

const joinLeaveEvent = {
  type: 'object',
  properties: {
    subscription_id: { type: 'string' },
    stream_name: { type: 'string' },
    group_id: { type: 'string' },
    id: { type: ['string', 'null'] },
    item_id: { type: ['string', 'null'] },
    context: {},
  },
};
const joinLeaveFormat = {
  type: 'object',
  additionalProperties: false,
  properties: { stream_name: { type: 'string' }, condition_function_id: { type: 'string' } },
};

/** `flint-stream`: stream → group → item values pushed live to WebSocket subscribers, with change, join and leave triggers. */
class StreamModule implements EngineModule {
  readonly name = 'flint-stream';
  private hub: StreamHub | undefined;
  private sessions: StreamSessions | undefined;

  constructor(private readonly config: StreamConfig) {}

  async start(ctx: ModuleContext): Promise<void> {
    const store = await ctx.adapter('stream', this.config.adapter);
    const maxValueBytes = this.config.max_value_bytes;
    const checkSize = (field: string, value: unknown): string => jsonWithin(field, value, maxValueBytes, 'max_value_bytes');
    const triggers = new StreamTriggers(ctx);
    const joins = new JoinLeaveTriggers(ctx, 'stream:join');
    const leaves = new JoinLeaveTriggers(ctx, 'stream:leave');
    ctx.registerTriggerType(
      {
        id: 'stream',
        description: 'Fires with every change and custom event of a stream: config stream_name, group_id?, item_id?, condition_function_id?',
        trigger_request_format: {
          type: 'object',
          required: ['stream_name'],
          additionalProperties: false,
          properties: { stream_name: { type: 'string' }, group_id: { type: 'string' }, item_id: { type: 'string' }, condition_function_id: { type: 'string' } },
        },
        configSchema: streamTriggerConfigSchema,
        call_request_format: {
          type: 'object',
          properties: {
            type: { const: 'stream' },
            timestamp: { type: 'number' },
            streamName: { type: 'string' },
            groupId: { type: 'string' },
            id: { type: ['string', 'null'] },
            event: { type: 'object' },
          },
        },
      },
      triggers,
    );
    ctx.registerTriggerType(
      {
        id: 'stream:join',
        description: 'Runs when a client joins a stream group or item; answer {unauthorized: true} to refuse. Config: stream_name?, condition_function_id?',
        trigger_request_format: joinLeaveFormat,
        configSchema: joinLeaveTriggerConfigSchema,
        call_request_format: joinLeaveEvent,
      },
      joins,
    );
    ctx.registerTriggerType(
      {
        id: 'stream:leave',
        description: 'Runs when a client leaves a subscription or disconnects. Config: stream_name?, condition_function_id?',
        trigger_request_format: joinLeaveFormat,
        configSchema: joinLeaveTriggerConfigSchema,
        call_request_format: joinLeaveEvent,
      },
      leaves,
    );
    const items = new StreamItems(ctx, store, checkSize);
    this.hub = new StreamHub(store, triggers, ctx.logger);
    this.sessions = new StreamSessions(ctx, this.config, this.hub, items, joins, leaves);
    registerStreamFunctions(ctx, items, this.hub, checkSize);
    await new StreamListener(ctx, this.config, this.sessions).listen();
    ctx.logger.info(
      `stream store: ${store.kind}${store.kind === 'in_memory' ? ' (lost on restart)' : ''}${store.shared ? ', shared with the engines on it' : ''}`,
    );
  }

  drain(): void {
    this.sessions?.stop();
  }

  stop(): void {
    this.hub?.stop();
  }
}

export const streamModule: ModuleDefinition<StreamConfig> = {
  name: 'flint-stream',
  aliases: ['modules::stream::StreamModule'],
  configSchema: streamConfigSchema,
  adapters: { adapter: 'stream' },
  create: (config) => new StreamModule(config),
};
