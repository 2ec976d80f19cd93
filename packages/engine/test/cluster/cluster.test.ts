/**
 * Several engines as one cluster on NATS (the machine's server, or one of the test's own for the
 * restart test): calls in every direction, listings of the whole cluster, local providers first, an
 * engine leaving, crashing and the transport going away and coming back.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Engine, startEngine } from '@flint/engine';
import { type ChannelRef, EngineFunctions, type FunctionInfo, type TriggerInfo, type WorkerInfo, channelPath } from '@flint/protocol';
import { type ChannelReader, type Worker, http, registerWorker } from '@flint/sdk';
import { afterEach, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { startGatekeeper } from '../support/access.js';
import { spawnEngineScript } from '../support/child-engine.js';
import { cleanup, track } from '../support/cleanup.js';
import { startTestEngine } from '../support/harness.js';
import { captureLog } from '../support/log-capture.js';
import { SpareRedisServer } from '../support/services/redis-server.js';
import { gateService, programAvailable, serviceAvailable } from '../support/services/services.js';
import { freePort, rejectsWith, sleep, uid, waitFor } from '../support/util.js';

const NATS_URL = process.env.FLINT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runNats = gateService('cluster tests on NATS', await serviceAvailable('nats', NATS_URL));
const runRedis = gateService('cluster tests on Redis', await serviceAvailable('redis', REDIS_URL));
const runNatsRestart = runNats && gateService('cluster test restarting a NATS server of its own', programAvailable('nats-server', ['--version']));
const runRedisRestart = runRedis && gateService('cluster test restarting a Redis server of its own', programAvailable('redis-server', ['--version']));
const quiet = { warn() {}, error() {}, debug() {} };
const childScript = fileURLToPath(new URL('../support/cluster-engine-process.mjs', import.meta.url));

afterEach(cleanup);

type Transport = 'nats' | 'redis';

/** Cluster settings for a test: a name of its own, so tests never see each other's engines. */
function clusterFor(transport: Transport, name: string, node: string, url = transport === 'nats' ? NATS_URL : REDIS_URL) {
  return { transport, url, name, node_id: node, heartbeat_ms: 100, expire_ms: 800 };
}

function worker(engine: Engine, name: string): Worker {
  const w = registerWorker(engine.bridgeUrl, { workerName: name, reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, log: quiet });
  track(() => w.shutdown());
  return w;
}

const list = async <T>(engine: Engine, id: string, key: string): Promise<T[]> => ((await engine.invoke(id, {})) as Record<string, T[]>)[key] ?? [];
const functionsOf = (engine: Engine) => list<FunctionInfo>(engine, EngineFunctions.LIST_FUNCTIONS, 'functions');

/** Waits until every engine lists every function id. */
async function converged(engines: Engine[], ids: string[]): Promise<void> {
  await waitFor(
    async () => {
      for (const engine of engines) {
        const listed = new Set((await functionsOf(engine)).map((f) => f.function_id));
        if (!ids.every((id) => listed.has(id))) return false;
      }
      return true;
    },
    5000,
    `every engine to list ${ids.join(', ')}`,
  );
}

