/**
 * Trigger configs are checked against the schema of their type (module types have one) before the
 * type's provider sees them: an unknown key or a wrong type is refused with a
 * `triggerregistrationresult` error naming the key, and the trigger is not kept and never fires.
 * Valid configs as iii-sdk workers send them still register. A trigger whose type nobody provides
 * is parked with one warning naming the type and the known types.
 */
import type { Engine } from '@flint/engine';
import { type Worker as FlintWorker, TriggerRegistrationError } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, connectWorker, findTrigger, listTriggers, startTestEngine, startWorker } from '../support/harness.js';
import { fetchWithin, json, rawRegisterRoute } from '../support/http/helpers.js';
import { LEVEL, type LogRecord, captureLog } from '../support/log-capture.js';
import { type Frame, RawClient } from '../support/raw-client.js';
import { uid, waitFor, within } from '../support/util.js';

afterEach(cleanup);

const STATE_KEYS = 'scope, key, condition_function_id';
const HTTP_KEYS = 'api_path, http_method, condition_function_id, middleware_function_ids, description, metadata';

/** An engine with flint-http (ephemeral port) and flint-state; `logger` to capture its log. */
async function startEngineWithTypes(options: Parameters<typeof startTestEngine>[1] = {}): Promise<{ engine: Engine; base: string }> {
  const engine = await startTestEngine({ modules: [{ name: 'flint-http', config: { port: 0 } }, { name: 'flint-state' }] }, options);
  const base = engine.listeners().find((l) => l.name === 'http')?.url as string;
  return { engine, base };
}

async function rawRegister(client: RawClient, id: string, type: string, functionId: string, config: unknown): Promise<Frame> {
  client.send({ type: 'registertrigger', id, trigger_type: type, function_id: functionId, config });
  return client.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === id);
}

