/**
 * Decides whether a test that needs an external service (Redis, RabbitMQ, NATS now; PostgreSQL later) runs.
 *
 * The rule (design.md §7): adapter tests use the real servers. Where a server is absent (a laptop) the tests
 * are skipped with one printed reason, never faked; with `FLINT_REQUIRE_SERVICES=1` (set by `.ci/run`) a
 * missing server is a failure instead.
 *
 * Usage, with top-level await in a test file:
 *
 *   const redis = await serviceAvailable('redis', REDIS_URL);
 *   const runRedis = gateService('Redis tests', redis);
 *   describe.skipIf(!runRedis)('…', () => { … });
 *
 * To add a service: write a `ServiceCheck` (what to send on a fresh TCP connection and how to recognise the
 * answer) and add it to `CHECKS` with its default port.
 */
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { describe, test } from 'vitest';

export interface ServiceStatus {
  /** The service's name as passed in (`redis`). */
  service: string;
  /** `host:port` that was probed (no credentials). */
  where: string;
  available: boolean;
  /** Why it is not available (empty when it is). */
  reason: string;
}

/** Talks to a freshly opened TCP connection; resolves when the peer is the service and healthy, else throws. */
export type ServiceCheck = (socket: net.Socket, url: URL, timeoutMs: number) => Promise<void>;

interface ServiceDefinition {
  defaultPort: number;
  check: ServiceCheck;
}

/** True when `.ci/run` (or a developer) asks for external services to be present. */
export function servicesRequired(): boolean {
  return process.env.FLINT_REQUIRE_SERVICES === '1';
}

// ---------------------------------------------------------------------------------------------
// Generic TCP plumbing
// ---------------------------------------------------------------------------------------------

/** Opens a TCP connection or rejects (refused, unreachable, or no answer within `timeoutMs`). */
export function connectTcp(host: string, port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no TCP connection within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    });
  });
}

/** Writes `request` (if any) and collects the reply until `complete(received)` is true; rejects on time-out or close. */
export function exchange(
  socket: net.Socket,
  request: Buffer | string | undefined,
  complete: (received: Buffer) => boolean,
  timeoutMs: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const finish = (err: Error | undefined) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      if (err) reject(err);
      else resolve(received);
    };
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (complete(received)) finish(undefined);
    };
    const onError = (err: Error) => finish(err);
    const onClose = () => finish(new Error(`connection closed after ${received.length} bytes of reply`));
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
    if (request !== undefined) socket.write(request);
  });
}

// ---------------------------------------------------------------------------------------------
// Per-service checks
// ---------------------------------------------------------------------------------------------

