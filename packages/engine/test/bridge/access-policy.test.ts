/**
 * What a worker of a policed listener may do, from its auth function's answer: `allowed_functions` and
 * `forbidden_functions` (exact ids or globs; forbidden wins), `allow_function_registration`,
 * `allowed_trigger_types`, `allow_trigger_type_registration` (false unless the answer says true),
 * `function_registration_prefix` and `context` (handed to the functions it calls as `ctx.caller`); and
 * what the listener exposes (`expose_functions`: calls and the engine's listings). Refusals are FORBIDDEN:
 * @flint/sdk rejects with a FlintForbiddenError, iii-sdk with an error whose code is 'FORBIDDEN'. The SDK
 * essentials (announcing the worker, channels) work whatever the lists say. The listener's middleware and
 * registration hooks are access-hooks.test.ts.
 */
import { EngineFunctions, type FunctionInfo, type TriggerInfo } from '@flint/protocol';
import { FlintForbiddenError, type TriggerRef, TriggerRegistrationError } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { expectForbidden, flintOf, provideTriggerType, serveFunctions, startGatekeeper, startWorkerOn, triggerTypeIds } from '../support/access.js';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, connectWorker, isListed, listWorkers, startWorker, waitForFunction, whenAnnounced } from '../support/harness.js';
import { RawClient, upgradeRefusal } from '../support/raw-client.js';
import { rejectsWith, waitFor, within } from '../support/util.js';

afterEach(cleanup);

const functionIds = (out: { functions: FunctionInfo[] }) => out.functions.map((f) => f.function_id).sort();

describe('allowed and forbidden functions', () => {
  it.each(SDK_KINDS)('allowed_functions (exact and glob) let a %s worker call only what they list; forbidden_functions wins', async (kind: SdkKind) => {
    const g = await startGatekeeper({ answers: { auth: () => ({ allowed_functions: ['pub::exact', 'orders::*'], forbidden_functions: ['orders::secret'] }) } });
    const ran = await serveFunctions(g, ['pub::exact', 'pub::other', 'orders::list', 'orders::secret']);
    const w = await startWorkerOn(kind, g.engine, g.url);
    expect(await w.trigger({ function_id: 'pub::exact', payload: {} })).toBe('pub::exact');
    expect(await w.trigger({ function_id: 'orders::list', payload: {} })).toBe('orders::list');
    await expectForbidden(w, { function_id: 'pub::other', payload: {} }, "function 'pub::other' not allowed (not in allowed_functions)");
    await expectForbidden(w, { function_id: 'orders::secret', payload: {} }, "function 'orders::secret' not allowed (forbidden_functions)");
    expect(ran).toEqual(['pub::exact', 'orders::list']);
    // The lists are this connection's: a worker on the open listener calls everything.
    const open = await startWorker(kind, g.engine);
    expect(await open.trigger({ function_id: 'orders::secret', payload: {} })).toBe('orders::secret');
  });

  it.each(SDK_KINDS)('with allowed_functions ["x"] a %s worker is still announced and can open a channel, nothing more', async (kind: SdkKind) => {
    const g = await startGatekeeper({ answers: { auth: () => ({ allowed_functions: ['x'] }) } });
    const w = await startWorkerOn(kind, g.engine, g.url); // announced: engine::workers::register went through
    const { writer, reader } = await w.createChannel();
    const received = reader.readAll() as Promise<Buffer>;
    writer.stream.end(Buffer.from('through the channel'));
    expect((await within(received, 3000, 'the channel data')).toString()).toBe('through the channel');
    await expectForbidden(w, { function_id: 'state::get', payload: {} }, "function 'state::get' not allowed");
  });
});

