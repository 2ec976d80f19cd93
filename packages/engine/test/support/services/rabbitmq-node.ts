/**
 * A RabbitMQ node of the test's own (`rabbitmq-server` on free ports, its data in a temp folder), so that
 * a test can stop and start the broker application (`rabbitmqctl stop_app` / `start_app`) without
 * disturbing the shared broker other tests use. Debian's `rabbitmq-server` runs as the `rabbitmq`
 * user, so the folder is handed to that user: this needs root (as in CI); elsewhere `spareNodeStatus`
 * says why it cannot run.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, sleep } from '../util.js';
import { type ServiceStatus, serviceAvailable } from './services.js';

/** Whether a spare node can be started here, and why not. */
export function spareNodeStatus(): ServiceStatus {
  const base = { service: 'rabbitmq-server', where: 'a spare node on this machine' };
  if (spawnSync('sh', ['-c', 'command -v rabbitmq-server && command -v rabbitmqctl'], { stdio: 'ignore' }).status !== 0) {
    return { ...base, available: false, reason: 'rabbitmq-server/rabbitmqctl are not installed' };
  }
  if (process.getuid?.() !== 0) return { ...base, available: false, reason: 'starting a spare RabbitMQ node as the rabbitmq user needs root' };
  const user = spawnSync('id', ['-u', 'rabbitmq'], { encoding: 'utf8' });
  if (user.status !== 0) return { ...base, available: false, reason: 'there is no rabbitmq user' };
  return { ...base, available: true, reason: '' };
}

export class SpareRabbitNode {
  private child: ChildProcess | undefined;

  private constructor(
    readonly node: string,
    readonly port: number,
    private readonly dir: string,
  ) {}

  /** Starts the node and waits (up to a minute) until it speaks AMQP. */
  static async start(): Promise<SpareRabbitNode> {
    const dir = mkdtempSync(path.join(tmpdir(), 'flint-rabbit-'));
    const [port, distPort] = [await freePort(), await freePort()];
    const node = new SpareRabbitNode(`flint-test-${randomUUID().slice(0, 8)}@localhost`, port, dir);
    for (const sub of ['mnesia', 'log']) mkdirSync(path.join(dir, sub));
    writeFileSync(path.join(dir, 'enabled_plugins'), '[].\n');
    const uid = Number(spawnSync('id', ['-u', 'rabbitmq'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'rabbitmq'], { encoding: 'utf8' }).stdout.trim());
    for (const p of [dir, path.join(dir, 'mnesia'), path.join(dir, 'log'), path.join(dir, 'enabled_plugins')]) chownSync(p, uid, gid);
    node.child = spawn('rabbitmq-server', [], {
      stdio: 'ignore',
      env: {
        ...process.env,
        RABBITMQ_NODENAME: node.node,
        RABBITMQ_NODE_PORT: String(port),
        RABBITMQ_DIST_PORT: String(distPort),
        RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
        RABBITMQ_LOG_BASE: path.join(dir, 'log'),
        RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
        RABBITMQ_FEATURE_FLAGS_FILE: path.join(dir, 'feature_flags'),
        RABBITMQ_QUORUM_DIR: path.join(dir, 'quorum'),
        RABBITMQ_STREAM_DIR: path.join(dir, 'stream'),
        RABBITMQ_CONFIG_FILE: path.join(dir, 'none'),
      },
    });
    await node.waitUp(60_000);
    return node;
  }

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  /** `rabbitmqctl stop_app`: the broker closes every connection; the node (and its data) stays. */
  stopApp(): Promise<void> {
    return this.ctl('stop_app');
  }

  /** `rabbitmqctl start_app`, then waits until it speaks AMQP again. */
  async startApp(): Promise<void> {
    await this.ctl('start_app');
    await this.waitUp(30_000);
  }

  async stop(): Promise<void> {
    await this.ctl('stop').catch(() => this.child?.kill('SIGKILL'));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private ctl(command: string): Promise<void> {
    return new Promise((resolve, reject) => {
      execFile('rabbitmqctl', ['-n', this.node, command], { timeout: 30_000 }, (err, _out, stderr) =>
        err ? reject(new Error(`rabbitmqctl ${command}: ${stderr || err.message}`)) : resolve(),
      );
    });
  }

  private async waitUp(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await serviceAvailable('rabbitmq', this.url, { timeoutMs: 500 });
      if (status.available) return;
      if (Date.now() > deadline) throw new Error(`RabbitMQ node ${this.node} did not come up on port ${this.port}: ${status.reason}`);
      await sleep(200);
    }
  }
}