describe.each([
  { transport: 'nats' as const, run: runNats },
  { transport: 'redis' as const, run: runRedis },
])('cluster on $transport', ({ transport, run }) => {
  const clusterOf = (name: string, node: string, url?: string) => clusterFor(transport, name, node, url);
  const startNode = (name: string, node: string, url?: string): Promise<Engine> => startTestEngine({ cluster: clusterOf(name, node, url) });

  test.skipIf(!run)('three engines: calls in every direction, and listings of the whole cluster', async () => {
    const name = uid('c');
    const nodes = ['a', 'b', 'c'];
    const engines = await Promise.all(nodes.map((n) => startNode(name, n)));
    const workers = engines.map((engine, i) => {
      const w = worker(engine, `w-${nodes[i]}`);
      w.registerFunction(`${nodes[i]}::whoami`, async (input: unknown) => ({ node: nodes[i], input }), { description: `served on ${nodes[i]}` });
      return w;
    });
    await Promise.all(workers.map((w) => w.waitConnected()));
    workers[2]?.registerTrigger({ type: 'engine::functions-available', function_id: 'c::whoami', config: {} });
    await converged(
      engines,
      nodes.map((n) => `${n}::whoami`),
    );

    for (const [i, caller] of workers.entries()) {
      for (const target of nodes) {
        expect(await caller.trigger({ function_id: `${target}::whoami`, payload: { from: nodes[i] } })).toEqual({ node: target, input: { from: nodes[i] } });
      }
    }
    // The listings of any engine show the whole cluster, each entry with the engine it lives on.
    const onA = await functionsOf(engines[0] as Engine);
    const bFn = onA.find((f) => f.function_id === 'b::whoami');
    expect(bFn?.description).toBe('served on b');
    expect(bFn?.providers).toEqual([{ worker_id: expect.any(String), worker_name: 'w-b', engine: 'b' }]);
    await waitFor(async () => (await list<WorkerInfo>(engines[0] as Engine, EngineFunctions.LIST_WORKERS, 'workers')).length === 3, 3000, 'three workers');
    const listedWorkers = await list<WorkerInfo>(engines[0] as Engine, EngineFunctions.LIST_WORKERS, 'workers');
    expect(listedWorkers.map((w) => [w.name, w.engine]).sort()).toEqual([
      ['w-a', 'a'],
      ['w-b', 'b'],
      ['w-c', 'c'],
    ]);
    await waitFor(
      async () => (await list<TriggerInfo>(engines[1] as Engine, EngineFunctions.LIST_TRIGGERS, 'triggers')).some((t) => t.engine === 'c'),
      3000,
      'the trigger registered on c to be listed on b',
    );
    const members = (await (engines[0] as Engine).invoke('engine::cluster::members', {})) as { node_id: string; members: { node: string }[] };
    expect(members.node_id).toBe('a');
    expect(members.members.map((m) => m.node).sort()).toEqual(nodes);
  });

  test("a function this engine's workers provide is run here; void calls and errors cross engines", async () => {
    const name = uid('c');
    const [a, b] = [await startNode(name, 'a'), await startNode(name, 'b')];
    const [wa, wb] = [worker(a, 'wa'), worker(b, 'wb')];
    wa.registerFunction('both::where', async () => 'a');
    wb.registerFunction('both::where', async () => 'b');
    const seen: unknown[] = [];
    wb.registerFunction('b::sink', async (input: unknown) => {
      seen.push(input);
    });
    wb.registerFunction('b::fails', async () => {
      const err = new Error('no stock') as Error & { code: string };
      err.code = 'out_of_stock';
      throw err;
    });
    wb.registerFunction('b::slow', async () => sleep(2000));
    await converged([a, b], ['both::where', 'b::sink', 'b::fails', 'b::slow']);
    for (let i = 0; i < 5; i++) expect(await wa.trigger({ function_id: 'both::where', payload: {} })).toBe('a');
    await wa.trigger({ function_id: 'b::sink', payload: { n: 1 }, action: { type: 'void' } });
    await waitFor(() => seen.length === 1, 2000, 'the void call on b');
    expect(seen).toEqual([{ n: 1 }]);
    const failed = await rejectsWith(wa.trigger({ function_id: 'b::fails', payload: {} }), 'out_of_stock');
    expect(failed.message).toBe('no stock');
    await rejectsWith(wa.trigger({ function_id: 'b::slow', payload: {}, timeoutMs: 200 }), 'invocation_timeout');
  });

  test.skipIf(!run)('triggers registered on one engine serve on every engine: an HTTP route, a state trigger, a queue subscriber', async () => {
    const name = uid('c');
    const modules = [{ name: 'flint-http', config: { port: 0 } }, { name: 'flint-state' }, { name: 'flint-queue' }];
    const [a, b] = [await startTestEngine({ cluster: clusterOf(name, 'a'), modules }), await startTestEngine({ cluster: clusterOf(name, 'b'), modules })];
    const wb = worker(b, 'wb');
    wb.registerFunction('b::hello', async (req: { path_params: { who: string } }) => ({ status_code: 200, body: { hello: req.path_params.who, from: 'b' } }));
    await wb.registerTrigger({ type: 'http', function_id: 'b::hello', config: { api_path: '/hello/:who', http_method: 'GET' } }).ready;
    const changes: unknown[] = [];
    wb.registerFunction('b::on-change', async (event: { key: string; new_value: unknown }) => {
      changes.push([event.key, event.new_value]);
    });
    await wb.registerTrigger({ type: 'state', function_id: 'b::on-change', config: { scope: 'cluster-test' } }).ready;
    const messages: unknown[] = [];
    wb.registerFunction('b::consume', async (data: unknown) => {
      messages.push(data);
    });
    await wb.registerTrigger({ type: 'durable:subscriber', function_id: 'b::consume', config: { topic: 'orders' } }).ready;
    await converged([a], ['b::hello', 'b::on-change', 'b::consume']);
    // b announced its three triggers (maybe in more than one snapshot): a applies them as it learns of them.
    await waitFor(
      async () => (await list<TriggerInfo>(a, EngineFunctions.LIST_TRIGGERS, 'triggers')).filter((t) => t.engine === 'b').length === 3,
      3000,
      "b's three triggers on a",
    );

    // An HTTP request to engine a is served by the worker on engine b.
    const httpA = a.listeners().find((l) => l.name === 'http')?.url;
    await waitFor(async () => (await fetch(`${httpA}/hello/ada`)).status === 200, 3000, 'the route on engine a');
    expect(await (await fetch(`${httpA}/hello/ada`)).json()).toEqual({ hello: 'ada', from: 'b' });

    // A state change through either engine fires the trigger once.
    await a.invoke('state::set', { scope: 'cluster-test', key: 'via-a', value: 1 });
    await b.invoke('state::set', { scope: 'cluster-test', key: 'via-b', value: 2 });
    await waitFor(() => changes.length >= 2, 3000, 'two state changes');
    await sleep(300);
    expect(changes.sort()).toEqual([
      ['via-a', 1],
      ['via-b', 2],
    ]);

    // Messages published through either engine reach the subscriber once each.
    await a.invoke('flint::durable::publish', { topic: 'orders', data: { n: 1 } });
    await b.invoke('flint::durable::publish', { topic: 'orders', data: { n: 2 } });
    await waitFor(() => messages.length >= 2, 3000, 'two messages');
    await sleep(300);
    expect(messages).toHaveLength(2);

    // The mirrored triggers are b's: a lists them once, as b's, and drops them when b's worker goes.
    const onA = await list<TriggerInfo>(a, EngineFunctions.LIST_TRIGGERS, 'triggers');
    expect(onA.filter((t) => t.function_id === 'b::hello').map((t) => t.engine)).toEqual(['b']);
    await wb.shutdown();
    await waitFor(async () => (await fetch(`${httpA}/hello/ada`)).status === 404, 3000, 'the route to go from engine a');
  });

  test.skipIf(!run)('channels cross engines: a streamed answer, an upload, and a channel handed to a worker of another engine', async () => {
    const name = uid('c');
    const modules = [{ name: 'flint-http', config: { port: 0 } }];
    const [a, b] = [await startTestEngine({ cluster: clusterOf(name, 'a'), modules }), await startTestEngine({ cluster: clusterOf(name, 'b'), modules })];
    const wb = worker(b, 'wb');
    wb.registerFunction(
      'b::stream',
      http(async (_req, res) => {
        res.status(201);
        res.headers({ 'content-type': 'text/plain' });
        for (let i = 0; i < 3; i++) await res.write(`part ${i}\n`);
        await res.write(Buffer.alloc(200_000, 120)); // several frames
      }),
    );
    wb.registerFunction(
      'b::upload',
      http(async (req) => ({ status_code: 200, body: { bytes: (await req.request_body.readAll()).length } })),
    );
    wb.registerFunction('b::count', async (input: { reader: ChannelReader }) => (await input.reader.readAll()).length);
    await wb.registerTrigger({ type: 'http', function_id: 'b::stream', config: { api_path: '/stream', http_method: 'GET' } }).ready;
    await wb.registerTrigger({ type: 'http', function_id: 'b::upload', config: { api_path: '/upload', http_method: 'POST' } }).ready;
    await converged([a], ['b::stream', 'b::upload', 'b::count']);
    const httpA = a.listeners().find((l) => l.name === 'http')?.url;
    // Engine a applies b's two routes one after the other: wait for both.
    const served = async (path: string, method: string) => (await fetch(`${httpA}${path}`, { method })).status !== 404;
    await waitFor(async () => (await served('/stream', 'GET')) && (await served('/upload', 'POST')), 3000, 'both routes on engine a');

    const streamed = await fetch(`${httpA}/stream`);
    expect(streamed.status).toBe(201);
    expect(streamed.headers.get('content-type')).toBe('text/plain');
    const body = Buffer.from(await streamed.arrayBuffer());
    expect(body.subarray(0, 21).toString()).toBe('part 0\npart 1\npart 2\n');
    expect(body.length).toBe(21 + 200_000);

    const upload = await fetch(`${httpA}/upload`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(300_000, 1) });
    expect(await upload.json()).toEqual({ bytes: 300_000 });

    // A worker on a makes a channel and hands its reader to a function on b.
    const wa = worker(a, 'wa');
    const channel = await wa.createChannel();
    const counted = wa.trigger({ function_id: 'b::count', payload: { reader: channel.readerRef } });
    await channel.writer.write(Buffer.alloc(100_000, 7));
    channel.writer.close();
    expect(await counted).toBe(100_000);
  });

  test.skipIf(!run)("another engine's workers coming and going fire engine::workers-available here", async () => {
    const name = uid('c');
    const [a, b] = [await startNode(name, 'a'), await startNode(name, 'b')];
    const fired: unknown[] = [];
    const watcher = worker(a, 'watcher');
    watcher.registerFunction('a::workers-changed', async (event: unknown) => {
      fired.push(event);
    });
    await watcher.registerTrigger({ type: 'engine::workers-available', function_id: 'a::workers-changed', config: {} }).ready;
    await sleep(300);
    fired.length = 0;
    const onB = registerWorker(b.bridgeUrl, { workerName: 'no-functions-on-b', log: quiet });
    await waitFor(() => fired.length > 0, 3000, 'engine::workers-available on a for the worker on b');
    await waitFor(
      async () => (await list<WorkerInfo>(a, EngineFunctions.LIST_WORKERS, 'workers')).some((w) => w.name === 'no-functions-on-b'),
      3000,
      'the worker on b listed on a',
    );
    fired.length = 0;
    await onB.shutdown();
    await waitFor(() => fired.length > 0, 3000, 'engine::workers-available on a when it left');
  });

  test.skipIf(!run)('a stream trigger registered on one engine fires once for a change made through any engine; a cron slot fires once', async () => {
    const name = uid('c');
    const modules = [{ name: 'flint-stream', config: { port: 0 } }, { name: 'flint-cron' }];
    const [a, b] = [await startTestEngine({ cluster: clusterOf(name, 'a'), modules }), await startTestEngine({ cluster: clusterOf(name, 'b'), modules })];
    const wb = worker(b, 'wb');
    const changes: string[] = [];
    wb.registerFunction('b::on-stream', async (event: { event: { type: string }; id: string }) => {
      changes.push(`${event.event.type}:${event.id}`);
    });
    await wb.registerTrigger({ type: 'stream', function_id: 'b::on-stream', config: { stream_name: 'scores' } }).ready;
    const slots: string[] = [];
    wb.registerFunction('b::tick', async (run: { scheduled_time: string }) => {
      slots.push(run.scheduled_time);
    });
    await wb.registerTrigger({ type: 'cron', function_id: 'b::tick', config: { expression: '* * * * * *' } }).ready;
    await converged([a], ['b::on-stream', 'b::tick']);
    await sleep(200);
    await a.invoke('stream::set', { stream_name: 'scores', group_id: 'g', item_id: 'via-a', data: 1 });
    await b.invoke('stream::set', { stream_name: 'scores', group_id: 'g', item_id: 'via-b', data: 2 });
    await waitFor(() => changes.length >= 2, 3000, 'two stream changes');
    await sleep(2500);
    expect(changes.sort()).toEqual(['create:via-a', 'create:via-b']);
    expect(slots.length).toBeGreaterThanOrEqual(2);
    expect(new Set(slots).size).toBe(slots.length); // each slot once
  });

  test.skipIf(!run)('a trigger type a worker of another engine provides serves triggers registered here', async () => {
    const name = uid('c');
    const [a, b] = [await startNode(name, 'a'), await startNode(name, 'b')];
    const provider = worker(b, 'webhooks-on-b');
    const applied = new Map<string, { function_id: string; config: { path?: string } }>();
    provider.registerTriggerType(
      { id: 'webhook', description: 'incoming webhooks' },
      {
        registerTrigger: (t: { id: string; function_id: string; config: { path?: string } }) => {
          if (!t.config.path?.startsWith('/')) throw new Error('path must start with /');
          applied.set(t.id, t);
        },
        unregisterTrigger: (t: { id: string }) => {
          applied.delete(t.id);
        },
      },
    );
    const wa = worker(a, 'user-on-a');
    const hooks: unknown[] = [];
    wa.registerFunction('a::on-hook', async (event: unknown) => {
      hooks.push(event);
      return null;
    });
    await waitFor(
      async () =>
        ((await a.invoke(EngineFunctions.LIST_TRIGGER_TYPES, {})) as { trigger_types: { id: string }[] }).trigger_types.some((t) => t.id === 'webhook'),
      3000,
      'the webhook type to be provided on a',
    );
    const good = wa.registerTrigger({ type: 'webhook', function_id: 'a::on-hook', config: { path: '/orders' } });
    expect(await good.ready).toEqual({ parked: false });
    const seen = [...applied.values()];
    expect(seen.map((t) => [t.function_id, t.config])).toEqual([['a::on-hook', { path: '/orders' }]]);
    // The provider on b fires it: the function on a runs.
    await provider.trigger({ function_id: seen[0]?.function_id as string, payload: { order: 1 } });
    expect(hooks).toEqual([{ order: 1 }]);
    const bad = wa.registerTrigger({ type: 'webhook', function_id: 'a::on-hook', config: { path: 'orders' } });
    const refused = await bad.ready.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(refused?.message).toContain('path must start with /');
    good.unregister();
    await waitFor(() => applied.size === 0, 3000, 'the trigger to be removed from the provider on b');
  });

  test.skipIf(!run)('the trace context of a call travels to the other engine', async () => {
    const name = uid('c');
    const [a, b] = [await startNode(name, 'a'), await startNode(name, 'b')];
    let seen: string | undefined;
    worker(b, 'wb').registerFunction('b::trace', async (_input: unknown, ctx) => {
      seen = ctx.traceparent;
      return null;
    });
    await converged([a], ['b::trace']);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await a.invoke('b::trace', {}, { traceparent });
    expect(seen?.split('-')[1]).toBe('0af7651916cd43dd8448eb211c80319c');
  });

  test.skipIf(!run)("the identity a listener's auth function gave the caller travels to the other engine (ctx.caller)", async () => {
    const name = uid('c');
    const g = await startGatekeeper({
      answers: { auth: (input) => (input.query_params.user ? { context: { user: input.query_params.user[0] } } : {}) },
      config: { cluster: clusterOf(name, 'a') },
    });
    const b = await startNode(name, 'b');
    worker(b, 'wb').registerFunction('b::who', async (_input: unknown, ctx) => ctx.caller ?? 'nobody');
    await converged([g.engine], ['b::who']);
    const alice = registerWorker(`${g.url}/?user=alice`, { workerName: 'alice', log: quiet });
    track(() => alice.shutdown());
    await alice.waitConnected();
    const aliceId = await waitFor(
      async () => (await list<WorkerInfo>(g.engine, EngineFunctions.LIST_WORKERS, 'workers')).find((w) => w.name === 'alice')?.id,
      2000,
      'alice to be listed',
    );
    expect(await alice.trigger({ function_id: 'b::who', payload: {} })).toEqual({ worker_id: aliceId, context: { user: 'alice' } });
    // A caller without a context hands on none, as on one engine.
    const open = worker(g.engine, 'open');
    await open.waitConnected();
    expect(await open.trigger({ function_id: 'b::who', payload: {} })).toBe('nobody');
  });

  test.skipIf(!run)('an engine that stops leaves at once: its functions go from the listings of the others', async () => {
    const name = uid('c');
    const a = await startNode(name, 'a');
    const b = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, cluster: clusterOf(name, 'b') } });
    worker(b, 'wb').registerFunction('b::soon-gone', async () => 'b');
    await converged([a], ['b::soon-gone']);
    const started = Date.now();
    await b.stop();
    await waitFor(async () => !(await functionsOf(a)).some((f) => f.function_id === 'b::soon-gone'), 2000, 'b::soon-gone to go');
    expect(Date.now() - started).toBeLessThan(700); // at once, not after expire_ms
    await rejectsWith(a.invoke('b::soon-gone', {}), 'function_not_found');
  });

  test.skipIf(!run)('an engine killed mid-call: invocation_stopped, then its functions expire', async () => {
    const name = uid('c');
    const a = await startNode(name, 'a');
    const child = await spawnEngineScript(childScript, [JSON.stringify(clusterOf(name, 'doomed'))]);
    await converged([a], ['doomed::sleep']);
    const call = a.invoke('doomed::sleep', { ms: 10_000 }, { timeoutMs: 20_000 });
    await sleep(200);
    child.child.kill('SIGKILL');
    const started = Date.now();
    const stopped = await rejectsWith(call, 'invocation_stopped');
    expect(stopped.message).toContain('doomed');
    expect(Date.now() - started).toBeLessThan(3000);
    await waitFor(async () => !(await functionsOf(a)).some((f) => f.function_id === 'doomed::sleep'), 3000, 'doomed::sleep to expire');
  });

  test.skipIf(!run)('an unreachable transport stops start-up with a clear error', async () => {
    const port = await freePort();
    const err = await startEngine({
      config: {
        bridge: { port: 0 },
        log: { level: 'silent' },
        cluster: { ...clusterOf('x', 'a', `${transport}://127.0.0.1:${port}`), connect_timeout_ms: 1000 },
      },
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.name).toBe('ConfigError');
    const scheme = transport === 'nats' ? 'NATS at nats' : 'Redis at redis';
    expect(err?.message).toContain(`cluster.url: cannot reach ${scheme}://127.0.0.1:${port}`);
  });

  test.skipIf(!run)('two engines with one node_id are told so', async () => {
    const name = uid('c');
    const log = captureLog('error');
    const first = await startEngine({ config: { bridge: { port: 0 }, cluster: clusterOf(name, 'same') }, logger: log.logger });
    track(() => first.stop());
    await startNode(name, 'same');
    await waitFor(() => log.records.some((r) => String(r.msg).includes('also uses node_id same')), 3000, 'the warning about the twin');
  });

  test.skipIf(!run)('a cluster transport other than nats is refused by the config', async () => {
    const err = await startEngine({ config: { log: { level: 'silent' }, cluster: { transport: 'carrier-pigeon' } } }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/cluster\.transport/);
  });
});

