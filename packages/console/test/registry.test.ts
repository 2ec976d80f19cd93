/**
 * The read-only API against a real engine and workers: /_console/config, /status (connectivity and the
 * engine's modules with redacted config), /workers, /cluster (outside a cluster; inside one in
 * cluster-api.test.ts), /functions, /triggers and /cron.
 */
import { CONSOLE_VERSION } from '@flint/console';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleEnv,
  type Json,
  consoleFlagsFor,
  startConsoleEnv,
  startTestConsole,
  startTestEngine,
  uid,
  whenConsoleReady,
} from './support/console-env.js';

let env: ConsoleEnv;
const fn = `${uid('registry')}::hello`;
const topic = uid('topic');
const cronFn = `${uid('registry')}::nightly`;
let cronTriggerId: string;
const workerName = uid('registry-worker');

beforeAll(async () => {
  env = await startConsoleEnv({
    // An exporter URL with a password, to see it redacted (memory exporter: nothing is sent there).
    extraModules: [{ name: 'flint-observability', config: { exporter: 'memory', endpoint: 'http://otel:s3cret-pw@127.0.0.1:4318' } }],
  });
  await env.worker(
    (w) => {
      w.registerFunction(fn, (input: { name?: string }) => `hello ${input.name ?? 'you'}`, { description: 'says hello' });
      w.registerFunction(cronFn, () => 'ran');
      w.registerTrigger({ type: 'subscribe', function_id: fn, config: { topic } });
      cronTriggerId = w.registerTrigger({ type: 'cron', function_id: cronFn, config: { expression: '0 0 1 1 *' } }).id;
    },
    { workerName },
  );
});

afterAll(() => env?.close());

describe('GET /_console/config', () => {
  it("tells the console's own settings and the engine's ports", async () => {
    const res = await env.api('GET', '/_console/config');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      version: CONSOLE_VERSION,
      console: { host: '127.0.0.1', port: env.console.port, token_required: false },
      engine: { host: '127.0.0.1', bridge_url: env.engine.bridgeUrl },
      otel: { enabled: false },
      enable_flow: false,
    });
    const http = env.engine.listeners().find((l) => l.name === 'http');
    expect(`http://127.0.0.1:${res.body.engine.http_port}`).toBe(http?.url);
  });
});

describe('GET /_console/status', () => {
  it('reports the bridge connected, the HTTP and stream ports reachable and the modules with secrets redacted', async () => {
    const res = await env.api('GET', '/_console/status');
    expect(res.status).toBe(200);
    expect(res.body.bridge).toBe('connected');
    expect(res.body.http).toMatchObject({ reachable: true });
    expect(res.body.stream).toMatchObject({ reachable: true, detail: null });
    const names = res.body.engine.modules.map((m: { name: string }) => m.name);
    expect(names).toEqual(['flint-http', 'flint-state', 'flint-stream', 'flint-queue', 'flint-cron', 'flint-pubsub', 'flint-observability']);
    expect(res.body.engine.listeners.map((l: { name: string }) => l.name)).toEqual(expect.arrayContaining(['bridge', 'http', 'stream']));
    const observability = res.body.engine.modules.find((m: { name: string }) => m.name === 'flint-observability');
    expect(observability.config.endpoint).toMatch(/^http:\/\/otel:\*\*\*@127\.0\.0\.1:4318\/?$/);
    expect(JSON.stringify(res.body)).not.toContain('s3cret-pw');
    // flint-observability is loaded, so the health check answers.
    expect(res.body.health).not.toBeNull();
  });
});

describe('GET /_console/workers', () => {
  it('lists a connected worker by its name, with its functions', async () => {
    const res = await env.api('GET', '/_console/workers');
    expect(res.status).toBe(200);
    const row = res.body.workers.find((w: { name: string }) => w.name === workerName);
    expect(row).toBeDefined();
    expect(row.functions).toEqual(expect.arrayContaining([fn, cronFn]));
    expect(row.status).toBeTypeOf('string');
  });
});

describe('GET /_console/cluster', () => {
  it('answers available false outside a cluster (engine::cluster::members is not registered), and workers carry no engine', async () => {
    const res = await env.api('GET', '/_console/cluster');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ available: false, cluster: null, node_id: null, members: [] });
    const workers = await env.api('GET', '/_console/workers');
    expect(workers.body.workers.every((w: Json) => !('engine' in w))).toBe(true);
  });
});

