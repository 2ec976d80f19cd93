/**
 * Registry semantics (design.md §3): several providers per function id with least-in-flight
 * balancing, ownership per connection, parked triggers and clean-up on disconnect.
 */
import type { Engine } from '@flint/engine';
import { REATTACH_HEADER } from '@flint/protocol';
import type { Worker as FlintWorker } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import {
  SDK_KINDS,
  type SdkKind,
  type TriggerConfigSeen,
  connectWorker,
  findTrigger,
  isListed,
  listTriggers,
  listWorkers,
  startTestEngine,
  startWorker,
  waitForFunction,
} from '../support/harness.js';
import { RawClient } from '../support/raw-client.js';
import { deferred, uid, waitFor, within } from '../support/util.js';

afterEach(cleanup);

describe.each(SDK_KINDS)('registry with %s workers', (kind: SdkKind) => {
  let engine: Engine;

  it('balances calls over two providers of the same id (least in flight first)', async () => {
    engine = await startTestEngine();
    const gate = deferred();
    const calls: { who: string; payload: { block?: boolean; n?: number } }[] = [];
    const provider = (who: string) => (payload: { block?: boolean; n?: number }) => {
      calls.push({ who, payload });
      return payload.block ? gate.promise.then(() => who) : who;
    };
    await startWorker(kind, engine, (w) => w.registerFunction('lb::fn', provider('A')));
    await startWorker(kind, engine, (w) => w.registerFunction('lb::fn', provider('B')));
    const caller = await startWorker(kind, engine);

    // Both idle: calls go to both providers.
    const idleResults: string[] = [];
    for (let i = 0; i < 6; i++) idleResults.push(await caller.trigger({ function_id: 'lb::fn', payload: { n: i } }));
    expect(new Set(idleResults)).toEqual(new Set(['A', 'B']));

    // One provider busy with a slow call: every new call goes to the idle one.
    calls.length = 0;
    const slow = caller.trigger({ function_id: 'lb::fn', payload: { block: true } });
    await waitFor(() => calls.length === 1, 2000, 'the slow call to start');
    const busy = calls[0]?.who;
    const idle = busy === 'A' ? 'B' : 'A';
    const whileBusy: string[] = [];
    for (let i = 0; i < 5; i++) whileBusy.push(await caller.trigger({ function_id: 'lb::fn', payload: { n: i } }));
    expect(whileBusy).toEqual([idle, idle, idle, idle, idle]);
    gate.resolve();
    expect(await slow).toBe(busy);
  });

  it('keeps a function listed until its last provider leaves', async () => {
    engine = await startTestEngine();
    const a = await startWorker(kind, engine, (w) => w.registerFunction('shared::fn', () => 'A'));
    const b = await startWorker(kind, engine, (w) => w.registerFunction('shared::fn', () => 'B'));
    await a.shutdown();
    await waitFor(async () => !(await listWorkers(engine)).some((w) => w.name === a.name), 2000, 'A to leave');
    expect(isListed(engine, 'shared::fn')).toBe(true);
    const raw = await RawClient.connect(engine.bridgeUrl);
    expect((await raw.invoke('shared::fn', {})).result).toBe('B');
    await b.shutdown();
    await waitForFunction(engine, 'shared::fn', false);
    expect((await raw.invoke('shared::fn', {})).error?.code).toBe('function_not_found');
  });

  it('removes the functions, triggers and worker row of a worker that disconnects', async () => {
    engine = await startTestEngine();
    const w = await startWorker(kind, engine, (x) => {
      x.registerFunction('gone::fn', () => 1);
      x.registerTrigger({ type: 'engine::workers-available', function_id: 'gone::fn', config: {} });
    });
    await waitFor(() => findTrigger(engine, (t) => t.function_id === 'gone::fn' && t.status === 'active'), 2000, 'trigger active');
    const row = (await listWorkers(engine)).find((x) => x.name === w.name);
    expect(row?.functions).toEqual(['gone::fn']);
    await w.shutdown();
    await waitFor(() => engine.stats().workers === 0, 2000, 'the worker to be gone');
    expect(isListed(engine, 'gone::fn')).toBe(false);
    expect(await findTrigger(engine, (t) => t.function_id === 'gone::fn')).toBeUndefined();
    expect(await listWorkers(engine)).toEqual([]);
    expect(await listWorkers(engine, row?.id)).toEqual([]);
  });

  it('parks a trigger of an unknown type and applies it when a provider registers the type, again after the provider comes back', async () => {
    engine = await startTestEngine();
    const type = uid('later');
    const registrant = await startWorker(kind, engine, (w) => {
      w.registerFunction('park::target', () => 'x');
      w.registerTrigger({ type, function_id: 'park::target', config: { every: 'minute' } });
    });
    const parked = await waitFor(() => findTrigger(engine, (t) => t.trigger_type === type), 2000, 'the trigger to be listed');
    expect(parked).toMatchObject({ status: 'parked', function_id: 'park::target', config: { every: 'minute' } });

    const seen1: TriggerConfigSeen[] = [];
    const provider1 = await startWorker(SDK_KINDS.find((k) => k !== kind) as SdkKind, engine, (p) =>
      p.registerTriggerType({ id: type, description: 'late type' }, { registerTrigger: (t) => void seen1.push(t), unregisterTrigger: () => {} }),
    );
    await waitFor(() => seen1.length === 1, 2000, 'the parked trigger to be forwarded');
    expect(seen1[0]).toMatchObject({ id: parked.id, function_id: 'park::target', config: { every: 'minute' } });
    await waitFor(async () => (await findTrigger(engine, (t) => t.id === parked.id))?.status === 'active', 2000, 'status active');

    // The provider leaves: the trigger goes back to parked (it still belongs to the registrant).
    await provider1.shutdown();
    await waitFor(async () => (await findTrigger(engine, (t) => t.id === parked.id))?.status === 'parked', 2000, 'status parked again');

    // A new provider of the type gets it again.
    const seen2: TriggerConfigSeen[] = [];
    await startWorker(kind, engine, (p) =>
      p.registerTriggerType({ id: type, description: 'late type again' }, { registerTrigger: (t) => void seen2.push(t), unregisterTrigger: () => {} }),
    );
    await waitFor(() => seen2.length === 1, 2000, 'the trigger to be re-applied');
    expect(seen2[0]).toMatchObject({ id: parked.id, function_id: 'park::target', config: { every: 'minute' } });
    await waitFor(async () => (await findTrigger(engine, (t) => t.id === parked.id))?.status === 'active', 2000, 'status active again');
    expect(registrant.kind).toBe(kind);
  });
});

