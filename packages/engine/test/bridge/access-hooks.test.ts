/**
 * A policed listener's functions that look at each call and registration of its workers (served by a
 * trusted worker on the open listener): the call middleware (`access.middleware_function_id`: deny,
 * respond, continue with another payload; void calls too; `engine::` calls skip it; failing or slow
 * refuses) and the registration hooks (`on_function_registration_function_id`,
 * `on_trigger_registration_function_id`, `on_trigger_type_registration_function_id`: refuse or rewrite,
 * applied in the order the frames came). Refusals are FORBIDDEN. (The auth answer's lists and
 * `expose_functions` are access-policy.test.ts.)
 */
import { EngineFunctions, type TriggerInfo } from '@flint/protocol';
import { FlintForbiddenError, type TriggerRef, TriggerRegistrationError } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AccessAnswer,
  type GatekeeperOptions,
  expectForbidden,
  flintOf,
  provideTriggerType,
  startGatekeeper,
  startWorkerOn,
  triggerTypeIds,
} from '../support/access.js';
import { cleanup } from '../support/cleanup.js';
import {
  SDK_KINDS,
  type SdkKind,
  connectWorker,
  isListed,
  listFunctions,
  listTriggers,
  startWorker,
  waitForFunction,
  whenAnnounced,
} from '../support/harness.js';
import { sleep, waitFor } from '../support/util.js';

afterEach(cleanup);

const CONTEXT = { team: 'blue' };

/** A policed listener with an auth function (giving CONTEXT) and the middleware answering `middleware`; the trusted worker serves `svc::echo`. */
async function withMiddleware(middleware?: AccessAnswer, options: GatekeeperOptions = {}) {
  const g = await startGatekeeper({
    roles: ['auth', 'middleware'],
    ...options,
    answers: { auth: () => ({ context: CONTEXT }), middleware, ...options.answers },
  });
  const got: unknown[] = [];
  g.trusted.registerFunction('svc::echo', (x: unknown) => {
    got.push(x);
    return { echo: x };
  });
  await waitForFunction(g.engine, 'svc::echo');
  return { g, got };
}