describe('registrations the auth answer allows', () => {
  it('allow_function_registration: false refuses registerfunction with an error frame FORBIDDEN; @flint/sdk emits a FlintForbiddenError', async () => {
    const g = await startGatekeeper({ answers: { auth: () => ({ allow_function_registration: false }) } });
    const raw = await RawClient.connect(g.url);
    await raw.registered();
    raw.send({ type: 'registerfunction', id: 'nope::raw' });
    expect((await raw.next((f) => f.type === 'error')).error).toEqual({
      code: 'FORBIDDEN',
      message: "registering function 'nope::raw' not allowed (allow_function_registration is false)",
    });
    const errors: Error[] = [];
    const w = connectWorker('flint', g.url);
    flintOf(w).on('engineError', (e) => errors.push(e));
    w.registerFunction('nope::flint', () => 'never');
    await whenAnnounced(g.engine, w);
    await waitFor(() => errors.length === 1, 2000, 'the engineError');
    expect(errors[0]).toBeInstanceOf(FlintForbiddenError);
    expect(errors[0]).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining("registering function 'nope::flint' not allowed") });
    const iii = await startWorkerOn('iii', g.engine, g.url, (x) => x.registerFunction('nope::iii', () => 'never'));
    await iii.trigger({ function_id: EngineFunctions.LIST_FUNCTIONS, payload: {} }); // a round trip: its registration was handled
    expect(g.engine.listFunctions().map((f) => f.function_id)).toEqual(['acl::auth']);
  });

  it('allowed_trigger_types: a trigger of another type is answered FORBIDDEN (@flint/sdk: trigger.ready rejects), never reaching its provider', async () => {
    const g = await startGatekeeper({ answers: { auth: () => ({ allowed_trigger_types: ['tick'] }) } });
    const ticks = await provideTriggerType(g.engine, g.trusted, 'tick');
    const tocks = await provideTriggerType(g.engine, g.trusted, 'tock');
    const w = await startWorkerOn('flint', g.engine, g.url, (x) => x.registerFunction('job', () => 'done'));
    await (w.registerTrigger({ type: 'tick', function_id: 'job', config: { n: 1 } }) as TriggerRef).ready;
    const refused = await (w.registerTrigger({ type: 'tock', function_id: 'job', config: { n: 2 } }) as TriggerRef).ready.catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TriggerRegistrationError);
    expect(refused).toMatchObject({ code: 'FORBIDDEN', message: "trigger type 'tock' not allowed (not in allowed_trigger_types)" });
    const raw = await RawClient.connect(g.url);
    await raw.registered();
    raw.send({ type: 'registertrigger', id: 'raw-tock', trigger_type: 'tock', function_id: 'job', config: {} });
    expect(await raw.next((f) => f.type === 'triggerregistrationresult')).toEqual({
      type: 'triggerregistrationresult',
      id: 'raw-tock',
      trigger_type: 'tock',
      function_id: 'job',
      error: { code: 'FORBIDDEN', message: "trigger type 'tock' not allowed (not in allowed_trigger_types)" },
    });
    expect(ticks.map((t) => t.config)).toEqual([{ n: 1 }]);
    expect(tocks).toEqual([]);
  });

  it('allow_trigger_type_registration is false unless the auth answer says true', async () => {
    const g = await startGatekeeper(); // the auth function answers {}
    const raw = await RawClient.connect(g.url);
    await raw.registered();
    raw.send({ type: 'registertriggertype', id: 'raw-type', description: 'mine' });
    expect((await raw.next((f) => f.type === 'error')).error).toEqual({
      code: 'FORBIDDEN',
      message: "providing trigger type 'raw-type' not allowed (allow_trigger_type_registration is not true)",
    });
    const errors: Error[] = [];
    const w = connectWorker('flint', g.url);
    flintOf(w).on('engineError', (e) => errors.push(e));
    w.registerTriggerType({ id: 'flint-type', description: 'mine' }, { registerTrigger: () => {}, unregisterTrigger: () => {} });
    await whenAnnounced(g.engine, w);
    await waitFor(() => errors.length === 1, 2000, 'the engineError');
    expect(errors[0]).toBeInstanceOf(FlintForbiddenError);
    g.answer.auth = () => ({ allow_trigger_type_registration: true });
    const allowed = await RawClient.connect(g.url);
    await allowed.registered();
    allowed.send({ type: 'registertriggertype', id: 'allowed-type', description: 'mine' });
    await waitFor(async () => (await triggerTypeIds(g.engine)).includes('allowed-type'), 2000, 'allowed-type to be listed');
    expect(await triggerTypeIds(g.engine)).not.toContain('raw-type');
    expect(await triggerTypeIds(g.engine)).not.toContain('flint-type');
  });
});

