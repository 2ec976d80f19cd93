import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerWorker } from '@flint/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { exitOf, flint, startEngine } from './support.js';

const NATS = { host: '127.0.0.1', port: 4222 };

/** Whether a NATS server answers on 127.0.0.1:4222 (it speaks first, with an INFO line). */
function natsReachable(): Promise<string | undefined> {
  return new Promise((done) => {
    const socket = net.connect(NATS);
    const timer = setTimeout(() => finish('no answer within 1 s'), 1000);
    const finish = (problem: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      done(problem);
    };
    socket.once('data', (d) => finish(d.toString().startsWith('INFO {') ? undefined : 'not a NATS server'));
    socket.once('error', (err) => finish((err as NodeJS.ErrnoException).code ?? err.message));
  });
}

const problem = await natsReachable();
if (problem && process.env.FLINT_REQUIRE_SERVICES !== '1') {
  console.warn(
    `[skip] flint cluster tests: NATS at ${NATS.host}:${NATS.port} is not reachable: ${problem} (set FLINT_REQUIRE_SERVICES=1 to make this a failure)`,
  );
}
const run = problem === undefined || process.env.FLINT_REQUIRE_SERVICES === '1';

const dir = mkdtempSync(join(tmpdir(), 'flint-cli-cluster-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!run)('flint cluster', () => {
  it('lists the engines with their link latency and every worker by engine; says when the engine is in no cluster', async () => {
    expect(problem, `NATS at ${NATS.host}:${NATS.port} is needed (FLINT_REQUIRE_SERVICES=1)`).toBeUndefined();
    const name = `cli-${process.pid}-${Date.now()}`;
    const configs = ['a', 'b'].map((node) => {
      const file = join(dir, `${node}.yaml`);
      const cluster = `cluster: { transport: nats, url: nats://${NATS.host}:${NATS.port}, name: ${name}, node_id: ${node}, heartbeat_ms: 100 }`;
      writeFileSync(file, `bridge:\n  port: 0\nlog:\n  level: fatal\n${cluster}\n`);
      return file;
    });
    const engines = [await startEngine(['--config', configs[0] as string]), await startEngine(['--config', configs[1] as string])];
    const workers = engines.map((e, i) => {
      const w = registerWorker(e.url, { workerName: `cli-worker-${i === 0 ? 'a' : 'b'}` });
      w.registerFunction(`${i === 0 ? 'a' : 'b'}::fn`, () => null);
      return w;
    });
    const plain = join(dir, 'plain.yaml');
    writeFileSync(plain, 'bridge:\n  port: 0\nlog:\n  level: fatal\n');
    const alone = await startEngine(['--config', plain]);
    try {
      const [a] = engines as [(typeof engines)[0]];
      let out = '';
      for (let i = 0; i < 50 && !/cli-worker-b/.test(out); i++) {
        out = (await flint(['cluster', '--url', a.url])).stdout;
        await new Promise((r) => setTimeout(r, 100));
      }
      const lines = out.trimEnd().split('\n');
      expect(lines[0]).toBe(`cluster ${name}: 2 engines`);
      expect(lines[1]).toMatch(/^ENGINE\s+BRIDGE\s+VERSION\s+STARTED\s+LAST HEARD\s+LINK\s+WORKERS\s+FUNCTIONS$/);
      expect(lines[2]).toMatch(/^a \(this engine\)\s+ws:\/\/127\.0\.0\.1:\d+\s+\S+\s+\S+\s+-\s+-\s+1\s+1$/);
      expect(lines[3]).toMatch(/^b\s+ws:\/\/127\.0\.0\.1:\d+\s+\S+\s+\S+\s+\d+ ms ago\s+\d+\.\d\d ms\s+1\s+1$/);
      expect(out).toMatch(/\na\s+\S+\s+cli-worker-a\s+node \S+\s+a::fn\n/);
      expect(out).toMatch(/\nb\s+\S+\s+cli-worker-b\s+node \S+\s+b::fn/);
      const json = JSON.parse((await flint(['cluster', '--json', '--url', a.url])).stdout);
      expect(json.members.map((m: { node: string }) => m.node)).toEqual(['a', 'b']);
      const workersOut = (await flint(['workers', '--url', a.url])).stdout;
      expect(workersOut).toMatch(/ENGINE/);
      const none = await flint(['cluster', '--url', alone.url]);
      expect(none.code).not.toBe(0);
      expect(none.stderr).toContain('this engine is not in a cluster');
    } finally {
      await Promise.all(workers.map((w) => w.shutdown()));
      for (const e of [...engines, alone]) {
        e.child.kill('SIGTERM');
        await exitOf(e.child);
      }
    }
  });
});
