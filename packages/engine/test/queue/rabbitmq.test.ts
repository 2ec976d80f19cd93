/**
 * What the contract suite cannot show about the `rabbitmq` queue adapter: how it fails (an unreachable
 * broker, a bad config) and how it lives through a lost connection. Runs against the real broker
 * (FLINT_TEST_AMQP_URL, default amqp://guest:guest@127.0.0.1:5672), skipped when it is absent.
 */
import { type Delivery, type QueueBackend, openAdapter } from '@flint/engine';
import { FlintError } from '@flint/protocol';
import { afterEach, describe, expect, test } from 'vitest';
import { AMQP_URL, deleteRabbitObjects, rabbitmq, uniquePrefix } from '../support/queue/rabbitmq.js';
import { gateService } from '../support/services/services.js';

const run = gateService('RabbitMQ queue adapter', rabbitmq);
const opts = { configDir: process.cwd() };

describe('rabbitmq queue adapter: config and an unreachable broker', () => {
  test('an unreachable broker fails fast with queue_unavailable naming the URL without its password', async () => {
    const started = Date.now();
    const err = await openAdapter(
      'queue',
      { name: 'rabbitmq', config: { amqp_url: 'amqp://flint:s3cret-pw@127.0.0.1:1', connect_timeout_ms: 2000 } },
      opts,
    ).catch((e) => e);
    expect(err).toBeInstanceOf(FlintError);
    expect(err.code).toBe('queue_unavailable');
    expect(err.message).toContain('amqp://flint:***@127.0.0.1:1');
    expect(err.message).not.toContain('s3cret-pw');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test('a bad config is refused, naming the key, not its value', async () => {
    for (const config of [{ amqp_url: 42 }, { prefix: '' }, { fifo_prefetch: 0 }, { no_such_key: true }]) {
      const err = await openAdapter('queue', { name: 'rabbitmq', config }, opts).catch((e) => e);
      expect(err).toBeInstanceOf(FlintError);
      expect(err.message).toMatch(/invalid queue adapter/);
    }
    const err = await openAdapter('queue', { name: 'rabbitmq', config: { amqp_url: 'amqp://u:hidden-pw@h', prefix: 5 } }, opts).catch((e) => e);
    expect(err.message).not.toContain('hidden-pw');
  });
});

describe.skipIf(!run)('rabbitmq queue adapter: a lost connection', () => {
  let prefix: string | undefined;
  let q: QueueBackend | undefined;

  afterEach(async () => {
    await q?.close();
    q = undefined;
    if (prefix) await deleteRabbitObjects(prefix);
    prefix = undefined;
  });

  test('publishes fail fast with queue_unavailable while down; then it reconnects and consumers resume', async () => {
    prefix = uniquePrefix();
    q = await openAdapter('queue', { name: 'rabbitmq', config: { amqp_url: AMQP_URL, prefix, reconnect_max_ms: 200 } }, opts);
    const got: Delivery[] = [];
    q.consume('jobs', { concurrency: 2, fifo: false, visibilityTimeoutMs: 30_000 }, (d, settle) => {
      got.push(d);
      settle({ type: 'ack' });
    });
    await q.publish('jobs', { data: 'before' });
    await waitFor(() => got.length === 1);

    // Close the adapter's connection as the broker would (the socket goes away under it).
    (q as unknown as { link: { dropForTest(): void } }).link.dropForTest();
    const started = Date.now();
    const err = await q.publish('jobs', { data: 'while down' }).catch((e) => e);
    expect(err).toBeInstanceOf(FlintError);
    expect(err.code).toBe('queue_unavailable');
    expect(err.message).not.toContain('guest:guest');
    expect(Date.now() - started).toBeLessThan(1000);

    // Back within the back-off: publishing works again and the consumer was restored.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const ok = await q.publish('jobs', { data: 'after' }).then(
        () => true,
        () => false,
      );
      if (ok) break;
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
    await waitFor(() => got.some((d) => d.data === 'after'));
    expect(got.map((d) => d.data)).not.toContain('while down');
  });
});

async function waitFor(ok: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