describe('function_registration_prefix', () => {
  it.each(SDK_KINDS)(
    'a %s worker registers fn, the engine lists team::fn, calls to team::fn reach its handler as fn; its trigger targets team::fn',
    async (kind: SdkKind) => {
      const g = await startGatekeeper({ answers: { auth: () => ({ function_registration_prefix: 'team' }) } });
      const ticks = await provideTriggerType(g.engine, g.trusted, 'tick');
      const calls: unknown[] = [];
      let ref: { unregister(): void } | undefined;
      const w = await startWorkerOn(kind, g.engine, g.url, (x) => {
        ref = x.registerFunction('fn', (input, ctx) => {
          calls.push({ input, function_id: ctx?.function_id });
          return 'handled by the team worker';
        });
      });
      await waitForFunction(g.engine, 'team::fn');
      expect(isListed(g.engine, 'fn')).toBe(false);
      expect(await g.trusted.trigger({ function_id: 'team::fn', payload: { n: 1 } })).toBe('handled by the team worker');
      expect(calls).toEqual([{ input: { n: 1 }, function_id: kind === 'flint' ? 'fn' : undefined }]); // iii-sdk handlers get no context
      await rejectsWith(g.trusted.trigger({ function_id: 'fn', payload: {} }), 'function_not_found');
      w.registerTrigger({ type: 'tick', function_id: 'fn', config: { every: 1 } });
      await waitFor(() => ticks.length === 1, 2000, 'the trigger at its provider');
      expect(ticks[0]?.function_id).toBe('team::fn');
      const listed = (await g.engine.invoke(EngineFunctions.LIST_TRIGGERS, {})) as { triggers: TriggerInfo[] };
      expect(listed.triggers.map((t) => t.function_id)).toEqual(['team::fn']);
      ref?.unregister();
      await waitForFunction(g.engine, 'team::fn', false);
    },
  );

  // The prefix is always put before the id, as upstream does, even when the id already starts with it
  // (this once kept team::own as is and then called the worker as `own`, which it did not have).
  it('a function registered with the prefix already (team::own) becomes team::team::own, and its worker is called as team::own', async () => {
    const g = await startGatekeeper({ answers: { auth: () => ({ function_registration_prefix: 'team' }) } });
    let seenId: string | undefined;
    await startWorkerOn('flint', g.engine, g.url, (x) =>
      x.registerFunction('team::own', (_input, ctx) => {
        seenId = ctx?.function_id;
        return 'own handler';
      }),
    );
    await waitForFunction(g.engine, 'team::team::own');
    expect(isListed(g.engine, 'team::own')).toBe(false);
    expect(await g.trusted.trigger({ function_id: 'team::team::own', payload: {} })).toBe('own handler');
    expect(seenId).toBe('team::own');
  });
});

describe('context', () => {
  it.each(SDK_KINDS)(
    'a function a %s worker calls gets ctx.caller = {worker_id, context} (@flint/sdk); callers without a context give none',
    async (kind: SdkKind) => {
      const g = await startGatekeeper({
        answers: { auth: (input) => (input.query_params.user ? { context: { user: input.query_params.user[0], roles: ['reader'] } } : {}) },
      });
      g.trusted.registerFunction('who::am_i', (_input, ctx) => ctx?.caller ?? 'nobody');
      await waitForFunction(g.engine, 'who::am_i');
      const alice = await startWorkerOn(kind, g.engine, `${g.url}/?user=alice`);
      const aliceId = (await listWorkers(g.engine)).find((w) => w.name === alice.name)?.id;
      expect(aliceId).toBeDefined();
      expect(await alice.trigger({ function_id: 'who::am_i', payload: {} })).toEqual({ worker_id: aliceId, context: { user: 'alice', roles: ['reader'] } });
      const anonymous = await startWorkerOn(kind, g.engine, g.url);
      expect(await anonymous.trigger({ function_id: 'who::am_i', payload: {} })).toBe('nobody');
      const open = await startWorker(kind, g.engine);
      expect(await open.trigger({ function_id: 'who::am_i', payload: {} })).toBe('nobody');
    },
  );
});

