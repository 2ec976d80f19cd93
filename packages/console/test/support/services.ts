/**
 * Whether a console test that needs an external service (NATS, for a cluster of engines) runs: the
 * console's copy of the engine's rule (packages/engine/test/support/services/services.ts), for the one
 * service it needs. A server that is absent skips the tests with one printed reason, never faked; with
 * `FLINT_REQUIRE_SERVICES=1` (set by `.ci/run`) it is a failure instead.
 *
 * ```ts
 * const NATS_URL = process.env.FLINT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
 * const runNats = gateService('console cluster tests on NATS', await natsAvailable(NATS_URL));
 * describe.skipIf(!runNats)('…', () => { … });
 * ```
 */
import net from 'node:net';
import { describe, test } from 'vitest';

export interface ServiceStatus {
  service: string;
  available: boolean;
  /** Why it is not available (empty when it is). */
  reason: string;
}

/** NATS: a TCP connection on which the server speaks first, with an `INFO {…}` line carrying its server_id. */
export function natsAvailable(url: string, timeoutMs = 1000): Promise<ServiceStatus> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.resolve({ service: 'nats', available: false, reason: `NATS URL ${JSON.stringify(url)} cannot be parsed` });
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = parsed.port ? Number(parsed.port) : 4222;
  const where = `${parsed.hostname || '127.0.0.1'}:${port}`;
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let received = '';
    const done = (reason: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ service: 'nats', available: reason === '', reason: reason === '' ? '' : `nats at ${where} is not reachable: ${reason}` });
    };
    const timer = setTimeout(() => done(`no INFO line within ${timeoutMs} ms`), timeoutMs);
    socket.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (!received.includes('\n')) return;
      done(received.startsWith('INFO {') && received.includes('"server_id"') ? '' : `no NATS INFO line (got ${JSON.stringify(received.slice(0, 40))})`);
    });
  });
}

/**
 * Turns a probe result into "run these tests?". Not available and not required: prints one `[skip]` line
 * with the reason and returns false. Not available but required (`FLINT_REQUIRE_SERVICES=1`): registers a
 * failing test carrying the reason and returns false. Call it at the top level of a test file.
 */
export function gateService(label: string, status: ServiceStatus): boolean {
  if (status.available) return true;
  if (process.env.FLINT_REQUIRE_SERVICES === '1') {
    describe(`${label} (required: FLINT_REQUIRE_SERVICES=1)`, () => {
      test(`${status.service} is available`, () => {
        throw new Error(`${label} cannot run: ${status.reason}, and FLINT_REQUIRE_SERVICES=1 makes this a failure`);
      });
    });
    return false;
  }
  console.warn(`[skip] ${label}: ${status.reason} (set FLINT_REQUIRE_SERVICES=1 to make this a failure)`);
  return false;
}

/** The NATS server the cluster tests use. */
export const NATS_URL = process.env.FLINT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** Cluster settings for a test's engine: `name` of the test's own (tests never see each other's engines), quick heartbeats. */
export function clusterConfig(name: string, node: string, url = NATS_URL) {
  return { transport: 'nats', url, name, node_id: node, heartbeat_ms: 100, expire_ms: 800 };
}