describe('trigger config validation over the bridge (raw client)', () => {
  it('refuses a state trigger with a misspelt or mistyped key, naming it; the refused trigger never fires', async () => {
    const { engine } = await startEngineWithTypes();
    const raw = await RawClient.connect(engine.bridgeUrl);
    const refusedCalls: unknown[] = [];
    const sentinelCalls: unknown[] = [];
    await raw.serve('raw::on-change', (data) => void refusedCalls.push(data));
    await raw.serve('raw::sentinel', (data) => void sentinelCalls.push(data));

    const cases: [id: string, config: unknown, message: string][] = [
      ['scop', { scop: 'orders' }, `unknown key "scop" in state trigger config (known: ${STATE_KEYS})`],
      ['two-unknown', { scope: 'orders', scop: 'x', kye: 'y' }, `unknown keys "scop", "kye" in state trigger config (known: ${STATE_KEYS})`],
      ['scope-number', { scope: 5 }, 'state trigger config: scope must be a string'],
      ['condition-empty', { condition_function_id: '' }, 'state trigger config: condition_function_id must not be empty'],
      ['not-object', 'orders', 'state trigger config must be an object'],
      ['both', { key: true, scop: 'orders' }, `unknown key "scop" in state trigger config (known: ${STATE_KEYS}); state trigger config: key must be a string`],
    ];
    for (const [id, config, message] of cases) {
      const result = await rawRegister(raw, id, 'state', 'raw::on-change', config);
      expect(result.error, id).toEqual({ code: 'trigger_registration_failed', message });
      expect(result.parked, id).toBeUndefined();
    }
    expect(await listTriggers(engine)).toEqual([]);

    // A valid trigger on the scope the misspelt one meant: it fires, the refused ones do not.
    expect((await rawRegister(raw, 'ok', 'state', 'raw::sentinel', { scope: 'orders' })).error).toBeUndefined();
    await engine.invoke('state::set', { scope: 'orders', key: 'o1', value: 1 });
    await engine.invoke('state::set', { scope: 'other', key: 'o2', value: 2 });
    await waitFor(() => sentinelCalls.length === 1, 2000, 'the valid trigger to fire');
    // The state module fires a change's triggers in order over one connection, so a refused trigger
    // that were going to fire would have fired before the sentinel.
    expect(refusedCalls).toEqual([]);
    expect((await listTriggers(engine)).map((t) => [t.id, t.status])).toEqual([['ok', 'active']]);
  });

  it('refuses an http trigger with an unknown key or a wrong type, naming it; no route is served', async () => {
    const { engine, base } = await startEngineWithTypes();
    const raw = await RawClient.connect(engine.bridgeUrl);
    await raw.serve('raw::route', () => ({ body: 'served' }));

    const cases: [id: string, config: unknown, message: string][] = [
      ['path-number', { api_path: 5, http_method: 'GET' }, 'http trigger config: api_path must be a string'],
      ['verb', { api_path: '/x', http_method: 'GET', verb: 'POST' }, `unknown key "verb" in http trigger config (known: ${HTTP_KEYS})`],
      ['no-method', { api_path: '/x' }, 'http trigger config: http_method is required'],
      [
        'middleware',
        { api_path: '/x', http_method: 'GET', middleware_function_ids: ['mw::a', 7] },
        'http trigger config: middleware_function_ids[1] must be a string',
      ],
      ['metadata', { api_path: '/x', http_method: 'GET', metadata: 'm' }, 'http trigger config: metadata must be an object'],
    ];
    for (const [id, config, message] of cases) {
      const result = await rawRegisterRoute(raw, id, 'raw::route', config);
      expect(result.error, id).toEqual({ code: 'trigger_registration_failed', message });
    }
    expect(await listTriggers(engine)).toEqual([]);
    expect((await fetchWithin(`${base}/x`)).status).toBe(404);
  });

  it('refuses any config key on the engine trigger types (they take none)', async () => {
    const { engine } = await startEngineWithTypes();
    const raw = await RawClient.connect(engine.bridgeUrl);
    await raw.serve('raw::watch', () => null);
    const result = await rawRegister(raw, 'watch', 'engine::workers-available', 'raw::watch', { kept: true });
    expect(result.error).toEqual({
      code: 'trigger_registration_failed',
      message: 'unknown key "kept" in engine::workers-available trigger config (it takes no keys)',
    });
    expect((await rawRegister(raw, 'watch-ok', 'engine::workers-available', 'raw::watch', {})).error).toBeUndefined();
  });

  it('forwards any config of a worker-provided trigger type to that worker unchecked', async () => {
    const { engine } = await startEngineWithTypes();
    const provider = await RawClient.connect(engine.bridgeUrl);
    provider.send({ type: 'registertriggertype', id: 'cron-ish', description: 'worker type' });
    await provider.roundTrip();
    const raw = await RawClient.connect(engine.bridgeUrl);
    await raw.serve('raw::tick', () => null);
    raw.send({ type: 'registertrigger', id: 'tick', trigger_type: 'cron-ish', function_id: 'raw::tick', config: { anything: [1, 2], scop: 'x' } });
    const forwarded = await provider.next((f) => f.type === 'registertrigger' && f.id === 'tick');
    expect(forwarded.config).toEqual({ anything: [1, 2], scop: 'x' });
  });
});

describe('trigger config validation with @flint/sdk', () => {
  it('rejects ready with a TriggerRegistrationError naming the key', async () => {
    const { engine } = await startEngineWithTypes();
    const worker = connectWorker('flint', engine.bridgeUrl);
    const w = worker.native as FlintWorker;
    w.registerFunction('sdk::on-change', () => null);
    const ref = w.registerTrigger({ type: 'state', function_id: 'sdk::on-change', config: { scop: 'orders' } });
    const error = await within(
      ref.ready.then(
        () => undefined,
        (err: unknown) => err,
      ),
      3000,
      'ready',
    );
    expect(error).toBeInstanceOf(TriggerRegistrationError);
    expect(error).toMatchObject({ code: 'trigger_registration_failed', message: `unknown key "scop" in state trigger config (known: ${STATE_KEYS})` });
    expect(await listTriggers(engine)).toEqual([]);
  });
});