/** Encodes a command in RESP (what redis-cli sends). */
function resp(...args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** Redis: (AUTH if the URL has credentials, then) PING must answer +PONG. */
const redisCheck: ServiceCheck = async (socket, url, timeoutMs) => {
  const line = (b: Buffer) => b.includes('\r\n');
  if (url.password) {
    const auth = url.username
      ? resp('AUTH', decodeURIComponent(url.username), decodeURIComponent(url.password))
      : resp('AUTH', decodeURIComponent(url.password));
    const answer = (await exchange(socket, auth, line, timeoutMs)).toString().trim();
    if (!answer.startsWith('+OK')) throw new Error(`AUTH answered ${JSON.stringify(answer)}`);
  }
  const answer = (await exchange(socket, resp('PING'), line, timeoutMs)).toString().trim();
  if (answer !== '+PONG') throw new Error(`PING answered ${JSON.stringify(answer)}`);
};

/** The AMQP 0-9-1 protocol header a client opens with. */
const AMQP_091_HEADER = Buffer.from([0x41, 0x4d, 0x51, 0x50, 0x00, 0x00, 0x09, 0x01]);

/**
 * RabbitMQ: after the AMQP 0-9-1 protocol header the broker must answer with a Connection.Start
 * method frame: type 1, channel 0, then class 10 (connection) method 10 (start) at the payload's start,
 * and the frame-end octet 0xCE after the payload. (A broker that does not speak 0-9-1 answers with its
 * own protocol header instead.)
 */
const rabbitmqCheck: ServiceCheck = async (socket, _url, timeoutMs) => {
  const frameComplete = (b: Buffer) => b.length >= 7 && (b[0] !== 1 || b.length >= 8 + b.readUInt32BE(3));
  const answer = await exchange(socket, AMQP_091_HEADER, frameComplete, timeoutMs);
  if (answer.subarray(0, 4).toString('latin1') === 'AMQP') throw new Error(`the server wants AMQP protocol ${[...answer.subarray(4, 8)].join('.')}`);
  const type = answer[0];
  const channel = answer.readUInt16BE(1);
  const size = answer.readUInt32BE(3);
  const classId = answer.length >= 9 ? answer.readUInt16BE(7) : -1;
  const methodId = answer.length >= 11 ? answer.readUInt16BE(9) : -1;
  if (type !== 1 || channel !== 0 || classId !== 10 || methodId !== 10 || answer[7 + size] !== 0xce) {
    throw new Error(`no Connection.Start frame (got ${answer.subarray(0, 16).toString('hex')})`);
  }
};

/** NATS: the server speaks first, with an `INFO {…}` line carrying its server_id. */
const natsCheck: ServiceCheck = async (socket, _url, timeoutMs) => {
  const answer = (await exchange(socket, undefined, (b) => b.includes(0x0a), timeoutMs)).toString('utf8');
  if (!answer.startsWith('INFO {') || !answer.includes('"server_id"')) throw new Error(`no NATS INFO line (got ${JSON.stringify(answer.slice(0, 40))})`);
};

const CHECKS: Record<string, ServiceDefinition> = {
  redis: { defaultPort: 6379, check: redisCheck },
  rabbitmq: { defaultPort: 5672, check: rabbitmqCheck },
  nats: { defaultPort: 4222, check: natsCheck },
  // postgres: { defaultPort: 5432, check: send an SSLRequest, expect 'S' or 'N' },
};

/**
 * Probes a service at `url`: a TCP connection, then the service's own check (Redis: PING), each within
 * `timeoutMs`. Never throws; the result says whether to run and, if not, why.
 */
export async function serviceAvailable(service: string, url: string, options: { timeoutMs?: number } = {}): Promise<ServiceStatus> {
  const timeoutMs = options.timeoutMs ?? 1000;
  const definition = CHECKS[service];
  if (!definition) throw new Error(`no probe for service ${JSON.stringify(service)} (known: ${Object.keys(CHECKS).join(', ')})`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { service, where: url, available: false, reason: `${service} URL ${JSON.stringify(url)} cannot be parsed` };
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = parsed.port ? Number(parsed.port) : definition.defaultPort;
  const where = `${parsed.hostname || '127.0.0.1'}:${port}`;
  let socket: net.Socket | undefined;
  try {
    socket = await connectTcp(host, port, timeoutMs);
    await definition.check(socket, parsed, timeoutMs);
    return { service, where, available: true, reason: '' };
  } catch (err) {
    const detail = err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.message) : String(err);
    return { service, where, available: false, reason: `${service} at ${where} is not reachable: ${detail}` };
  } finally {
    socket?.destroy();
  }
}

/** Whether a program can be started (e.g. `redis-server` for tests that start and kill their own server). */
export function programAvailable(command: string, args: string[] = ['--version']): ServiceStatus {
  const result = spawnSync(command, args, { stdio: 'ignore', timeout: 5000 });
  const available = !result.error && result.status === 0;
  const detail = result.error ? ((result.error as NodeJS.ErrnoException).code ?? result.error.message) : `exit status ${result.status}`;
  return { service: command, where: command, available, reason: available ? '' : `${command} cannot be run: ${detail}` };
}

/**
 * Turns a probe result into "run these tests?". Not available and not required: prints one `[skip]` line
 * with the reason and returns false. Not available but required (`FLINT_REQUIRE_SERVICES=1`): registers a
 * failing test carrying the reason (so the file fails) and returns false. Call it at the top level of a
 * test file, before the `describe.skipIf(!…)` it guards.
 */
export function gateService(label: string, status: ServiceStatus): boolean {
  if (status.available) return true;
  if (servicesRequired()) {
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