describe('cluster on nats: messages over max_payload', () => {
  test.skipIf(!runNats)('a call or an answer too large for NATS fails at once with message_too_large; a snapshot too large is told once', async () => {
    const name = uid('c');
    const logB = captureLog('warn');
    const a = await startTestEngine({ cluster: clusterFor('nats', name, 'a') });
    const b = await startEngine({ config: { bridge: { port: 0 }, cluster: clusterFor('nats', name, 'b') }, logger: logB.logger });
    track(() => b.stop());
    const w = worker(b, 'w-b');
    w.registerFunction('b::echo', async (input: unknown) => input);
    w.registerFunction('b::big', async () => ({ text: 'x'.repeat(1_200_000) }));
    await w.waitConnected();
    await converged([a], ['b::echo', 'b::big']);
    // The machine's NATS server keeps the default max_payload; a call travels with 8 bytes of framing.
    const limit = 1024 * 1024 - 8;

    let started = Date.now();
    const big = await rejectsWith(a.invoke('b::echo', { text: 'y'.repeat(1_200_000) }, { timeoutMs: 10_000 }), 'message_too_large');
    expect(big.message).toMatch(
      new RegExp(
        `^The call of b::echo forwarded to engine b is \\d+ bytes, more than one message of the cluster transport carries \\(${limit} bytes: the NATS server's max_payload, less 8 bytes of framing\\)$`,
      ),
    );
    expect(Date.now() - started).toBeLessThan(1000);

    started = Date.now();
    const answer = await rejectsWith(a.invoke('b::big', {}, { timeoutMs: 10_000 }), 'message_too_large');
    expect(answer.message).toMatch(/^The result of b::big on engine b is \d+ bytes, more than one message/);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await a.invoke('b::echo', { n: 1 })).toEqual({ n: 1 });

    // A function whose description alone is over the limit: b cannot send its snapshot, and says so once;
    // a keeps the list it had (b::echo still goes to b), and gets b's next one that fits.
    const huge = worker(b, 'w-huge');
    huge.registerFunction('b::described', async () => null, { description: 'z'.repeat(1_100_000) });
    await huge.waitConnected();
    await waitFor(() => logB.records.some((r) => String(r.msg).includes('more than one message of NATS carries')), 5000, "b's warning");
    expect(await a.invoke('b::echo', { n: 2 })).toEqual({ n: 2 });
    expect((await functionsOf(a)).map((f) => f.function_id)).not.toContain('b::described');
    await huge.shutdown();
    w.registerFunction('b::later', async () => 'later');
    await converged([a], ['b::later']);
    expect(logB.records.filter((r) => String(r.msg).includes('more than one message of NATS carries'))).toHaveLength(1);
  });

  test.skipIf(!runNats)('a channel item too large for NATS crosses engines in pieces; a text message too large aborts its channel', async () => {
    const name = uid('c');
    const a = await startTestEngine({ cluster: clusterFor('nats', name, 'a') });
    const b = await startTestEngine({ cluster: clusterFor('nats', name, 'b') });
    const wb = worker(b, 'wb');
    await wb.waitConnected();
    const size = 2_500_000; // over the default max_payload (1 MiB) twice
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i++) bytes[i] = i % 251;
    /** A raw end on `engine`'s bridge: one WebSocket frame as big as it is sent, as any client may send. */
    const rawEnd = async (engine: Engine, ref: ChannelRef) => {
      const ws = new WebSocket(`${engine.bridgeUrl}${channelPath(ref)}`);
      track(() => ws.terminate());
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      return ws;
    };
    const received = (ws: WebSocket) =>
      new Promise<{ data: Buffer; code: number }>((resolve) => {
        const parts: Buffer[] = [];
        ws.on('message', (d: Buffer) => parts.push(d));
        ws.once('close', (code) => resolve({ data: Buffer.concat(parts), code }));
      });

    // The channel lives on b; its writer comes through a (a relays each frame to b), its reader reads on b.
    const one = await wb.createChannel();
    const writer = await rawEnd(a, one.writerRef);
    const read = one.reader.readAll();
    writer.send(bytes, { binary: true });
    writer.close(1000);
    expect((await read).equals(bytes)).toBe(true);

    // The channel lives on b; its writer writes on b, its reader reads through a (b serves the item to a in pieces).
    const two = await wb.createChannel();
    const reader = await rawEnd(a, two.readerRef);
    const got = received(reader);
    const writerB = await rawEnd(b, two.writerRef);
    writerB.send(bytes, { binary: true });
    writerB.close(1000);
    const { data, code } = await got;
    expect(code).toBe(1000);
    expect(data.equals(bytes)).toBe(true);

    // A text message cannot be cut: its channel is aborted, the reader told so.
    const three = await wb.createChannel();
    const textWriter = await rawEnd(a, three.writerRef);
    const closed = new Promise<number>((resolve) => textWriter.once('close', resolve));
    const readText = three.reader.readAll().then(
      () => 'ended',
      () => 'aborted',
    );
    textWriter.send('t'.repeat(1_100_000));
    expect(await closed).toBe(1009);
    expect(await readText).toBe('aborted');
  });
});

