/**
 * The engine's built-ins an operator console relies on: functions and triggers a worker marks
 * `metadata.internal: true` (hidden from the listings unless `include_internal`), the
 * `engine::triggers-available` trigger type, and `engine::config::get` (version, start time, listeners
 * and the loaded modules' config with its secrets redacted).
 *
 * Workers are real @flint/sdk workers. The Redis case uses the real server at FLINT_TEST_REDIS_URL
 * (default redis://127.0.0.1:6379; skipped with a printed reason when absent, a failure with
 * FLINT_REQUIRE_SERVICES=1).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Engine, ModuleDefinition } from '@flint/engine';
import { EngineFunctions, EngineTriggers } from '@flint/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cleanup, track } from '../support/cleanup.js';
import { type TestWorker, listFunctions, listTriggers, listWorkers, startTestEngine, startWorker, waitForFunction } from '../support/harness.js';
import { RawClient } from '../support/raw-client.js';
import { deleteKeysWithPrefix } from '../support/services/redis-server.js';
import { gateService, serviceAvailable } from '../support/services/services.js';
import { sleep, uid, waitFor } from '../support/util.js';

const REDIS_URL = process.env.FLINT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const runRedis = gateService('engine::config::get with a Redis-backed module', await serviceAvailable('redis', REDIS_URL));

const ENGINE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** How long an absence is waited out: well over the 20 ms debounce of the availability triggers. */
const QUIET_MS = 200;

afterEach(cleanup);

describe('metadata.internal hides a worker function or trigger from the listings', () => {
  it('hidden by default, shown with include_internal: true; still callable', async () => {
    const engine = await startTestEngine();
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('app::visible', () => 'seen', { metadata: { team: 'a' } });
      w.registerFunction('app::plumbing', () => 'works', { metadata: { internal: true, team: 'console' } });
      // Only `true` counts: any other value is an ordinary metadata field.
      w.registerFunction('app::not-quite', () => null, { metadata: { internal: 'yes' } });
      w.registerTrigger({ type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'app::visible', config: {}, metadata: { note: 'listed' } });
      w.registerTrigger({ type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'app::visible', config: {}, metadata: { internal: true } });
    });
    await waitForFunction(engine, 'app::plumbing');
    await waitFor(async () => (await listTriggers(engine, true)).filter((t) => t.function_id === 'app::visible').length === 2, 2000, 'both triggers');

    expect((await listFunctions(engine)).map((f) => f.function_id).sort()).toEqual(['app::not-quite', 'app::visible']);
    const all = await listFunctions(engine, true);
    expect(all.find((f) => f.function_id === 'app::plumbing')?.metadata).toEqual({ internal: true, team: 'console' });
    expect(all.map((f) => f.function_id)).toEqual(expect.arrayContaining(['app::visible', 'app::plumbing', 'app::not-quite', EngineFunctions.LIST_FUNCTIONS]));

    const visible = await listTriggers(engine);
    expect(visible.map((t) => t.metadata)).toEqual([{ note: 'listed' }]);
    const triggers = await listTriggers(engine, true);
    expect(triggers.filter((t) => t.function_id === 'app::visible').map((t) => t.metadata)).toEqual(
      expect.arrayContaining([{ note: 'listed' }, { internal: true }]),
    );

    // Hidden is not refused: the worker's row still counts it, and it is called as any other.
    const row = (await listWorkers(engine)).find((w) => w.name === worker.name);
    expect(row?.functions).toEqual(expect.arrayContaining(['app::plumbing', 'app::visible']));
    expect(await worker.trigger({ function_id: 'app::plumbing', payload: {} })).toBe('works');
    expect(await engine.invoke('app::plumbing', {})).toBe('works');
  });
});

