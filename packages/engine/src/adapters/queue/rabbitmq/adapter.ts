import type { AdapterFactory } from '../../../core/api/adapters.js';
import { RabbitQueueBackend } from './backend.js';
import { type RabbitmqQueueConfig, rabbitmqQueueConfigSchema } from './config.js';
import { AmqpLink } from './link.js';

/** The `rabbitmq` queue adapter: durable queues on a RabbitMQ broker (AMQP 0-9-1, amqplib). */
export const rabbitmqQueueAdapter: AdapterFactory<'queue', RabbitmqQueueConfig> = {
  family: 'queue',
  name: 'rabbitmq',
  description: 'queues on a RabbitMQ broker (amqp_url, prefix)',
  configSchema: rabbitmqQueueConfigSchema,
  async open(config, env) {
    const link = await AmqpLink.open({
      url: config.amqp_url,
      connectTimeoutMs: config.connect_timeout_ms,
      publishTimeoutMs: config.publish_timeout_ms,
      reconnectMaxMs: config.reconnect_max_ms,
      logger: env.logger,
    });
    return new RabbitQueueBackend(link, config, env.logger);
  },
};
