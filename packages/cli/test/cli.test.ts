import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Worker, registerWorker } from '@flint/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitOf, flint, freePort, root, startEngine } from './support.js';

let dir: string;
let config: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flint-cli-'));
  config = join(dir, 'flint-config.yaml');
  writeFileSync(config, 'bridge:\n  port: 0\nlog:\n  level: warn\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('flint start + trigger + listings', () => {
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let worker: Worker;

  beforeAll(async () => {
    engine = await startEngine(['--config', config]);
    worker = registerWorker(engine.url, { workerName: 'cli-test-worker' });
    worker.registerFunction('hello::world', (input: { name: string }) => ({ message: `Hello, ${input.name}!` }), { description: 'Greets' });
    worker.registerFunction('test::fail', () => {
      throw new Error('boom');
    });
    worker.registerFunction('test::slow', () => new Promise((r) => setTimeout(() => r('late'), 2000)));
    worker.registerTrigger({ type: 'engine::functions-available', function_id: 'hello::world', config: {} });
    worker.registerTrigger({ type: 'htpp', function_id: 'hello::world', config: {} }); // nobody provides it: parked
    await worker.waitConnected();
    await worker.trigger({ function_id: 'engine::functions::list', payload: {} });
  });

  afterAll(async () => {
    await worker?.shutdown();
    engine?.child.kill('SIGTERM');
    await exitOf(engine.child);
  });

  it('prints a banner with the bridge URL and the config file', () => {
    expect(engine.output()).toContain('Flint 0.1.0 engine is running');
    expect(engine.output()).toContain(config);
    expect(engine.output()).toContain('modules  (none)');
  });

  it('trigger prints the JSON result and exits 0', async () => {
    const run = await flint(['trigger', '--function-id', 'hello::world', '--payload', '{"name":"Ada"}', '--url', engine.url]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ message: 'Hello, Ada!' });
  });

  it('trigger takes the URL from FLINT_URL', async () => {
    const run = await flint(['trigger', '-f', 'hello::world', '-p', '{"name":"Env"}'], { FLINT_URL: engine.url });
    expect(JSON.parse(run.stdout)).toEqual({ message: 'Hello, Env!' });
  });

  it('an error prints code: message on stderr and exits 1', async () => {
    const missing = await flint(['trigger', '--function-id', 'nope::nothing', '--url', engine.url]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr.trim()).toBe('function_not_found: Function nope::nothing not found');
    const failing = await flint(['trigger', '--function-id', 'test::fail', '--url', engine.url]);
    expect(failing.stderr.trim()).toBe('invocation_failed: boom');
  });

  it('a malformed --payload is a one-line error', async () => {
    const run = await flint(['trigger', '--function-id', 'hello::world', '--payload', '{name:', '--url', engine.url]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^invalid_payload: --payload is not valid JSON/);
  });

  it('--timeout-ms bounds the call', async () => {
    const run = await flint(['trigger', '--function-id', 'test::slow', '--timeout-ms', '200', '--url', engine.url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^invocation_timeout: /);
  });

  it('--void returns at once without output', async () => {
    const run = await flint(['trigger', '--function-id', 'hello::world', '--payload', '{"name":"Void"}', '--void', '--url', engine.url]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
  });

  it('functions, triggers and workers print tables, and JSON with --json', async () => {
    const functions = await flint(['functions', '--url', engine.url]);
    expect(functions.code).toBe(0);
    expect(functions.stdout).toMatch(/^FUNCTION\s+PROVIDERS\s+DESCRIPTION/);
    expect(functions.stdout).toMatch(/hello::world\s+cli-test-worker@[0-9a-f]{8}\s+Greets/);
    expect(functions.stdout).not.toContain('engine::functions::list');
    const all = await flint(['functions', '--all', '--url', engine.url]);
    expect(all.stdout).toContain('engine::functions::list');

    const triggers = await flint(['triggers', '--url', engine.url]);
    expect(triggers.stdout).toMatch(/^ID\s+TYPE\s+FUNCTION\s+STATUS\s+CONFIG/);
    expect(triggers.stdout).toMatch(/engine::functions-available\s+hello::world\s+active/);
    expect(triggers.stdout).toMatch(/htpp\s+hello::world\s+parked/);

    const workers = await flint(['workers', '--json', '--url', engine.url]);
    const parsed = JSON.parse(workers.stdout) as { workers: { name: string; function_count: number }[] };
    expect(parsed.workers.map((w) => w.name)).toEqual(['cli-test-worker']);
    expect(parsed.workers[0]?.function_count).toBe(3);
    const table = await flint(['workers', '--url', engine.url]);
    expect(table.stdout).toMatch(/cli-test-worker\s+node 0\.1\.0\s+3\s+0\s+available/);
  });
});

