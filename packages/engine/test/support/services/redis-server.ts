/**
 * Redis helpers for tests: a throw-away `redis-server` child process on a free port (to kill and restart
 * under a store), and removal of the keys a test wrote under its prefix.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort, sleep } from '../util.js';
import { serviceAvailable } from './services.js';

/** `*?[]\` escaped for a SCAN MATCH pattern. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\^]/g, '\\$&');
}

/** Deletes every key that starts with `prefix` (a test's unique key prefix). */
export async function deleteKeysWithPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${escapeGlob(prefix)}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  } finally {
    redis.disconnect();
  }
}

/**
 * A `redis-server` started by the test (no persistence, password `password`), which can be killed and
 * started again on the same port. `stop()` kills it if it still runs; call it in afterAll/afterEach.
 */
export class SpareRedisServer {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'flint-redis-'));

  private constructor(
    readonly port: number,
    readonly password: string,
  ) {}

  static async start(password = 'secret'): Promise<SpareRedisServer> {
    const server = new SpareRedisServer(await freePort(), password);
    await server.restart();
    return server;
  }

  /** `redis://:<password>@127.0.0.1:<port>`. */
  get url(): string {
    return `redis://:${this.password}@127.0.0.1:${this.port}`;
  }

  /** Starts the server (again) on its port and waits until it answers PING. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('redis-server is already running');
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir, '--requirepass', this.password];
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    this.child = child;
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
    });
    const deadline = Date.now() + 5000;
    for (;;) {
      const status = await serviceAvailable('redis', this.url, { timeoutMs: 500 });
      if (status.available) return;
      if (!this.child) throw new Error(`redis-server on port ${this.port} exited while starting`);
      if (Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start: ${status.reason}`);
      await sleep(50);
    }
  }

  /** SIGKILL (a crash: no goodbye to clients) and wait until the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  /** SIGSTOP / SIGCONT: the server keeps its connections open but answers nothing (a hung host). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    this.resume();
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