describe('engine::triggers-available', () => {
  /** A worker subscribed to engine::triggers-available, and what it received. */
  async function subscriber(engine: Engine): Promise<{ worker: TestWorker; events: unknown[]; functionId: string }> {
    const events: unknown[] = [];
    const functionId = uid('ta::on');
    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction(functionId, (data) => {
        events.push(data);
        return null;
      });
      w.registerTrigger({ type: EngineTriggers.TRIGGERS_AVAILABLE, function_id: functionId, config: {} });
    });
    await waitFor(async () => (await listTriggers(engine)).some((t) => t.function_id === functionId && t.status === 'active'), 2000, 'the subscription');
    return { worker, events, functionId };
  }

  it("fires once for a burst of another worker's trigger registrations, and again for removals; not for the subscription itself", async () => {
    const engine = await startTestEngine();
    const { events } = await subscriber(engine);
    await sleep(QUIET_MS);
    expect(events).toEqual([]); // its own registration did not wake it

    const other = await startWorker('flint', engine, (w) => w.registerFunction('other::on', () => null));
    const a = other.registerTrigger({ type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'other::on', config: {} });
    other.registerTrigger({ type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'other::on', config: {} });
    other.registerTrigger({ type: EngineTriggers.FUNCTIONS_AVAILABLE, function_id: 'other::on', config: {} });
    await waitFor(() => events.length >= 1, 2000, 'triggers_changed after the registrations');
    await sleep(QUIET_MS);
    expect(events).toEqual([{ event: 'triggers_changed' }]);

    a.unregister();
    await waitFor(() => events.length >= 2, 2000, 'triggers_changed after an unregistration');
    expect(events[1]).toEqual({ event: 'triggers_changed' });

    // A disconnect takes the worker's last two triggers away: one more firing.
    await other.shutdown();
    await waitFor(() => events.length >= 3, 2000, 'triggers_changed after the disconnect');
    await sleep(QUIET_MS);
    expect(events).toEqual([{ event: 'triggers_changed' }, { event: 'triggers_changed' }, { event: 'triggers_changed' }]);
    expect((await listTriggers(engine)).map((t) => t.trigger_type)).toEqual([EngineTriggers.TRIGGERS_AVAILABLE]);
  });

  it('fires when a trigger is registered again under its id, and when it is applied or parked as its type comes and goes', async () => {
    const engine = await startTestEngine();
    const { events } = await subscriber(engine);
    const owner = await RawClient.connect(engine.bridgeUrl);
    const register = (config: unknown) =>
      owner.send({ type: 'registertrigger', id: 'ta-trigger', trigger_type: 'ta::type', function_id: 'ta::handler', config });
    // Parked: nobody provides ta::type yet.
    register({ n: 1 });
    await waitFor(() => events.length === 1, 2000, 'triggers_changed after the registration');
    await sleep(QUIET_MS);
    const seen = async () => (await listTriggers(engine)).find((t) => t.id === 'ta-trigger');
    expect(await seen()).toMatchObject({ status: 'parked', config: { n: 1 } });

    register({ n: 2 });
    await waitFor(() => events.length === 2, 2000, 'triggers_changed after the registration under the same id');
    expect(await seen()).toMatchObject({ status: 'parked', config: { n: 2 } });

    const provider = await startWorker('flint', engine, (w) =>
      w.registerTriggerType({ id: 'ta::type', description: 'a type' }, { registerTrigger: () => {}, unregisterTrigger: () => {} }),
    );
    await waitFor(() => events.length === 3, 2000, 'triggers_changed once the trigger is applied');
    expect(await seen()).toMatchObject({ status: 'active' });

    await provider.shutdown();
    await waitFor(() => events.length === 4, 2000, 'triggers_changed once the trigger is parked again');
    expect(await seen()).toMatchObject({ status: 'parked' });
    await sleep(QUIET_MS);
    expect(events).toHaveLength(4);
  });

  it('a second subscription wakes neither subscriber; an ordinary trigger afterwards reaches both', async () => {
    const engine = await startTestEngine();
    const first = await subscriber(engine);
    const second = await subscriber(engine);
    await sleep(QUIET_MS);
    expect(first.events).toEqual([]);
    expect(second.events).toEqual([]);

    const other = await startWorker('flint', engine, (w) => w.registerFunction('other::on', () => null));
    other.registerTrigger({ type: EngineTriggers.WORKERS_AVAILABLE, function_id: 'other::on', config: {} });
    await waitFor(() => first.events.length === 1 && second.events.length === 1, 2000, 'both subscribers to fire');

    // A subscriber leaving is no trigger change for the one that stays.
    await second.worker.shutdown();
    await waitFor(async () => (await listTriggers(engine)).every((t) => t.function_id !== second.functionId), 2000, 'the second subscription to go');
    await sleep(QUIET_MS);
    expect(first.events).toHaveLength(1);
  });

  it('is listed among the engine trigger types (include_internal) and takes no config keys', async () => {
    const engine = await startTestEngine();
    const types = (await engine.invoke(EngineFunctions.LIST_TRIGGER_TYPES, { include_internal: true })) as {
      trigger_types: { id: string; description: string }[];
    };
    expect(types.trigger_types.find((t) => t.id === EngineTriggers.TRIGGERS_AVAILABLE)?.description).toEqual(expect.any(String));

    const worker = await startWorker('flint', engine, (w) => {
      w.registerFunction('cfg::on', () => null);
      w.registerFunction('cfg::ok', () => null);
    });
    worker.registerTrigger({ type: EngineTriggers.TRIGGERS_AVAILABLE, function_id: 'cfg::on', config: { scope: 'x' } });
    worker.registerTrigger({ type: EngineTriggers.TRIGGERS_AVAILABLE, function_id: 'cfg::ok', config: {} });
    await waitFor(async () => (await listTriggers(engine)).some((t) => t.function_id === 'cfg::ok' && t.status === 'active'), 2000, 'the valid subscription');
    // The one with a config key was refused (and so is not kept).
    expect((await listTriggers(engine, true)).filter((t) => t.function_id === 'cfg::on')).toEqual([]);
  });
});