describe('an engine with a bridge token', () => {
  const token = 'cli-bridge-token-7';
  let engine: Awaited<ReturnType<typeof startEngine>>;

  beforeAll(async () => {
    const tokenConfig = join(dir, 'token.yaml');
    writeFileSync(tokenConfig, `bridge:\n  port: 0\n  auth_token: ${token}\nlog:\n  level: warn\n`);
    // The worker gets no token from this environment: flint start hands it FLINT_TOKEN.
    engine = await startEngine(['--config', tokenConfig, '--worker', `node ${join(root, 'examples/hello-world/worker.mjs')}`], {
      env: { FLINT_TOKEN: '' },
    });
  });

  afterAll(async () => {
    engine?.child.kill('SIGTERM');
    await exitOf(engine.child);
  });

  it('trigger and the listings send --token, else FLINT_TOKEN; flint start --worker passed the token to its worker', async () => {
    const run = await retry(async () => {
      const r = await flint(['trigger', '-f', 'hello::world', '-p', '{"name":"Token"}', '--url', engine.url, '--token', token]);
      if (r.code !== 0) throw new Error(r.stderr);
      return r;
    });
    expect(JSON.parse(run.stdout)).toEqual({ message: 'Hello, Token!' });
    const fromEnv = await flint(['trigger', '-f', 'hello::world', '-p', '{"name":"Env"}', '--url', engine.url], { FLINT_TOKEN: token });
    expect(JSON.parse(fromEnv.stdout)).toEqual({ message: 'Hello, Env!' });
    for (const kind of ['functions', 'triggers', 'workers']) {
      const listed = await flint([kind, '--url', engine.url, '--token', token]);
      expect(listed.code, `${kind}: ${listed.stderr}`).toBe(0);
    }
    const workers = JSON.parse((await flint(['workers', '--json', '--url', engine.url], { FLINT_TOKEN: token })).stdout) as { workers: { name: string }[] };
    expect(workers.workers.map((w) => w.name)).toEqual(['hello-world']);
  });

  it('without the token, or with a wrong one, says so as unauthorized and exits 1, never printing the token', async () => {
    const missing = await flint(['functions', '--url', engine.url], { FLINT_TOKEN: '' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `unauthorized: the engine at ${engine.url} refused the connection (HTTP 401): it needs a token: pass --token or set FLINT_TOKEN\n`,
    );
    const wrong = await flint(['trigger', '-f', 'hello::world', '--url', `${engine.url}/?token=guess`], { FLINT_TOKEN: '' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(
      `unauthorized: the engine at ${engine.url}/?token=*** refused the connection (HTTP 401): it refused the token: compare --token (or FLINT_TOKEN) with the engine's bridge.auth_token\n`,
    );
  });

  it('flint functions shows who provides each function', async () => {
    const run = await flint(['functions', '--url', engine.url, '--token', token]);
    expect(run.stdout).toMatch(/^FUNCTION\s+PROVIDERS\s+DESCRIPTION/);
    expect(run.stdout).toMatch(/hello::world\s+hello-world@[0-9a-f]{8}\s+Greets someone by name/);
    const all = await flint(['functions', '--all', '--url', engine.url, '--token', token]);
    expect(all.stdout).toMatch(/engine::functions::list\s+flint-engine\s+/);
  });
});

describe('flint queues and flint dlq', () => {
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let worker: Worker;

  beforeAll(async () => {
    const queueConfig = join(dir, 'queue-config.yaml');
    writeFileSync(
      queueConfig,
      'bridge:\n  port: 0\nlog:\n  level: error\nmodules:\n  - name: flint-queue\n    config:\n      defaults: { max_retries: 0 }\n      queue_configs:\n        mail: { concurrency: 2 }\n',
    );
    engine = await startEngine(['--config', queueConfig]);
    worker = registerWorker(engine.url, { workerName: 'cli-queue-worker' });
    worker.registerFunction('test::refuse', () => {
      throw new Error('refused on purpose');
    });
    await worker.registerTrigger({ type: 'durable:subscriber', function_id: 'test::refuse', config: { topic: 'orders' } }).ready;
    await worker.queue.publish('orders', { id: 1 });
    await worker.queue.publish('parked', { id: 2 });
    for (let i = 0; i < 100; i++) {
      if ((await worker.queue.deadLetters('orders')).length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  afterAll(async () => {
    await worker?.shutdown();
    engine?.child.kill('SIGTERM');
    await exitOf(engine.child);
  });

  it('flint queues lists topics (with unrouted messages) and named queues', async () => {
    const run = await flint(['queues', '--url', engine.url]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^NAME\s+KIND\s+WAITING\s+IN FLIGHT\s+DELAYED\s+DEAD\s+UNROUTED\s+CONSUMERS/);
    expect(run.stdout).toMatch(/\borders\s+topic \(in_memory\)\s+0\s+0\s+0\s+1\s+0\s+1\n/);
    expect(run.stdout).toMatch(/\bparked\s+topic \(in_memory\)\s+0\s+0\s+0\s+0\s+1\s+0\n/);
    expect(run.stdout).toMatch(/\bmail\s+named queue\s+0\s+0\s+0\s+0\s+-\s+1\n/);
    const json = JSON.parse((await flint(['queues', '--json', '--url', engine.url])).stdout);
    expect(json.map((q: { name: string }) => q.name).sort()).toEqual(['mail', 'orders', 'parked']);
  });

  it('flint dlq list, discard and redrive', async () => {
    const list = await flint(['dlq', 'list', 'orders', '--url', engine.url]);
    expect(list.stdout).toMatch(/^ID\s+FUNCTION\s+ATTEMPTS\s+FAILED AT\s+ERROR/);
    expect(list.stdout).toMatch(/test::refuse\s+1\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+invocation_failed: refused on purpose/);
    const missing = await flint(['dlq', 'discard', 'orders', 'no-such-id', '--url', engine.url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('message_not_found: orders has no dead letter no-such-id\n');
    const redrive = await flint(['dlq', 'redrive', 'orders', '--url', engine.url]);
    expect(redrive.stdout).toBe('redrove 1 dead letter of orders\n');
    const [letter] = await (async () => {
      for (;;) {
        const l = await worker.queue.deadLetters('orders');
        if (l.length > 0) return l;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const discard = await flint(['dlq', 'discard', 'orders', letter?.id as string, '--url', engine.url]);
    expect(discard.stdout).toBe(`discarded dead letter ${letter?.id} of orders\n`);
    const none = await flint(['dlq', 'list', 'orders', '--url', engine.url]);
    expect(none.stdout).toBe('(none)\n');
  });

  it('an engine without the queue module is named as such', async () => {
    const bare = await startEngine(['--config', config]);
    try {
      const run = await flint(['queues', '--url', bare.url]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe('function_not_found: the engine has no queue module loaded (add flint-queue to its config)\n');
    } finally {
      bare.child.kill('SIGTERM');
      await exitOf(bare.child);
    }
  });
});

describe('flint traces', () => {
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let worker: Worker;
  const traceId = '0af7651916cd43dd8448eb211c80319c';

  beforeAll(async () => {
    const config = join(dir, 'traces-config.yaml');
    writeFileSync(config, 'bridge:\n  port: 0\nlog:\n  level: fatal\nmodules:\n  - name: flint-observability\n    config: { enabled: true }\n');
    engine = await startEngine(['--config', config]);
    worker = registerWorker(engine.url, { workerName: 'cli-traces-worker' });
    worker.registerFunction('orders::create', async () => worker.trigger({ function_id: 'stock::reserve', payload: {} }));
    worker.registerFunction('stock::reserve', () => ({ reserved: true }));
    worker.registerFunction('test::fail', () => {
      throw new Error('boom');
    });
    await worker.waitConnected();
    await retry(() => worker.trigger({ function_id: 'orders::create', payload: {}, timeoutMs: 1000 }));
  });

  afterAll(async () => {
    await worker?.shutdown();
    engine?.child.kill('SIGTERM');
    await exitOf(engine.child);
  });

  it('flint traces lists the newest traces; --errors and --name narrow it; show prints a trace as a tree', async () => {
    await expect(worker.trigger({ function_id: 'test::fail', payload: {} })).rejects.toThrow('boom');
    const list = await flint(['traces', '--url', engine.url]);
    expect(list.code).toBe(0);
    const [header, ...rows] = list.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^START\s+DURATION\s+STATUS\s+NAME\s+SERVICE\s+TRACE ID$/);
    expect(rows[0]).toMatch(/\s+error\s+call test::fail\s+flint\s+[0-9a-f]{32}$/); // newest first
    expect(rows.some((r) => /\s+ok\s+call orders::create\s+/.test(r))).toBe(true);
    const errors = await flint(['traces', '--errors', '--url', engine.url]);
    expect(
      errors.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((r) => r.includes('call test::fail')),
    ).toEqual([true]);
    expect((await flint(['traces', '--name', 'no-such', '--url', engine.url])).stdout).toBe('no kept trace matches\n');

    const id = (/([0-9a-f]{32})$/.exec(rows.find((r) => r.includes('orders::create')) as string) as RegExpExecArray)[1] as string;
    const show = await flint(['traces', 'show', id, '--url', engine.url]);
    expect(show.code).toBe(0);
    const lines = show.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SPAN\s+SERVICE\s+DURATION\s+STATUS$/);
    // The SPAN column: leading indent, then words with single spaces between them.
    expect(lines.slice(1).map((l) => /^\s*\S+(?: \S+)*/.exec(l)?.[0])).toEqual(['call orders::create', '  call stock::reserve']);
    const json = JSON.parse((await flint(['traces', 'show', id, '--json', '--url', engine.url])).stdout) as { roots: { name: string }[] };
    expect(json.roots.map((r) => r.name)).toEqual(['call orders::create']);
    expect((await flint(['traces', 'show', traceId, '--url', engine.url])).stdout).toBe(
      `no spans of trace ${traceId} are kept (the store keeps the most recent ones)\n`,
    );
  });

  it('flint traces against an engine without flint-observability says so', async () => {
    const bareConfig = join(dir, 'no-modules-config.yaml');
    writeFileSync(bareConfig, 'bridge:\n  port: 0\nlog:\n  level: fatal\nmodules: []\n');
    const bare = await startEngine(['--config', bareConfig]);
    try {
      const run = await flint(['traces', '--url', bare.url]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe('function_not_found: the engine has no observability module loaded (add flint-observability to its config)\n');
    } finally {
      bare.child.kill('SIGTERM');
      await exitOf(bare.child);
    }
  });
});

describe('flint cron', () => {
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let worker: Worker;
  const ids: Record<string, string> = {};

  interface Listed {
    trigger_id: string;
    function_id: string;
    job_id: string;
    next_runs: string[];
    last_run: { outcome: string; manual: boolean } | null;
  }
  const listed = async (): Promise<Listed[]> => ((await worker.trigger({ function_id: 'engine::cron::list', payload: {} })) as { triggers: Listed[] }).triggers;

  beforeAll(async () => {
    const cronConfig = join(dir, 'cron-config.yaml');
    writeFileSync(cronConfig, 'bridge:\n  port: 0\nlog:\n  level: fatal\nmodules:\n  - name: flint-cron\n');
    engine = await startEngine(['--config', cronConfig]);
    worker = registerWorker(engine.url, { workerName: 'cli-cron-worker' });
    worker.registerFunction('report::daily', () => ({ sent: 3 }));
    worker.registerFunction('test::fail', () => {
      throw new Error('boom');
    });
    worker.registerFunction('test::never', () => false);
    worker.registerFunction('test::guarded', () => 'ran');
    const triggers = {
      'report::daily': { expression: '0 9 * * MON-FRI', timezone: 'Europe/Berlin' },
      'test::fail': { expression: '* * * * * *' },
      'test::guarded': { expression: '@hourly', condition_function_id: 'test::never' },
    };
    for (const [fn, triggerConfig] of Object.entries(triggers)) {
      const trigger = worker.registerTrigger({ type: 'cron', function_id: fn, config: triggerConfig });
      ids[fn] = trigger.id;
      await trigger.ready;
    }
    // The every-second trigger has failed at least once.
    for (let i = 0; i < 150; i++) {
      if ((await listed()).some((t) => t.function_id === 'test::fail' && t.last_run?.outcome === 'failed')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  afterAll(async () => {
    await worker?.shutdown();
    engine?.child.kill('SIGTERM');
    await exitOf(engine.child);
  });

  it('flint cron lists every cron trigger, soonest next run first, with its last run; --json prints engine::cron::list', async () => {
    const run = await flint(['cron', '--url', engine.url]);
    expect(run.code).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^TRIGGER\s+FUNCTION\s+EXPRESSION\s+TIME ZONE\s+NEXT RUN\s+LAST RUN\s+OUTCOME$/);
    expect(rows).toHaveLength(3);
    const time = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d';
    const row = (fn: string) => rows.find((l) => l.split(/\s+/)[1] === fn) as string;
    expect(row('test::fail')).toMatch(
      new RegExp(
        `^${ids['test::fail']}\\s+test::fail\\s+\\* \\* \\* \\* \\* \\*\\s+UTC\\s+${time}\\+00:00\\s+${time}\\+00:00\\s+failed, \\d+ ms: invocation_failed: boom$`,
      ),
    );
    expect(row('test::guarded')).toMatch(
      new RegExp(`^${ids['test::guarded']}\\s+test::guarded\\s+@hourly\\s+UTC\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:00:00\\+00:00\\s+-\\s+-$`),
    );
    expect(row('report::daily')).toMatch(
      new RegExp(`^${ids['report::daily']}\\s+report::daily\\s+0 9 \\* \\* MON-FRI\\s+Europe/Berlin\\s+\\d{4}-\\d\\d-\\d\\d 09:00:00\\+0[12]:00\\s+-\\s+-$`),
    );
    // Soonest next run first (the every-second trigger, then the hourly one, unless 09:00 in Berlin is the same hour).
    const nextRuns = rows.map((l) => Date.parse((new RegExp(`(${time})([+-]\\d\\d:\\d\\d)`).exec(l) as RegExpExecArray).slice(1).join('').replace(' ', 'T')));
    expect(nextRuns).toEqual([...nextRuns].sort((a, b) => a - b));
    expect(rows[0]).toContain('test::fail');
    const json = JSON.parse((await flint(['cron', '--json', '--url', engine.url])).stdout) as { triggers: Listed[] };
    expect(json.triggers.map((t) => t.trigger_id).sort()).toEqual(Object.values(ids).sort());
    expect(json.triggers.every((t) => t.next_runs.length === 3)).toBe(true);
    expect((await flint(['cron', 'list', '--url', engine.url])).stdout.split('\n')[0]).toBe(header);
  });

  it('flint cron run runs a trigger now and prints its result; the listing then shows the manual run', async () => {
    const run = await flint(['cron', 'run', ids['report::daily'] as string, '--url', engine.url]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`ran report::daily now (trigger ${ids['report::daily']})\n{\n  "sent": 3\n}\n`);
    const json = JSON.parse((await flint(['cron', 'run', ids['report::daily'] as string, '--json', '--url', engine.url])).stdout);
    expect(json).toEqual({
      trigger_id: ids['report::daily'],
      function_id: 'report::daily',
      job_id: expect.stringMatching(/^report::daily#[0-9a-f]{12}$/),
      status: 'invoked',
      result: { sent: 3 },
    });
    const list = await flint(['cron', '--url', engine.url]);
    expect(list.stdout).toMatch(/report::daily .*\d\d:\d\d:\d\d\.\d{3}\+0[12]:00\s+ok, \d+ ms \(manual\)\n/);
  });

  it('flint cron run: a condition returning false, a failing function, a function nobody provides and an unknown trigger id', async () => {
    const guarded = await flint(['cron', 'run', ids['test::guarded'] as string, '--url', engine.url]);
    expect(guarded.code).toBe(0);
    expect(guarded.stdout).toBe('test::guarded did not run: its condition returned false\n');
    const failing = await flint(['cron', 'run', ids['test::fail'] as string, '--url', engine.url]);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toBe('invocation_failed: boom\n');
    const orphan = worker.registerTrigger({ type: 'cron', function_id: 'test::nobody', config: { expression: '@daily' } });
    await orphan.ready;
    try {
      // The run's own failure, not a missing cron module.
      const nobody = await flint(['cron', 'run', orphan.id, '--url', engine.url]);
      expect(nobody.code).toBe(1);
      expect(nobody.stderr).toMatch(/^invocation_failed: .*function_not_found: Function test::nobody not found\n$/);
    } finally {
      orphan.unregister();
    }
    const unknown = await flint(['cron', 'run', 'no-such-trigger', '--url', engine.url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('trigger_not_found: no cron trigger no-such-trigger\n');
  });

  it('an engine without the cron module is named as such', async () => {
    const bare = await startEngine(['--config', config]);
    try {
      for (const args of [['cron'], ['cron', 'run', 'x']]) {
        const run = await flint([...args, '--url', bare.url]);
        expect(run.code).toBe(1);
        expect(run.stderr).toBe('function_not_found: the engine has no cron module loaded (add flint-cron to its config)\n');
      }
    } finally {
      bare.child.kill('SIGTERM');
      await exitOf(bare.child);
    }
  });
});

describe('flint trigger with an invalid function id', () => {
  it.each([
    ['bad id', 'invalid_function_id: Invalid function id "bad id": must not contain whitespace or control characters'],
    ['', 'invalid_function_id: Invalid function id "": must not be empty'],
  ])('-f %j names the rule it breaks, before connecting', async (id, line) => {
    // Nothing listens at the URL: only a local check can answer with the id's problem.
    const run = await flint(['trigger', '-f', id, '--url', `ws://127.0.0.1:${await freePort()}`]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(line);
  });
});

describe('flint without an engine', () => {
  it('says the engine cannot be reached', async () => {
    const run = await flint(['trigger', '--function-id', 'x', '--url', 'ws://127.0.0.1:9']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^not_connected: cannot reach the engine at ws:\/\/127\.0\.0\.1:9/);
  });

  it.each([[['trigger', '-f', 'x']], [['functions']]])('flint %j names the URL and says the connection was refused when nothing listens', async (args) => {
    const url = `ws://127.0.0.1:${await freePort()}`;
    const run = await flint([...args, '--url', url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`not_connected: cannot reach the engine at ${url}: connection refused (is it running? start it with: flint start)\n`);
  });

  it.each([[['trigger', '-f', 'x']], [['workers']]])('flint %j says there is no Flint bridge at a plain HTTP server', async (args) => {
    const server = createHttpServer((_req, res) => {
      res.statusCode = 404;
      res.end('not here');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const run = await flint([...args, '--url', url]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`not_connected: no Flint bridge at ${url} (HTTP 404) — the bridge listens on 49134 by default\n`);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});

describe('--help', () => {
  it.each([
    [[]],
    [['start']],
    [['trigger']],
    [['functions']],
    [['triggers']],
    [['workers']],
    [['queues']],
    [['dlq']],
    [['dlq', 'redrive']],
    [['cron']],
    [['cron', 'run']],
  ])('flint %j --help exits 0 with usage', async (args) => {
    const run = await flint([...args, '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: flint/);
  });

  it('an unknown command is named, with a suggestion when one is close (not taken as an argument of start)', async () => {
    const typo = await flint(['fucntions']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain("error: unknown command 'fucntions' (did you mean 'functions'?)");
    expect(typo.stderr).not.toContain('start');
    const unknown = await flint(['bogus', '--url', 'ws://127.0.0.1:9']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.split('\n')[0]).toBe("error: unknown command 'bogus'");
    const option = await flint(['start', '--confg', 'x.yaml']);
    expect(option.stderr).toContain("error: unknown option '--confg' (did you mean '--config'?)");
  });

  it('flint without a command starts the engine, also with only start options', async () => {
    const bare = join(dir, 'bare');
    mkdirSync(bare);
    writeFileSync(join(bare, 'flint-config.yaml'), 'bridge:\n  port: 0\nlog:\n  level: warn\n');
    for (const args of [[], ['--config', config]]) {
      const engine = await startEngine(args, { command: [], cwd: bare });
      expect(engine.output()).toContain(args.length === 0 ? join(bare, 'flint-config.yaml') : config);
      engine.child.kill('SIGTERM');
      expect(await exitOf(engine.child)).toBe(0);
    }
  });

  it('trigger without --function-id is a usage error', async () => {
    const run = await flint(['trigger']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("required option '-f, --function-id <id>' not specified");
  });
});

describe('configuration errors and shutdown', () => {
  it('an invalid config lists every problem as path: message (file:line) and exits 1', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'bridge:\n  prot: 1\ninvocation_timeout_ms: soon\n');
    const run = await flint(['start', '--config', bad]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`bridge.prot: unknown key (${bad}:2)`);
    expect(run.stderr).toMatch(new RegExp(`invocation_timeout_ms: .+ \\(${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3\\)`));
  });

  it('a value from an environment variable that is not a port names the variable, in one problem line', async () => {
    const envConfig = join(dir, 'env-port.yaml');
    writeFileSync(envConfig, ['bridge:', '  port: 0', 'modules:', '  - name: flint-http', '    config:', `      port: $\{FLINT_T_HTTP_PORT}`, ''].join('\n'));
    const bad = await flint(['start', '--config', envConfig], { FLINT_T_HTTP_PORT: 'abc' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      `flint: invalid configuration\nmodules[0].config.port: "abc" (from $\{FLINT_T_HTTP_PORT}) is not a valid port (0-65535) (${envConfig}:6)\n`,
    );
    const unset = await flint(['start', '--config', envConfig]);
    expect(unset.stderr.trim().split('\n')).toEqual([
      'flint: invalid configuration',
      `modules[0].config.port: environment variable FLINT_T_HTTP_PORT is not set and has no default (write $\{FLINT_T_HTTP_PORT:default}) (${envConfig}:6)`,
    ]);
  });

  it('a bridge port that is taken names bridge.port and the variable that set it', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const envConfig = join(dir, 'taken.yaml');
      writeFileSync(envConfig, `bridge:\n  port: $\{FLINT_T_BRIDGE_PORT}\n`);
      const run = await flint(['start', '--config', envConfig], { FLINT_T_BRIDGE_PORT: String(port) });
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(
        `flint: failed to start: cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE); the port is set by bridge.port (from $\{FLINT_T_BRIDGE_PORT})`,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('SIGTERM fails in-flight calls cleanly and exits 0; --worker runs a worker', async () => {
    const infoConfig = join(dir, 'info.yaml');
    writeFileSync(infoConfig, 'bridge:\n  port: 0\n');
    const engine = await startEngine(['--config', infoConfig, '--worker', `node ${join(root, 'examples/hello-world/worker.mjs')}`]);
    const caller = registerWorker(engine.url, { announce: false });
    try {
      const greeting = await retry(() => caller.trigger({ function_id: 'hello::world', payload: { name: 'Ada' } }));
      expect(greeting).toEqual({ message: 'Hello, Ada!' });
      caller.registerFunction('test::forever', () => new Promise(() => {}));
      await retry(() => caller.trigger({ function_id: 'engine::functions::list', payload: {} }));
      const pending = caller.trigger({ function_id: 'test::forever', payload: null }).catch((e: { code: string }) => e.code);
      await new Promise((r) => setTimeout(r, 100));
      engine.child.kill('SIGTERM');
      expect(await pending).toBe('engine_shutting_down');
      expect(await exitOf(engine.child)).toBe(0);
      expect(engine.output()).toContain('SIGTERM received: shutting down');
      expect(engine.output()).toMatch(/\[worker \d+\] hello-world worker connected/);
      expect(engine.output()).toContain('engine stopped');
    } finally {
      await caller.shutdown();
    }
  }, 30_000);
});

async function retry<T>(fn: () => Promise<T>, attempts = 50): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('flint streams', () => {
  it('lists streams with their groups and the live counters; says how to start when there are none; names a missing module', async () => {
    const config = join(dir, 'streams-config.yaml');
    writeFileSync(config, 'bridge:\n  port: 0\nlog:\n  level: fatal\nmodules:\n  - name: flint-stream\n    config: { port: 0 }\n');
    const engine = await startEngine(['--config', config]);
    const worker = registerWorker(engine.url, { workerName: 'cli-streams-worker' });
    try {
      const empty = await flint(['streams', '--url', engine.url]);
      expect(empty.code).toBe(0);
      expect(empty.stdout).toContain('0 clients connected, 0 subscriptions');
      expect(empty.stdout).toContain('no streams yet: write one with stream::set');

      for (const [stream, group] of [
        ['chat', 'room-1'],
        ['chat', 'room-2'],
        ['scores', 'match:7'],
      ])
        await worker.trigger({ function_id: 'stream::set', payload: { stream_name: stream, group_id: group, item_id: 'i', data: 1 } });
      const run = await flint(['streams', '--url', engine.url]);
      expect(run.code).toBe(0);
      const [totals, header, ...rows] = run.stdout.trimEnd().split('\n');
      expect(totals).toMatch(/^0 clients connected, 0 subscriptions, 0 frames sent, 0 bytes waiting, 0 slow clients dropped$/);
      expect(header).toMatch(/^STREAM\s+GROUPS\s+GROUP IDS\s+SUBSCRIPTIONS\s+EVENTS\s+FRAMES SENT$/);
      expect(rows.map((r) => r.split(/\s{2,}/))).toEqual([
        ['chat', '2', 'room-1, room-2', '0', '2', '0'],
        ['scores', '1', 'match:7', '0', '1', '0'],
      ]);
      const json = JSON.parse((await flint(['streams', '--json', '--url', engine.url])).stdout);
      expect(json.streams).toEqual([
        { id: 'chat', groups: ['room-1', 'room-2'] },
        { id: 'scores', groups: ['match:7'] },
      ]);
      expect(json.stats.totals).toMatchObject({ connections: 0, events: 3 });
    } finally {
      await worker.shutdown();
      engine.child.kill('SIGTERM');
      await exitOf(engine.child);
    }
    const bare = join(dir, 'no-streams-config.yaml');
    writeFileSync(bare, 'bridge:\n  port: 0\nlog:\n  level: fatal\nmodules: []\n');
    const other = await startEngine(['--config', bare]);
    try {
      const missing = await flint(['streams', '--url', other.url]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('the engine has no stream module loaded (add flint-stream to its config)');
    } finally {
      other.child.kill('SIGTERM');
      await exitOf(other.child);
    }
  });
});