describe('expose_functions', () => {
  const EXPOSE = { expose_functions: ['match(public::*)', { metadata: { tier: 'free' } }] };
  const TIERS = { 'meta::free': { tier: 'free' }, 'meta::paid': { tier: 'paid' } };

  it.each(SDK_KINDS)('a %s worker calls only what the listener exposes, by glob or by metadata', async (kind: SdkKind) => {
    const g = await startGatekeeper({ roles: [], access: EXPOSE });
    const ran = await serveFunctions(g, ['public::a', 'private::b', 'meta::free', 'meta::paid'], TIERS);
    const w = await startWorkerOn(kind, g.engine, g.url);
    expect(await w.trigger({ function_id: 'public::a', payload: {} })).toBe('public::a');
    expect(await w.trigger({ function_id: 'meta::free', payload: {} })).toBe('meta::free');
    await expectForbidden(w, { function_id: 'private::b', payload: {} }, "function 'private::b' not allowed (not exposed by this listener: expose_functions)");
    await expectForbidden(w, { function_id: 'meta::paid', payload: {} }, "function 'meta::paid' not allowed (not exposed");
    expect(ran).toEqual(['public::a', 'meta::free']);
  });

  it.each(SDK_KINDS)(
    'engine::functions::list through the listener shows a %s worker only the exposed functions; the open listener shows all',
    async (kind: SdkKind) => {
      const g = await startGatekeeper({ roles: [], access: EXPOSE });
      await serveFunctions(g, ['public::a', 'private::b', 'meta::free', 'meta::paid'], TIERS);
      const w = await startWorkerOn(kind, g.engine, g.url, (x) => {
        x.registerFunction('public::mine', () => 'mine');
        x.registerFunction('hidden::mine', () => 'mine');
      });
      await waitForFunction(g.engine, 'hidden::mine');
      const open = await startWorker(kind, g.engine);
      expect(functionIds(await w.trigger({ function_id: EngineFunctions.LIST_FUNCTIONS, payload: {} }))).toEqual(['meta::free', 'public::a', 'public::mine']);
      expect(functionIds(await open.trigger({ function_id: EngineFunctions.LIST_FUNCTIONS, payload: {} }))).toEqual([
        'hidden::mine',
        'meta::free',
        'meta::paid',
        'private::b',
        'public::a',
        'public::mine',
      ]);
    },
  );

  it('engine::triggers::list through the listener shows only the triggers of exposed functions', async () => {
    const g = await startGatekeeper({ roles: [], access: EXPOSE });
    await serveFunctions(g, ['public::a', 'private::b', 'meta::free'], TIERS);
    await provideTriggerType(g.engine, g.trusted, 'tick');
    for (const id of ['public::a', 'private::b', 'meta::free']) g.trusted.registerTrigger({ type: 'tick', function_id: id, config: {} });
    await waitFor(
      async () => ((await g.engine.invoke(EngineFunctions.LIST_TRIGGERS, {})) as { triggers: unknown[] }).triggers.length === 3,
      2000,
      '3 triggers',
    );
    const listed = async (url: string) => {
      const raw = await RawClient.connect(url);
      await raw.registered();
      return ((await raw.invoke(EngineFunctions.LIST_TRIGGERS, {})).result as { triggers: TriggerInfo[] }).triggers.map((t) => t.function_id).sort();
    };
    expect(await listed(g.url)).toEqual(['meta::free', 'public::a']);
    expect(await listed(g.openUrl)).toEqual(['meta::free', 'private::b', 'public::a']);
  });
});

describe('what a policy also covers', () => {
  it('a worker may point a trigger only at its own functions or at functions it may call', async () => {
    const g = await startGatekeeper({ answers: { auth: () => ({ allowed_functions: ['pub::*'] }) } });
    await serveFunctions(g, ['secret::fn', 'pub::fn']);
    await provideTriggerType(g.engine, g.trusted, 'tick');
    const w = await startWorkerOn('flint', g.engine, g.url, (x) => x.registerFunction('mine::fn', () => 'mine'));
    await waitForFunction(g.engine, 'mine::fn');
    const native = flintOf(w);
    const refused = await native.registerTrigger({ type: 'tick', function_id: 'secret::fn', config: {} }).ready.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(TriggerRegistrationError);
    expect((refused as TriggerRegistrationError).code).toBe('FORBIDDEN');
    expect((refused as Error).message).toContain("'secret::fn' not allowed");
    await native.registerTrigger({ type: 'tick', function_id: 'pub::fn', config: {} }).ready;
    await native.registerTrigger({ type: 'tick', function_id: 'mine::fn', config: {} }).ready;
  });

  it('an auth function answering false refuses the connection (401 connection_unauthorized)', async () => {
    const g = await startGatekeeper({ answers: { auth: () => false } });
    const refusal = await upgradeRefusal(g.url);
    expect(refusal.status).toBe(401);
    expect(JSON.parse(refusal.body)).toMatchObject({ code: 'connection_unauthorized' });
  });

  it('with allowed_functions alone the listings show only what the worker may call', async () => {
    const g = await startGatekeeper({ answers: { auth: () => ({ allowed_functions: ['pub::*'] }) } });
    await serveFunctions(g, ['pub::a', 'secret::b']);
    const w = await startWorkerOn('flint', g.engine, g.url);
    const listed = functionIds(await w.trigger({ function_id: EngineFunctions.LIST_FUNCTIONS, payload: {} }));
    expect(listed).toContain('pub::a');
    expect(listed).not.toContain('secret::b');
    // Workers: itself, and the trusted worker with only what may be called.
    const workers = (await w.trigger({ function_id: EngineFunctions.LIST_WORKERS, payload: {} })) as { workers: { name: string; functions: string[] }[] };
    const trusted = workers.workers.find((x) => x.name === g.trusted.name);
    expect(trusted?.functions).toContain('pub::a');
    expect(trusted?.functions).not.toContain('secret::b');
    expect(workers.workers.some((x) => x.name === w.name)).toBe(true);
  });
});