describe('engine::config::get', () => {
  /** A module with a free-form config (for secrets a built-in module has no key for); it does nothing. */
  const secretsModule: ModuleDefinition = {
    name: 'test-secrets',
    configSchema: z.looseObject({}),
    create: () => ({ name: 'test-secrets', start: () => {} }),
  };

  interface About {
    version: string;
    started_at: number;
    listeners: { name: string; url: string }[];
    modules: { name: string; config: Record<string, unknown> }[];
  }

  it('reports the version, start time, listeners and the modules with their config, secrets shown as ***', async () => {
    const before = Date.now();
    const engine = await startTestEngine(
      {
        modules: [
          { name: 'flint-http', config: { port: 0, cors: { origins: ['https://console.example'], credentials: true } } },
          {
            name: 'test-secrets',
            config: {
              auth_token: 'tok-123',
              upstream_url: 'https://svc:hunter2@upstream.example:8443/api',
              plain_url: 'https://upstream.example/api',
              nested: { client_secret: 'cs', labels: ['a', 'b'], hosts: [{ name: 'h1', password: 'p1' }] },
              api_keys: ['k1', 'k2'],
            },
          },
        ],
      },
      { modules: [secretsModule] },
    );
    const after = Date.now();
    const about = (await engine.invoke('engine::config::get', {})) as About;

    expect(about.version).toBe(ENGINE_VERSION);
    expect(about.started_at).toBeGreaterThanOrEqual(before);
    expect(about.started_at).toBeLessThanOrEqual(after);
    expect(about.listeners).toEqual(engine.listeners());
    expect(about.listeners.map((l) => l.url)).toContain(engine.bridgeUrl);
    expect(about.listeners.length).toBeGreaterThanOrEqual(2); // the bridge and flint-http
    for (const l of about.listeners) expect(l).toEqual({ name: expect.any(String), url: expect.stringMatching(/^[a-z]+:\/\//) });

    expect(about.modules.map((m) => m.name)).toEqual(['flint-http', 'test-secrets']);
    expect(about.modules[1]?.config).toEqual({
      auth_token: '***',
      upstream_url: 'https://svc:***@upstream.example:8443/api',
      plain_url: 'https://upstream.example/api',
      nested: { client_secret: '***', labels: ['a', 'b'], hosts: [{ name: 'h1', password: '***' }] },
      api_keys: ['***', '***'],
    });
    // The parsed config (defaults filled in); a flag is not a secret even under a secret-looking key.
    expect(about.modules[0]?.config).toMatchObject({ port: 0, cors: { origins: ['https://console.example'], credentials: true } });

    // Nothing secret anywhere in the answer.
    const text = JSON.stringify(about);
    for (const secret of ['tok-123', 'hunter2', '"cs"', 'p1', 'k1', 'k2']) expect(text).not.toContain(secret);
  });

  it('is an engine:: function: hidden from the default listing, described with include_internal', async () => {
    const engine = await startTestEngine();
    expect((await listFunctions(engine)).some((f) => f.function_id === 'engine::config::get')).toBe(false);
    const info = (await listFunctions(engine, true)).find((f) => f.function_id === 'engine::config::get');
    expect(info).toMatchObject({ description: expect.any(String), providers: [{ module: 'flint-engine' }] });
    // Called by a worker over the bridge as any function.
    const worker = await startWorker('flint', engine);
    const about = (await worker.trigger({ function_id: 'engine::config::get', payload: {} })) as About;
    expect(about.version).toBe(ENGINE_VERSION);
    expect(about.modules).toEqual(engine.config.modules.map((m) => ({ name: m.name, config: expect.anything() })));
  });

  it.skipIf(!runRedis)('shows a Redis URL of a built-in module without its password', async () => {
    const key_prefix = `flint-test:config-get:${randomUUID()}:`;
    track(() => deleteKeysWithPrefix(REDIS_URL, key_prefix));
    // Redis's default user accepts any password unless one is configured, so a made-up one still connects.
    const url = new URL(REDIS_URL);
    if (url.password === '') {
      url.username ||= 'default';
      url.password = 'not-the-real-one';
    }
    const password = url.password;
    const engine = await startTestEngine({
      modules: [{ name: 'flint-state', config: { adapter: { name: 'redis', config: { redis_url: url.toString(), key_prefix } } } }],
    });
    await engine.invoke('state::set', { scope: 's', key: 'k', value: 1 }); // the store is really in use

    const about = (await engine.invoke('engine::config::get', {})) as About;
    const state = about.modules.find((m) => m.name === 'flint-state');
    const adapter = state?.config.adapter as { name: string; config: { redis_url: string; key_prefix: string } };
    expect(adapter.name).toBe('redis');
    expect(adapter.config.key_prefix).toBe(key_prefix);
    const redacted = new URL(adapter.config.redis_url);
    expect(redacted.password).toBe('***');
    expect(redacted.host).toBe(url.host);
    expect(JSON.stringify(about)).not.toContain(password);
  });
});
