/**
 * What the contract suite cannot show about the `rabbitmq` queue adapter: how it fails (an unreachable
 * broker, a bad config) and how it lives through a lost connection. Runs against the real broker
 * (FLINT_TEST_AMQP_URL, default amqp://guest:guest@127.0.0.1:5672), skipped when it is absent.
 */

import { Socket } from 'node:net';
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

describe.skipIf(!run)('rabbitmq queue adapter: writes to the broker', () => {
  test('a burst of publishes goes to the broker in a few socket writes, not one per frame', async () => {
    const prefix = uniquePrefix();
    const q = await openAdapter('queue', { name: 'rabbitmq', config: { amqp_url: AMQP_URL, prefix } }, opts);
    // Counts the writes this process makes to the broker's port (the adapter runs in this process).
    const port = Number(new URL(AMQP_URL).port || 5672);
    let writes = 0;
    const proto = Socket.prototype as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
    const original = { _write: proto._write, _writev: proto._writev };
    for (const name of ['_write', '_writev'] as const)
      proto[name] = function (this: Socket, ...args: unknown[]) {
        if (this.remotePort === port) writes++;
        return original[name].apply(this, args);
      };
    try {
      await q.publish('burst', { data: 'warm-up' }); // declares the queue: later publishes are frames only
      // Nothing consumes during the burst: a consumer's acks go out on the same connection and would be
      // counted with the publishes (under load they did: 8 writes).
      writes = 0;
      await Promise.all(Array.from({ length: 50 }, (_, n) => q.publish('burst', { data: n })));
      const publishWrites = writes;
      const got: Delivery[] = [];
      q.consume('burst', { concurrency: 100, fifo: false, visibilityTimeoutMs: 30_000 }, (d, settle) => {
        got.push(d);
        settle({ type: 'ack' });
      });
      await waitFor(() => got.length === 51);
      // Each publish is a frame of its own in amqplib; one write each would be 50.
      expect(publishWrites).toBeGreaterThan(0);
      expect(publishWrites).toBeLessThanOrEqual(5);
      expect(got.slice(1).map((d) => d.data)).toEqual(Array.from({ length: 50 }, (_, n) => n));
    } finally {
      Object.assign(proto, original);
      await q.close();
      await deleteRabbitObjects(prefix);
    }
  });
});

async function waitFor(ok: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