describe('call middleware', () => {
  it('gets {function_id, payload, action, context, worker_id} for each call a worker makes; engine:: calls and other listeners skip it', async () => {
    const { g } = await withMiddleware();
    const w = await startWorkerOn('flint', g.engine, g.url);
    expect(g.seen.middleware).toEqual([]); // its announcement (engine::workers::register) was not checked
    expect(await w.trigger({ function_id: 'svc::echo', payload: { n: 1 } })).toEqual({ echo: { n: 1 } });
    await w.trigger({ function_id: EngineFunctions.LIST_FUNCTIONS, payload: {} });
    await w.createChannel();
    expect(g.seen.middleware).toEqual([{ function_id: 'svc::echo', payload: { n: 1 }, action: 'sync', context: CONTEXT, worker_id: flintOf(w).workerId }]);
    const open = await startWorker('flint', g.engine);
    await open.trigger({ function_id: 'svc::echo', payload: { n: 2 } });
    expect(g.seen.middleware).toHaveLength(1);
  });

  it.each(SDK_KINDS)(
    "deny (with its reason), false and a middleware that throws refuse a %s worker's call with FORBIDDEN; the function does not run",
    async (kind: SdkKind) => {
      const { g, got } = await withMiddleware((input) => {
        if (input.payload.how === 'deny') return { action: 'deny', reason: 'not during lunch' };
        if (input.payload.how === 'false') return false;
        if (input.payload.how === 'throw') throw new Error('middleware broke');
        return undefined;
      });
      const w = await startWorkerOn(kind, g.engine, g.url);
      await expectForbidden(w, { function_id: 'svc::echo', payload: { how: 'deny' } }, 'not during lunch');
      await expectForbidden(w, { function_id: 'svc::echo', payload: { how: 'false' } }, "call of 'svc::echo' refused by the middleware");
      await expectForbidden(w, { function_id: 'svc::echo', payload: { how: 'throw' } }, 'middleware acl::middleware failed: ');
      expect(await w.trigger({ function_id: 'svc::echo', payload: { how: 'ok' } })).toEqual({ echo: { how: 'ok' } });
      expect(got).toEqual([{ how: 'ok' }]);
    },
  );

  it.each(SDK_KINDS)(
    'respond answers a %s worker without calling the function; continue with a payload replaces it; no answer leaves it',
    async (kind: SdkKind) => {
      const { g, got } = await withMiddleware((input) => {
        if (input.payload.mode === 'respond') return { action: 'respond', result: { cached: true } };
        if (input.payload.mode === 'rewrite') return { action: 'continue', payload: { rewritten: true } };
        if (input.payload.mode === 'plain') return { action: 'continue' };
        return undefined;
      });
      const w = await startWorkerOn(kind, g.engine, g.url);
      expect(await w.trigger({ function_id: 'svc::echo', payload: { mode: 'respond' } })).toEqual({ cached: true });
      expect(await w.trigger({ function_id: 'svc::echo', payload: { mode: 'rewrite' } })).toEqual({ echo: { rewritten: true } });
      expect(await w.trigger({ function_id: 'svc::echo', payload: { mode: 'plain' } })).toEqual({ echo: { mode: 'plain' } });
      expect(await w.trigger({ function_id: 'svc::echo', payload: { mode: 'none' } })).toEqual({ echo: { mode: 'none' } });
      expect(got).toEqual([{ rewritten: true }, { mode: 'plain' }, { mode: 'none' }]);
    },
  );

  it.each(SDK_KINDS)(
    'void calls of a %s worker are checked too: denied or forbidden ones never run, rewritten ones run with the new payload',
    async (kind: SdkKind) => {
      const { g, got } = await withMiddleware(
        (input) => (input.payload.deny ? { action: 'deny' } : { action: 'continue', payload: { ...input.payload, checked: true } }),
        {
          answers: { auth: () => ({ context: CONTEXT, forbidden_functions: ['svc::secret'] }) },
        },
      );
      const secret: unknown[] = [];
      g.trusted.registerFunction('svc::secret', (x: unknown) => secret.push(x));
      await waitForFunction(g.engine, 'svc::secret');
      const w = await startWorkerOn(kind, g.engine, g.url);
      const VOID = { type: 'void' } as const;
      await w.trigger({ function_id: 'svc::echo', payload: { n: 1, deny: true }, action: VOID });
      await w.trigger({ function_id: 'svc::secret', payload: { n: 2 }, action: VOID });
      await w.trigger({ function_id: 'svc::echo', payload: { n: 3 }, action: VOID });
      await waitFor(() => got.length === 1, 2000, 'the allowed void call');
      // A sync call through the same checks, after the void ones: they were all handled by the time it is answered.
      expect(await w.trigger({ function_id: 'svc::echo', payload: { n: 4 } })).toEqual({ echo: { n: 4, checked: true } });
      expect(got).toEqual([
        { n: 3, checked: true },
        { n: 4, checked: true },
      ]);
      expect(secret).toEqual([]);
      expect(g.seen.middleware.map((i) => [i.function_id, i.action, i.payload.n])).toEqual([
        ['svc::echo', 'void', 1],
        ['svc::echo', 'void', 3],
        ['svc::echo', 'sync', 4],
      ]);
    },
  );

  it('a middleware slower than middleware_timeout_ms refuses the call', async () => {
    const { g, got } = await withMiddleware(() => sleep(500).then(() => undefined), { access: { middleware_timeout_ms: 100 } });
    const w = await startWorkerOn('flint', g.engine, g.url);
    const started = Date.now();
    await expectForbidden(w, { function_id: 'svc::echo', payload: {} }, 'middleware acl::middleware failed: invocation_timeout');
    expect(Date.now() - started).toBeLessThan(450);
    expect(got).toEqual([]);
  });
});

