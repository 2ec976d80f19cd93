import { gateService } from '../services/services.js';
import { AMQP_URL, deleteRabbitObjects, rabbitmq, uniquePrefix } from './rabbitmq.js';

/**
 * The queue backends the contract suite (and the queue module's tests) run against. Each entry opens a
 * fresh, isolated place per test and removes it afterwards.
 */

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