describe('registry: ownership and parking details', () => {
  let engine: Engine;

  it('ownership is per connection: a reconnected worker keeps a function the old connection also registered', async () => {
    engine = await startTestEngine();
    const a = await RawClient.connect(engine.bridgeUrl);
    await a.serve('own::f', () => 'from A');
    const b = await RawClient.connect(engine.bridgeUrl); // the same worker, reconnected
    await b.serve('own::f', () => 'from B');
    await a.close();
    await waitFor(() => engine.stats().workers === 1, 2000, 'A cleaned up');
    expect(isListed(engine, 'own::f')).toBe(true);
    const caller = await RawClient.connect(engine.bridgeUrl);
    for (let i = 0; i < 3; i++) expect((await caller.invoke('own::f', {})).result).toBe('from B');
  });

  it('ownership is per connection for triggers too: the reconnected worker keeps the re-registered trigger after the old connection goes', async () => {
    engine = await startTestEngine();
    const a = await RawClient.connect(engine.bridgeUrl);
    a.send({ type: 'registertrigger', id: 'trg-own', trigger_type: 'engine::workers-available', function_id: 'own::on', config: {} });
    await a.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === 'trg-own');
    // The same worker, reconnected: it presents the reattach token of its previous connection.
    const token = (await a.waitFrame((f) => f.type === 'workerregistered')).reattach_token as string;
    const b = await RawClient.connect(engine.bridgeUrl, '/', { headers: { [REATTACH_HEADER]: token } });
    b.send({ type: 'registertrigger', id: 'trg-own', trigger_type: 'engine::workers-available', function_id: 'own::on', config: {} });
    expect((await b.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === 'trg-own')).error).toBeUndefined();
    await a.whenClosed();
    await waitFor(() => engine.stats().workers === 1, 2000, 'A cleaned up');
    expect(await findTrigger(engine, (t) => t.id === 'trg-own')).toMatchObject({ status: 'active', function_id: 'own::on' });
    await b.close();
    await waitFor(async () => (await findTrigger(engine, (t) => t.id === 'trg-own')) === undefined, 2000, 'B cleaned up');
  });

  it('tells the owner of a parked trigger when the provider that appears later rejects it', async () => {
    engine = await startTestEngine();
    const type = uid('picky');
    const registrant = await RawClient.connect(engine.bridgeUrl);
    registrant.send({ type: 'registertrigger', id: 'trg-picky', trigger_type: type, function_id: 'p::fn', config: { bad: true } });
    const first = await registrant.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === 'trg-picky');
    expect(first).toMatchObject({ parked: true });
    expect(first.error).toBeUndefined();
    const from = registrant.frames.length;
    await startWorker('flint', engine, (p) =>
      p.registerTriggerType(
        { id: type, description: 'rejects everything' },
        {
          registerTrigger: () => {
            throw new Error('bad config');
          },
          unregisterTrigger: () => {},
        },
      ),
    );
    await waitFor(async () => (await findTrigger(engine, (t) => t.id === 'trg-picky')) === undefined, 2000, 'the rejected trigger to be dropped');
    const late = await registrant.waitFrame((f) => f.type === 'triggerregistrationresult' && f.id === 'trg-picky', 1000, from);
    expect(late.error).toMatchObject({ code: 'trigger_registration_failed', message: expect.stringContaining('bad config') });
  });

  it('Flint SDK: ready resolves {parked: true} for a trigger of an unknown type', async () => {
    engine = await startTestEngine();
    const w = connectWorker('flint', engine.bridgeUrl).native as FlintWorker;
    const type = uid('nobody');
    const t = w.registerTrigger({ type, function_id: 'p::fn', config: {} });
    expect(await within(t.ready, 2000, 'ready')).toEqual({ parked: true });
    expect((await listTriggers(engine)).find((x) => x.id === t.id)).toMatchObject({ status: 'parked', trigger_type: type });
  });

  it('a trigger whose provider disconnects before answering the forwarded registration is parked, not lost', async () => {
    engine = await startTestEngine();
    const type = uid('slowtype');
    const forwarded = deferred();
    const provider = await startWorker('flint', engine, (p) =>
      p.registerTriggerType(
        { id: type, description: 'never answers' },
        {
          registerTrigger: () => {
            forwarded.resolve();
            return new Promise<void>(() => {});
          },
          unregisterTrigger: () => {},
        },
      ),
    );
    const registrant = await RawClient.connect(engine.bridgeUrl);
    registrant.send({ type: 'registertrigger', id: 'trg-pending', trigger_type: type, function_id: 'p::fn', config: {} });
    await within(forwarded.promise, 2000, 'forwarding');
    await provider.shutdown();
    await waitFor(() => engine.stats().workers === 1, 2000, 'the provider to be cleaned up');
    // The registrant is still connected and never unregistered its trigger: it must wait for the next provider.
    await registrant.roundTrip(); // any result the engine sent the registrant has arrived before this pong
    const t = await findTrigger(engine, (x) => x.id === 'trg-pending');
    expect.soft(t?.status).toBe('parked');
    // Nor is the registrant told that its trigger failed: nothing was wrong with it.
    expect.soft(registrant.frames.filter((f) => f.type === 'triggerregistrationresult' && f.error)).toEqual([]);
  });
});