describe('GET /_console/functions', () => {
  it("hides the engine's functions and the console's own listener unless include_internal is true", async () => {
    const visible = await env.api('GET', '/_console/functions');
    expect(visible.status).toBe(200);
    const ids: string[] = visible.body.functions.map((f: { function_id: string }) => f.function_id);
    expect(ids).toContain(fn);
    expect(ids.filter((id) => id.startsWith('engine::'))).toEqual([]);
    expect(ids.filter((id) => id.startsWith('flint-console.'))).toEqual([]);
    expect(visible.body.functions.find((f: { function_id: string }) => f.function_id === fn)).toMatchObject({ description: 'says hello' });

    const all = await env.api('GET', '/_console/functions?include_internal=true');
    // A large answer (every module's functions with their schemas) goes gzipped to a client that takes it (fetch does).
    expect(all.headers.get('content-encoding')).toBe('gzip');
    expect(visible.headers.get('vary')).toBe('accept-encoding');
    const allIds: string[] = all.body.functions.map((f: { function_id: string }) => f.function_id);
    expect(allIds).toContain(fn);
    expect(allIds).toContain('engine::functions::list');
    const mine = all.body.functions.filter((f: { function_id: string }) => f.function_id.startsWith('flint-console.'));
    expect(mine).toHaveLength(1);
    expect(mine[0].metadata).toMatchObject({ internal: true });
  });
});

describe('GET /_console/triggers', () => {
  it('lists the triggers and every trigger type; internal ones only with include_internal', async () => {
    const res = await env.api('GET', '/_console/triggers');
    expect(res.status).toBe(200);
    expect(res.body.triggers).toEqual(expect.arrayContaining([expect.objectContaining({ trigger_type: 'subscribe', function_id: fn, config: { topic } })]));
    expect(res.body.triggers.some((t: Json) => t.function_id.startsWith('flint-console.'))).toBe(false);
    const types = res.body.trigger_types.map((t: { id: string }) => t.id);
    expect(types).toEqual(expect.arrayContaining(['http', 'state', 'stream', 'durable:subscriber', 'cron', 'subscribe']));

    const all = await env.api('GET', '/_console/triggers?include_internal=1');
    const internal = all.body.triggers.filter((t: Json) => t.function_id.startsWith('flint-console.'));
    expect(internal.map((t: Json) => t.trigger_type)).toEqual(expect.arrayContaining(['state']));
    expect(internal.length).toBeGreaterThanOrEqual(4);
  });
});

describe('GET /_console/cron', () => {
  it('lists a cron trigger with its next runs', async () => {
    const res = await env.api('GET', '/_console/cron');
    expect(res.status).toBe(200);
    expect(res.body.available).toBe(true);
    const job = res.body.jobs.find((j: Json) => j.trigger_id === cronTriggerId);
    expect(job).toMatchObject({ function_id: cronFn, expression: '0 0 1 1 *' });
    expect(job.next_runs.length).toBeGreaterThan(0);
    expect(job.last_run).toBeNull();
  });
});

describe('an engine without flint-cron, flint-queue and flint-observability', () => {
  it('answers /cron and /queues with available false, and /status with health null', async () => {
    const engine = await startTestEngine([{ name: 'flint-http', config: { port: 0 } }, { name: 'flint-state' }, { name: 'flint-stream', config: { port: 0 } }]);
    const server = await startTestConsole(consoleFlagsFor(engine));
    try {
      await whenConsoleReady(engine, server);
      const get = async (path: string) => (await (await fetch(`${server.url}${path}`)).json()) as Json;
      expect(await get('/_console/cron')).toEqual({ available: false, jobs: [] });
      expect(await get('/_console/queues')).toEqual({ available: false, queues: [] });
      const status = await get('/_console/status');
      expect(status).toMatchObject({ bridge: 'connected', health: null });
      expect(status.engine.modules.map((m: { name: string }) => m.name)).toEqual(['flint-http', 'flint-state', 'flint-stream']);
    } finally {
      await server.close();
      await engine.stop();
    }
  });
});
