import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
    name: 'builtin file_based',
    available: true,
    persistent: true,
    async prepare() {
      // A temp folder per test; file_path is relative, resolved against configDir as in an engine's config.
      const configDir = await mkdtemp(join(tmpdir(), 'flint-queue-contract-'));
      return {
        ref: { name: 'builtin', config: { store_method: 'file_based', file_path: 'queues' } },
        configDir,
        async cleanup() {
          await rm(configDir, { recursive: true, force: true });
        },
      };
    },
  },
];