describe('registration hooks', () => {
  it('on_function_registration refuses ({allow: false, reason}) or rewrites ({metadata}) a registration, and sees it with the context', async () => {
    const g = await startGatekeeper({
      roles: ['auth', 'onFunction'],
      answers: {
        auth: () => ({ context: CONTEXT }),
        onFunction: (input) => {
          if (input.function_id === 'hook::refused') return { allow: false, reason: 'not on my watch' };
          if (input.function_id === 'hook::tagged') return { metadata: { tier: 'gold', by: 'hook' } };
          return undefined;
        },
      },
    });
    const errors: Error[] = [];
    const w = connectWorker('flint', g.url);
    flintOf(w).on('engineError', (e) => errors.push(e));
    w.registerFunction('hook::refused', () => 'never');
    w.registerFunction('hook::tagged', () => 'tagged', { description: 'a tagged function', metadata: { tier: 'bronze' } });
    w.registerFunction('hook::plain', () => 'plain', { metadata: { tier: 'bronze' } });
    await whenAnnounced(g.engine, w);
    await waitForFunction(g.engine, 'hook::plain');
    await waitFor(() => errors.length === 1, 2000, 'the engineError');
    expect(errors[0]).toBeInstanceOf(FlintForbiddenError);
    expect(errors[0]?.message).toBe('not on my watch');
    const listed = await listFunctions(g.engine);
    expect(listed.find((f) => f.function_id === 'hook::tagged')).toMatchObject({ description: 'a tagged function', metadata: { tier: 'gold', by: 'hook' } });
    expect(listed.find((f) => f.function_id === 'hook::plain')?.metadata).toEqual({ tier: 'bronze' });
    expect(isListed(g.engine, 'hook::refused')).toBe(false);
    expect(await g.trusted.trigger({ function_id: 'hook::tagged', payload: {} })).toBe('tagged');
    expect(g.seen.onFunction.find((i) => i.function_id === 'hook::tagged')).toEqual({
      function_id: 'hook::tagged',
      description: 'a tagged function',
      metadata: { tier: 'bronze' },
      context: CONTEXT,
      worker_id: flintOf(w).workerId,
    });
  });

  // Once the worker was called under the new id, which it did not know (function_not_found).
  it('a function renamed by on_function_registration ({function_id}) is listed under the new id and its worker is called under its own', async () => {
    const g = await startGatekeeper({
      roles: ['onFunction'],
      answers: { onFunction: (input) => (input.function_id === 'orig' ? { function_id: 'renamed' } : undefined) },
    });
    await startWorkerOn('flint', g.engine, g.url, (x) => x.registerFunction('orig', () => 'orig handler'));
    await waitForFunction(g.engine, 'renamed');
    expect(isListed(g.engine, 'orig')).toBe(false);
    expect(await g.trusted.trigger({ function_id: 'renamed', payload: {} })).toBe('orig handler');
  });

  it('on_trigger_registration refuses (trigger.ready rejects FORBIDDEN) or rewrites the config, and sees the trigger with the context', async () => {
    const g = await startGatekeeper({
      roles: ['auth', 'onTrigger'],
      answers: {
        auth: () => ({ context: CONTEXT }),
        onTrigger: (input) => (input.config.every < 10 ? { allow: false, reason: 'too often' } : { config: { ...input.config, capped: true } }),
      },
    });
    const ticks = await provideTriggerType(g.engine, g.trusted, 'tick');
    const w = await startWorkerOn('flint', g.engine, g.url, (x) => x.registerFunction('job', () => 'done'));
    const refused = await (w.registerTrigger({ type: 'tick', function_id: 'job', config: { every: 1 } }) as TriggerRef).ready.catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TriggerRegistrationError);
    expect(refused).toMatchObject({ code: 'FORBIDDEN', message: 'too often' });
    const kept = w.registerTrigger({ type: 'tick', function_id: 'job', config: { every: 60 }, metadata: { m: 1 } }) as TriggerRef;
    await kept.ready;
    expect(ticks.map((t) => t.config)).toEqual([{ every: 60, capped: true }]);
    expect((await listTriggers(g.engine)).map((t: TriggerInfo) => [t.id, t.config])).toEqual([[kept.id, { every: 60, capped: true }]]);
    expect(g.seen.onTrigger[1]).toEqual({
      trigger_id: kept.id,
      trigger_type: 'tick',
      function_id: 'job',
      config: { every: 60 },
      metadata: { m: 1 },
      context: CONTEXT,
      worker_id: flintOf(w).workerId,
    });
  });

  it('on_trigger_type_registration refuses a trigger type (FORBIDDEN); without an auth function a worker may otherwise provide types', async () => {
    const g = await startGatekeeper({
      roles: ['onTriggerType'],
      answers: { onTriggerType: (input) => (input.trigger_type === 'bad-type' ? false : undefined) },
    });
    const errors: Error[] = [];
    const w = connectWorker('flint', g.url);
    flintOf(w).on('engineError', (e) => errors.push(e));
    const noop = { registerTrigger: () => {}, unregisterTrigger: () => {} };
    w.registerTriggerType({ id: 'bad-type', description: 'refused' }, noop);
    w.registerTriggerType({ id: 'good-type', description: 'let through' }, noop);
    await whenAnnounced(g.engine, w);
    await waitFor(async () => (await triggerTypeIds(g.engine)).includes('good-type'), 2000, 'good-type to be listed');
    await waitFor(() => errors.length === 1, 2000, 'the engineError');
    expect(errors[0]).toBeInstanceOf(FlintForbiddenError);
    expect(errors[0]?.message).toBe("providing trigger type 'bad-type' refused by acl::on_trigger_type");
    expect(await triggerTypeIds(g.engine)).not.toContain('bad-type');
    const workerId = flintOf(w).workerId;
    expect(g.seen.onTriggerType).toEqual([
      { trigger_type: 'bad-type', description: 'refused', context: null, worker_id: workerId },
      { trigger_type: 'good-type', description: 'let through', context: null, worker_id: workerId },
    ]);
  });

  it.each(SDK_KINDS)("a %s worker's function and its trigger registered back-to-back go through their hooks in order", async (kind: SdkKind) => {
    const g = await startGatekeeper({ roles: ['onFunction', 'onTrigger'] });
    const ticks = await provideTriggerType(g.engine, g.trusted, 'tick');
    const order: string[] = [];
    g.answer.onFunction = async (input) => {
      order.push(`function hook ${input.function_id}`);
      await sleep(100);
      order.push('function hook answered');
    };
    g.answer.onTrigger = (input) => void order.push(`trigger hook, ${input.function_id} listed: ${isListed(g.engine, input.function_id)}`);
    const w = connectWorker(kind, g.url);
    await whenAnnounced(g.engine, w);
    w.registerFunction('ordered::fn', () => 'ok');
    w.registerTrigger({ type: 'tick', function_id: 'ordered::fn', config: {} });
    await waitFor(() => ticks.length === 1, 2000, 'the trigger at its provider');
    expect(order).toEqual(['function hook ordered::fn', 'function hook answered', 'trigger hook, ordered::fn listed: true']);
  });

  // Once the unregister was applied at once, before the registration still waiting for its hook, which then stayed.
  it('an unregister right after its register (the hook still deciding) is applied after it: nothing stays', async () => {
    const g = await startGatekeeper({ roles: ['onFunction', 'onTrigger'] });
    g.answer.onFunction = () => sleep(50);
    g.answer.onTrigger = () => sleep(50);
    await provideTriggerType(g.engine, g.trusted, 'tick');
    const w = await startWorkerOn('flint', g.engine, g.url, (x) => x.registerFunction('kept::fn', () => 'kept'));
    await waitForFunction(g.engine, 'kept::fn');
    w.registerFunction('gone::fn', () => 'gone').unregister();
    w.registerTrigger({ type: 'tick', function_id: 'kept::fn', config: { short: true } }).unregister();
    await waitFor(() => g.seen.onTrigger.length === 1, 2000, 'the trigger hook');
    await sleep(300); // both hooks answered long since
    const left = { function: isListed(g.engine, 'gone::fn'), triggers: (await listTriggers(g.engine)).map((t) => t.config) };
    expect(left).toEqual({ function: false, triggers: [] });
  });
});