describe.each([
  { transport: 'nats' as const, run: runNatsRestart },
  { transport: 'redis' as const, run: runRedisRestart },
])('cluster when its $transport server restarts', ({ transport, run }) => {
  /** A server of the test's own, to kill and start again on the same port. */
  async function ownServer(): Promise<{ url: string; kill(): Promise<void>; start(): Promise<void> }> {
    if (transport === 'redis') {
      const server = await SpareRedisServer.start();
      track(() => server.stop());
      return { url: server.url, kill: () => server.kill(), start: () => server.restart() };
    }
    const port = await freePort();
    const url = `nats://127.0.0.1:${port}`;
    let stop = async () => {};
    const start = async () => {
      const server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
      stop = async () => {
        server.kill('SIGKILL');
        await exited;
      };
      track(() => stop());
      await waitFor(async () => (await serviceAvailable('nats', url, { timeoutMs: 200 })).available, 5000, 'the NATS server');
    };
    await start();
    return { url, kill: () => stop(), start };
  }

  test.skipIf(!run)('calls to other engines fail with cluster_unavailable meanwhile, and resume by themselves', async () => {
    const server = await ownServer();
    const name = uid('c');
    const [a, b] = [
      await startTestEngine({ cluster: clusterFor(transport, name, 'a', server.url) }),
      await startTestEngine({ cluster: clusterFor(transport, name, 'b', server.url) }),
    ];
    worker(b, 'wb').registerFunction('b::ping', async () => 'pong');
    const wa = worker(a, 'wa');
    wa.registerFunction('a::ping', async () => 'local pong');
    await converged([a], ['b::ping']);
    expect(await a.invoke('b::ping', {})).toBe('pong');

    await server.kill();
    await waitFor(async () => (await a.invoke('b::ping', {}).catch((e: { code: string }) => e.code)) === 'cluster_unavailable', 3000, 'cluster_unavailable');
    expect(await a.invoke('a::ping', {})).toBe('local pong'); // local calls go on
    await sleep(1200); // longer than expire_ms: engines are not dropped while nobody's heartbeats can arrive

    await server.start();
    await waitFor(async () => (await a.invoke('b::ping', {}).catch((e: { code: string }) => e.code)) === 'pong', 8000, 'calls to b to resume');
  });
});