describe.each(SDK_KINDS)('valid trigger configs from a %s worker', (kind: SdkKind) => {
  it('registers http routes (with the description and metadata iii helpers send, any method case) and state triggers', async () => {
    const { engine, base } = await startEngineWithTypes();
    const changes: unknown[] = [];
    await startWorker(kind, engine, (w) => {
      w.registerFunction('ok::route', (req: { path_params: unknown }) => ({ status_code: 200, body: { params: req.path_params } }));
      w.registerTrigger({
        type: 'http',
        function_id: 'ok::route',
        config: { api_path: '/orders/:id', http_method: 'get', description: 'one order', metadata: { tag: 'orders' } },
      });
      w.registerFunction('ok::cond', () => true);
      w.registerFunction('ok::on-change', (e: unknown) => void changes.push(e));
      w.registerTrigger({ type: 'state', function_id: 'ok::on-change', config: { scope: 'orders', key: 'o1', condition_function_id: 'ok::cond' } });
    });
    await waitFor(async () => (await listTriggers(engine)).filter((t) => t.status === 'active').length === 2, 3000, 'both triggers to be active');
    expect(await json(await fetchWithin(`${base}/orders/7`))).toEqual({ params: { id: '7' } });
    // The listing keeps the config as registered.
    expect((await findTrigger(engine, (t) => t.function_id === 'ok::route'))?.config).toEqual({
      api_path: '/orders/:id',
      http_method: 'get',
      description: 'one order',
      metadata: { tag: 'orders' },
    });
    await engine.invoke('state::set', { scope: 'orders', key: 'o1', value: 1 });
    await waitFor(() => changes.length === 1, 2000, 'the state trigger to fire');
  });
});

describe('a trigger whose type nobody provides', () => {
  const parkedWarnings = (records: LogRecord[]) => records.filter((r) => r.level === LEVEL.warn && /is parked/.test(r.msg ?? ''));

  it('is parked with one warning naming its type and the known types, not one per re-registration or reconnect', async () => {
    const log = captureLog('warn');
    const { engine } = await startEngineWithTypes({ logger: log.logger });
    const known = 'engine::functions-available, engine::triggers-available, engine::workers-available, http, state';

    const first = await RawClient.connect(engine.bridgeUrl);
    await first.serve('raw::fn', () => null);
    const result = await rawRegister(first, 't1', 'htpp', 'raw::fn', { api_path: '/x', http_method: 'GET' });
    expect(result.parked).toBe(true);
    expect(result.error).toBeUndefined();
    expect(parkedWarnings(log.records).map((r) => r.msg)).toEqual([
      `trigger t1 (type "htpp") is parked: no module or worker provides "htpp" (known: ${known})`,
    ]);
    expect(parkedWarnings(log.records)[0]).toMatchObject({ trigger_id: 't1', trigger_type: 'htpp', function_id: 'raw::fn' });

    // The same trigger again, and again after a reconnect (as an SDK replays it): no new warning.
    await rawRegister(first, 't1', 'htpp', 'raw::fn', { api_path: '/x', http_method: 'GET' });
    first.close();
    await first.closed;
    const second = await RawClient.connect(engine.bridgeUrl);
    await second.serve('raw::fn', () => null);
    expect((await rawRegister(second, 't1', 'htpp', 'raw::fn', { api_path: '/x', http_method: 'GET' })).parked).toBe(true);
    // Another trigger gets its own warning.
    await rawRegister(second, 't2', 'sate', 'raw::fn', {});
    await waitFor(() => parkedWarnings(log.records).length === 2, 2000, 'the warning about t2');
    expect(parkedWarnings(log.records).map((r) => r.trigger_id)).toEqual(['t1', 't2']);
    expect((await listTriggers(engine)).map((t) => [t.id, t.status])).toEqual([
      ['t1', 'parked'],
      ['t2', 'parked'],
    ]);
  });

  it('is applied, without a warning, when a worker that provides the type is already there', async () => {
    const log = captureLog('warn');
    const { engine } = await startEngineWithTypes({ logger: log.logger });
    const type = uid('worker-type');
    const provider = await RawClient.connect(engine.bridgeUrl);
    provider.send({ type: 'registertriggertype', id: type, description: 'worker type' });
    await provider.roundTrip();
    const raw = await RawClient.connect(engine.bridgeUrl);
    await raw.serve('raw::fn', () => null);
    raw.send({ type: 'registertrigger', id: 'w1', trigger_type: type, function_id: 'raw::fn', config: {} });
    const forwarded = await provider.next((f) => f.type === 'registertrigger' && f.id === 'w1');
    provider.send({ type: 'triggerregistrationresult', id: forwarded.id, trigger_type: type, function_id: 'raw::fn' });
    await waitFor(async () => (await findTrigger(engine, (t) => t.id === 'w1'))?.status === 'active', 2000, 'the trigger to be active');
    expect(parkedWarnings(log.records)).toEqual([]);
  });
});
