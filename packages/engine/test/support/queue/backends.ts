/**
 * The queue backends the contract suite (and the queue module's tests) run against. Each entry opens a
 * fresh, isolated place per test and removes it afterwards.
 *
 * - builtin file_based: a temp folder per test, removed in cleanup.
 * - redis: the real server at FLINT_TEST_REDIS_URL (default redis://127.0.0.1:6379), a unique `prefix`
 *   per test, every key under it deleted in cleanup.
 * - rabbitmq: the real broker at FLINT_TEST_AMQP_URL, a unique name prefix per test, every queue and
 *   exchange it declared deleted in cleanup.
 *
 * Without a reachable server an entry is skipped with a printed reason, or fails when
 * FLINT_REQUIRE_SERVICES=1.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteKeysWithPrefix } from '../services/redis-server.js';
import { gateService, serviceAvailable } from '../services/services.js';
import { AMQP_URL, deleteRabbitObjects, rabbitmq, uniquePrefix } from './rabbitmq.js';

export const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('Redis queue tests', await serviceAvailable('redis', REDIS_URL));

/** One test's queue backend: an adapter reference for `openAdapter('queue', ref)`, reopenable. */
export interface QueueLocation {
  ref: { name: string; config?: Record<string, unknown> };
  configDir: string;
  cleanup(): Promise<void>;
}

export interface QueueBackendCase {
  name: string;
  /** False when its server is not reachable here (the reason was printed). */
  available: boolean;
  /** Whether messages survive closing and reopening the same location. */
  persistent: boolean;
  prepare(): Promise<QueueLocation>;
}

export const QUEUE_BACKENDS: QueueBackendCase[] = [
  {
    name: 'builtin in_memory',
    available: true,
    persistent: false,
    async prepare() {
      return { ref: { name: 'builtin', config: { store_method: 'in_memory' } }, configDir: process.cwd(), async cleanup() {} };
    },
  },
  {
    name: 'builtin file_based',
    available: true,
    persistent: true,
    async prepare() {
      // A temp folder per test (absolute: engines started by the module tests resolve relative paths against their own folder).
      const configDir = await mkdtemp(join(tmpdir(), 'flint-queue-contract-'));
      return {
        ref: { name: 'builtin', config: { store_method: 'file_based', file_path: join(configDir, 'queues') } },
        configDir,
        async cleanup() {
          await rm(configDir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'redis',
    available: runRedis,
    persistent: true,
    async prepare() {
      const prefix = `flint-test:${randomUUID()}`;
      return {
        ref: { name: 'redis', config: { redis_url: REDIS_URL, prefix } },
        configDir: tmpdir(),
        cleanup: () => deleteKeysWithPrefix(REDIS_URL, prefix),
      };
    },
  },
  {
    name: 'rabbitmq',
    available: gateService('RabbitMQ queue contract', rabbitmq),
    persistent: true,
    async prepare() {
      const prefix = uniquePrefix();
      return {
        ref: { name: 'rabbitmq', config: { amqp_url: AMQP_URL, prefix } },
        configDir: process.cwd(),
        cleanup: () => deleteRabbitObjects(prefix),
      };
    },
  },
];
