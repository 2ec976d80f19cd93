/**
 * The RabbitMQ the queue tests run against, and the clean-up of one test's objects: the adapter
 * writes every queue and exchange it declares into `<prefix>.registry`, so a test deletes exactly
 * what it created (plus the registry) without the management API.
 */
import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { serviceAvailable } from '../services/services.js';

export const AMQP_URL = process.env.FLINT_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export const rabbitmq = await serviceAvailable('rabbitmq', AMQP_URL);

/** A prefix no other test uses. */
export function uniquePrefix(): string {
  return `flint-test.${randomUUID().slice(0, 8)}`;
}

/** Deletes every queue and exchange listed in `<prefix>.registry`, then the registry. */
export async function deleteRabbitObjects(prefix: string): Promise<void> {
  const model = await amqp.connect(AMQP_URL);
  try {
    const ch = await model.createChannel();
    const registry = `${prefix}.registry`;
    const records: { kind: string; name: string }[] = [];
    for (;;) {
      const m = await ch.get(registry, { noAck: true }).catch(() => false as const);
      if (m === false) break;
      records.push(JSON.parse(m.content.toString()));
    }
    const live = await model.createChannel();
    for (const r of records) {
      if (r.kind === 'exchange') await live.deleteExchange(r.name);
      else await live.deleteQueue(r.name);
    }
    await live.deleteQueue(registry);
  } finally {
    await model.close();
  }
}
