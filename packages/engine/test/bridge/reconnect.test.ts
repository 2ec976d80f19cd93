/**
 * Reconnect-proof registration: workers reach the engine through a TCP proxy that cuts their
 * connections at random moments (between frames, in the middle of a frame, in the middle of a
 * registration burst, while calls are in flight). After every reconnect each function and trigger is
 * present exactly once, no stale worker rows remain, and calls succeed.
 *
 * The cut sequence comes from a seeded PRNG; the seed is printed. Reproduce a run with
 * `FLINT_RECONNECT_SEED=<seed> npx vitest run packages/engine/test/bridge/reconnect.test.ts`.
 */
import { type Engine, startEngine } from '@flint/engine';
import { EngineFunctions, type FunctionInfo, REATTACH_HEADER, type TriggerInfo, type WorkerInfo } from '@flint/protocol';
import { FlintInvocationError, type Worker, registerWorker } from '@flint/sdk';
import { type ISdk, registerWorker as registerIiiWorker } from 'iii-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CuttingProxy } from '../support/proxy/cutting-proxy.js';
import { RawClient } from '../support/raw-client.js';
import { prng, sleep, waitFor } from '../support/util.js';

const TOTAL_CUTS = 64;
const FUNCTIONS_PER_WORKER = 200;
const TRIGGERS_PER_WORKER = 50;
/** A worker-defined trigger type, provided by a worker connected directly: its triggers are forwarded. */
const EXT_TYPE = 'rc::ext';
/** A trigger type nobody provides: its triggers are parked. */
const PARKED_TYPE = 'rc::parked';
const FLINT_PREFIX = 'rc.flint::';
const III_PREFIX = 'rc.iii::';
const NAMES = { caller: 'rc-caller', provider: 'rc-provider', flint: 'rc-flint-burst', iii: 'rc-iii-burst' } as const;
const FAST_RECONNECT = { initialDelayMs: 20, maxDelayMs: 100 };
const quiet = { warn: () => {}, error: () => {}, debug: () => {} };

const SEED = process.env.FLINT_RECONNECT_SEED ? Number(process.env.FLINT_RECONNECT_SEED) : Math.floor(Math.random() * 2 ** 32);
const rng = prng(SEED);
const randInt = (min: number, max: number) => min + Math.floor(rng() * (max - min + 1));
const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const pad = (n: number) => String(n).padStart(3, '0');
/**
 * How a cut looks: FIN or RST, and in half of the cuts the engine learns about it up to 150 ms late
 * (after the worker has reconnected and re-registered), which is the fast-reconnect ownership race.
 */
const cutOptions = () => ({ reset: rng() < 0.5, upstreamDelayMs: rng() < 0.5 ? 0 : randInt(1, 150) });

const fnId = (prefix: string, i: number) => `${prefix}fn-${pad(i)}`;
const fnIds = (prefix: string) => Array.from({ length: FUNCTIONS_PER_WORKER }, (_, i) => fnId(prefix, i));
const ALL_FN_IDS = [...fnIds(FLINT_PREFIX), ...fnIds(III_PREFIX)];

type BurstItem = { kind: 'function'; id: string } | { kind: 'trigger'; n: number; type: string; function_id: string };

/** 200 functions and 50 triggers, interleaved (a trigger after every 4 functions), half forwarded, half parked. */
function burstItems(prefix: string): BurstItem[] {
  const items: BurstItem[] = [];
  for (let i = 0; i < FUNCTIONS_PER_WORKER; i++) {
    items.push({ kind: 'function', id: fnId(prefix, i) });
    if (i % 4 === 3) {
      const n = (i - 3) / 4;
      items.push({ kind: 'trigger', n, type: n % 2 === 0 ? EXT_TYPE : PARKED_TYPE, function_id: fnId(prefix, i) });
    }
  }
  return items;
}

const handlerFor = (id: string) => async (input: { n?: number } | null) => ({ fn: id, n: input?.n });

describe('reconnect-proof registration through a socket-cutting proxy', () => {
  let engine: Engine;
  let proxy: CuttingProxy;
  let caller: Worker;
  let provider: Worker;
  let flint: Worker | undefined;
  let iii: ISdk | undefined;
  /** Trigger ids of the current Flint burst worker, by trigger number. */
  let flintTriggerIds: Map<number, string> = new Map();
  /** Trigger ids of the current iii-sdk burst worker, learnt from the engine after its first settle. */
  let iiiTriggerIds: Map<number, string> | undefined;
  /** The triggers the provider of EXT_TYPE currently has applied, by id (register adds, unregister removes). */
  const applied = new Map<string, { function_id: string; config: unknown }>();
  let doubleApplies = 0;

  beforeAll(async () => {
    console.log(`[reconnect.test] seed=${SEED} (reproduce with FLINT_RECONNECT_SEED=${SEED})`);
    engine = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, invocation_timeout_ms: 10_000 } });
    proxy = await CuttingProxy.forUrl(engine.bridgeUrl);
    caller = registerWorker(engine.bridgeUrl, { workerName: NAMES.caller, log: quiet, invocationTimeoutMs: 5000 });
    provider = registerWorker(engine.bridgeUrl, { workerName: NAMES.provider, log: quiet });
    provider.registerTriggerType<unknown>(
      { id: EXT_TYPE, description: 'forwarded to a worker' },
      {
        registerTrigger: (t) => {
          if (applied.has(t.id)) doubleApplies++;
          applied.set(t.id, { function_id: t.function_id, config: t.config });
        },
        unregisterTrigger: (t) => {
          applied.delete(t.id);
        },
      },
    );
    await Promise.all([caller.waitConnected(), provider.waitConnected()]);
  });

  afterAll(async () => {
    await flint?.shutdown();
    await iii?.shutdown();
    await caller?.shutdown();
    await provider?.shutdown();
    await proxy?.close();
    await engine?.stop();
  });

  const list = async <T>(functionId: string, key: string): Promise<T[]> =>
    ((await caller.trigger({ function_id: functionId, payload: {}, timeoutMs: 2000 })) as Record<string, T[]>)[key] as T[];

  function startFlint(): Worker {
    return registerWorker(proxy.url, { workerName: NAMES.flint, log: quiet, reconnect: FAST_RECONNECT, invocationTimeoutMs: 5000 });
  }

  function startIii(): ISdk {
    return registerIiiWorker(proxy.url, {
      workerName: NAMES.iii,
      otel: { enabled: false },
      enableMetricsReporting: false,
      reconnectionConfig: FAST_RECONNECT,
      invocationTimeoutMs: 5000,
    });
  }

  /** Registers one burst item on the given worker. */
  function registerItem(target: 'flint' | 'iii', item: BurstItem): void {
    if (item.kind === 'function') {
      if (target === 'flint') (flint as Worker).registerFunction(item.id, handlerFor(item.id));
      else (iii as ISdk).registerFunction(item.id, handlerFor(item.id));
      return;
    }
    const config = { n: item.n, src: target };
    if (target === 'flint') {
      const ref = (flint as Worker).registerTrigger({ type: item.type, function_id: item.function_id, config });
      flintTriggerIds.set(item.n, ref.id);
    } else {
      (iii as ISdk).registerTrigger({ type: item.type, function_id: item.function_id, config });
    }
  }

  /**
   * Registers 200 functions and 50 triggers in a burst: small random chunks with an event-loop turn
   * between them, cutting every connection through the proxy right after the items in `cutAt`.
   */
  async function burst(target: 'flint' | 'iii', cutAt: Set<number>): Promise<void> {
    const items = burstItems(target === 'flint' ? FLINT_PREFIX : III_PREFIX);
    let chunk = randInt(1, 25);
    for (const [index, item] of items.entries()) {
      registerItem(target, item);
      if (cutAt.has(index)) proxy.cutAll(cutOptions());
      if (--chunk === 0) {
        chunk = randInt(1, 25);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  /** Snapshot of the burst workers' engine-side ids before a round. */
  let previousBurstIds = new Set<string>();
  /** Most worker connections the engine held at once: above 4, an old and a new connection of a worker overlapped. */
  let maxConnections = 0;

  /** Returns '' when the engine is in the expected state after a round, else what is still wrong. */
  async function stateProblems(): Promise<string> {
    const problems: string[] = [];
    const functions = await list<FunctionInfo>(EngineFunctions.LIST_FUNCTIONS, 'functions');
    const counts = new Map<string, number>();
    for (const f of functions) if (f.function_id.startsWith('rc.')) counts.set(f.function_id, (counts.get(f.function_id) ?? 0) + 1);
    const missing = ALL_FN_IDS.filter((id) => counts.get(id) !== 1);
    if (missing.length > 0) problems.push(`${missing.length} functions not listed exactly once (e.g. ${missing.slice(0, 3).join(', ')})`);
    if (counts.size !== ALL_FN_IDS.length) problems.push(`${counts.size} rc.* functions listed, expected ${ALL_FN_IDS.length}`);

    const triggers = (await list<TriggerInfo>(EngineFunctions.LIST_TRIGGERS, 'triggers')).filter((t) => t.function_id.startsWith('rc.'));
    const byId = new Map<string, number>();
    for (const t of triggers) byId.set(t.id, (byId.get(t.id) ?? 0) + 1);
    if ([...byId.values()].some((c) => c !== 1)) problems.push('a trigger id is listed more than once');
    const flintRows = triggers.filter((t) => t.function_id.startsWith(FLINT_PREFIX));
    const expectedFlint = new Set(flintTriggerIds.values());
    if (flintRows.length !== TRIGGERS_PER_WORKER || expectedFlint.size !== TRIGGERS_PER_WORKER || flintRows.some((t) => !expectedFlint.has(t.id))) {
      problems.push(
        `Flint worker: ${flintRows.length} triggers listed, ${flintRows.filter((t) => expectedFlint.has(t.id)).length} of the ${expectedFlint.size} expected ids`,
      );
    }
    const iiiRows = triggers.filter((t) => t.function_id.startsWith(III_PREFIX));
    const iiiNumbers = new Set(iiiRows.map((t) => (t.config as { n: number }).n));
    if (iiiRows.length !== TRIGGERS_PER_WORKER || iiiNumbers.size !== TRIGGERS_PER_WORKER) {
      problems.push(`iii worker: ${iiiRows.length} triggers listed (${iiiNumbers.size} distinct), expected ${TRIGGERS_PER_WORKER}`);
    } else if (iiiTriggerIds && iiiRows.some((t) => iiiTriggerIds?.get((t.config as { n: number }).n) !== t.id)) {
      problems.push('iii worker: trigger ids changed across a reconnect');
    }
    for (const t of triggers) {
      const want = t.trigger_type === EXT_TYPE ? 'active' : 'parked';
      if (t.status !== want) {
        problems.push(`trigger ${t.id} (${t.trigger_type}) is ${t.status}, expected ${want}`);
        break;
      }
    }
    const extIds = new Set(triggers.filter((t) => t.trigger_type === EXT_TYPE).map((t) => t.id));
    const providerMissing = [...extIds].filter((id) => !applied.has(id));
    const providerExtra = [...applied.keys()].filter((id) => !extIds.has(id));
    if (providerMissing.length + providerExtra.length > 0) {
      problems.push(`provider of ${EXT_TYPE}: ${providerMissing.length} listed triggers not applied, ${providerExtra.length} applied but not listed`);
    }

    // The engine cannot tell a connection whose peer vanished (and whose cut it has not seen yet)
    // from a live one, so "settled" also means: no such connection is left, and the two burst workers
    // each have exactly one live path through the proxy.
    if (proxy.delayedCuts > 0) problems.push(`${proxy.delayedCuts} cut connections not yet seen closed by the engine`);
    if (proxy.openPairs !== 2) problems.push(`${proxy.openPairs} open connections through the proxy, expected 2`);
    const workers = await list<WorkerInfo>(EngineFunctions.LIST_WORKERS, 'workers');
    const flintRow = workers.find((w) => w.name === NAMES.flint);
    if (flint && flintRow && flint.workerId !== flintRow.id) problems.push('the Flint burst worker is not on the connection the engine lists');
    const names = workers.map((w) => w.name).sort();
    const expectedNames = Object.values(NAMES).sort();
    if (JSON.stringify(names) !== JSON.stringify(expectedNames))
      problems.push(`worker rows ${JSON.stringify(names)}, expected ${JSON.stringify(expectedNames)}`);
    const stale = workers.filter((w) => (w.name === NAMES.flint || w.name === NAMES.iii) && previousBurstIds.has(w.id));
    if (stale.length > 0) problems.push(`${stale.length} burst worker rows are from before the cut`);
    maxConnections = Math.max(maxConnections, engine.stats().workers);
    if (engine.stats().workers !== 4) problems.push(`engine has ${engine.stats().workers} worker connections, expected 4`);
    return problems.join('; ');
  }

  async function burstWorkerIds(): Promise<Set<string>> {
    const workers = await list<WorkerInfo>(EngineFunctions.LIST_WORKERS, 'workers');
    return new Set(workers.filter((w) => w.name === NAMES.flint || w.name === NAMES.iii).map((w) => w.id));
  }

  /** Waits for the expected state, learns the iii trigger ids, then makes a call that must succeed. */
  async function settleAndCheck(round: number, mode: string): Promise<void> {
    let last = '';
    await waitFor(
      async () => {
        last = await stateProblems();
        return last === '';
      },
      10_000,
      () => `round ${round} (${mode}, seed ${SEED}) to settle: ${last}`,
      15,
    );
    if (!iiiTriggerIds) {
      const triggers = await list<TriggerInfo>(EngineFunctions.LIST_TRIGGERS, 'triggers');
      iiiTriggerIds = new Map(triggers.filter((t) => t.function_id.startsWith(III_PREFIX)).map((t) => [(t.config as { n: number }).n, t.id]));
    }
    const id = pick(ALL_FN_IDS);
    const n = randInt(0, 1_000_000);
    const result = await caller.trigger({ function_id: id, payload: { n }, timeoutMs: 3000 }).catch((err: unknown) => {
      throw new Error(`round ${round} (${mode}, seed ${SEED}): call to ${id} after the reconnect failed: ${String(err)}`);
    });
    expect(result).toEqual({ fn: id, n });
    expect(engine.stats().pendingInvocations).toBe(0);
    previousBurstIds = await burstWorkerIds();
  }

  /** Fires `count` calls at random burst functions; each must succeed or fail only because of the cut. */
  function callsDuringCut(count: number): Promise<void>[] {
    return Array.from({ length: count }, () => {
      const id = pick(ALL_FN_IDS);
      return caller.trigger({ function_id: id, payload: { n: 1 }, timeoutMs: 5000 }).then(
        (result) => expect(result).toEqual({ fn: id, n: 1 }),
        (err: unknown) => {
          expect(err).toBeInstanceOf(FlintInvocationError);
          expect(['invocation_stopped', 'function_not_found']).toContain((err as FlintInvocationError).code);
        },
      );
    });
  }

  /** Waits until an armed byte cut fires; if the traffic ended before it did, cuts at once instead. */
  async function firedOrCut(armed: Promise<boolean>, ms: number): Promise<void> {
    const fired = await Promise.race([armed, sleep(ms).then(() => false)]);
    if (!fired) {
      proxy.disarm();
      proxy.cutAll(cutOptions());
    }
  }

  type Mode = 'idle' | 'during-calls' | 'mid-frame-down' | 'mid-replay' | 'double' | 'fresh-burst-flint' | 'fresh-burst-iii';
  const COST: Record<Mode, number> = {
    idle: 1,
    'during-calls': 1,
    'mid-frame-down': 1,
    'mid-replay': 2,
    double: 2,
    'fresh-burst-flint': 3,
    'fresh-burst-iii': 3,
  };

  async function runRound(mode: Mode): Promise<void> {
    switch (mode) {
      case 'idle':
        await sleep(randInt(0, 30));
        proxy.cutAll(cutOptions());
        return;
      case 'during-calls': {
        const calls = callsDuringCut(randInt(5, 30));
        await sleep(randInt(0, 8));
        proxy.cutAll(cutOptions());
        await Promise.all(calls);
        return;
      }
      case 'mid-frame-down': {
        // Engine → worker bytes: the cut lands inside an invokefunction frame (or an invocationresult).
        const armed = proxy.cutAfter(randInt(1, 2500), 'down', cutOptions());
        const calls = callsDuringCut(30);
        await firedOrCut(armed, 1000);
        await Promise.all(calls);
        return;
      }
      case 'mid-replay': {
        // The reconnect replays 200 functions + 50 triggers per worker: cut inside that burst, mid-frame.
        proxy.cutAll(cutOptions());
        await firedOrCut(proxy.cutAfter(randInt(1, 40_000), 'up', cutOptions()), 1500);
        return;
      }
      case 'double':
        proxy.cutAll(cutOptions());
        await sleep(randInt(0, 60));
        proxy.cutAll(cutOptions());
        return;
      case 'fresh-burst-flint':
      case 'fresh-burst-iii': {
        // A new worker process registers everything in a burst; two cuts land between its frames and
        // one in the middle of a frame.
        const target = mode === 'fresh-burst-flint' ? 'flint' : 'iii';
        if (target === 'flint') {
          await flint?.shutdown();
          flintTriggerIds = new Map();
          flint = startFlint();
        } else {
          await iii?.shutdown();
          iiiTriggerIds = undefined;
          iii = startIii();
        }
        const total = FUNCTIONS_PER_WORKER + TRIGGERS_PER_WORKER;
        const cutAt = new Set<number>();
        while (cutAt.size < 2) cutAt.add(randInt(0, total - 1));
        const armed = proxy.cutAfter(randInt(200, 25_000), 'up', cutOptions());
        await burst(target, cutAt);
        await firedOrCut(armed, 1000);
        return;
      }
    }
  }

  it(`keeps every function and trigger exactly once across ${TOTAL_CUTS} random cuts`, async () => {
    const started = Date.now();
    // Round 0: both burst workers register 200 functions and 50 triggers at once, cut mid-burst.
    flint = startFlint();
    iii = startIii();
    const total = FUNCTIONS_PER_WORKER + TRIGGERS_PER_WORKER;
    const armed = proxy.cutAfter(randInt(300, 20_000), 'up', cutOptions());
    await Promise.all([burst('flint', new Set([randInt(0, total - 1)])), burst('iii', new Set([randInt(0, total - 1)]))]);
    await firedOrCut(armed, 1000);
    await settleAndCheck(0, 'initial burst');

    const modes = Object.keys(COST) as Mode[];
    const history: string[] = [];
    let round = 1;
    while (proxy.cuts < TOTAL_CUTS) {
      const remaining = TOTAL_CUTS - proxy.cuts;
      const affordable = modes.filter((m) => COST[m] <= remaining && (!m.startsWith('fresh-burst') || rng() < 0.35));
      const mode = pick(affordable.length > 0 ? affordable : (['idle'] as Mode[]));
      const before = proxy.cuts;
      await runRound(mode);
      expect(proxy.cuts - before, `round ${round} (${mode}) cut count`).toBe(COST[mode]);
      history.push(mode);
      await settleAndCheck(round, mode);
      round++;
    }
    expect(proxy.cuts).toBe(TOTAL_CUTS);
    expect(doubleApplies, 'the trigger provider was asked to apply an already applied trigger').toBe(0);
    console.log(
      `[reconnect.test] seed=${SEED}: ${proxy.cuts} cuts in ${round} rounds, ${proxy.accepted} proxied connections, up to ${maxConnections} engine connections at once, ${Date.now() - started} ms`,
    );
  }, 60_000);
});

describe('fast reconnect: ownership per connection (raw WebSocket clients)', () => {
  let engine: Engine;
  const clients: RawClient[] = [];
  const connect = async (options: Parameters<typeof RawClient.connect>[2] = {}) => {
    const c = await RawClient.connect(engine.bridgeUrl, '/', options);
    clients.push(c);
    await c.registered();
    return c;
  };
  /** A sync call round-trip proves every frame the client sent before it has been processed. */
  const barrier = (c: RawClient) => c.invoke(EngineFunctions.LIST_FUNCTIONS, {});

  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    try {
      await waitFor(() => engine.stats().workers === 0, 5000, 'all raw connections to be gone');
      expect(engine.stats().pendingInvocations).toBe(0);
      expect(engine.stats().channels).toBe(0);
    } finally {
      await engine.stop();
    }
  });

  for (const how of ['close', 'terminate'] as const) {
    it(`old connection registers f, new connection registers f, old ${how}s after: f survives`, async () => {
      engine = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' } } });
      // The old connection's peer is gone (it answers no ping), but the engine has not noticed yet.
      const old = await connect({ autoPong: false });
      old.registerFunction('own::f', () => 'old');
      old.send({ type: 'registertrigger', id: 'own-trigger', trigger_type: PARKED_TYPE, function_id: 'own::f', config: { from: 'old' } });
      await barrier(old);
      const fresh = await connect();
      fresh.registerFunction('own::f', () => 'new');
      fresh.send({ type: 'registertrigger', id: 'own-trigger', trigger_type: PARKED_TYPE, function_id: 'own::f', config: { from: 'new' } });
      await barrier(fresh);
      // The trigger id is the old connection's until it turns out dead: the claim waits for that.
      expect(fresh.ofType('triggerregistrationresult')).toEqual([]);

      if (how === 'close') await old.close();
      else old.terminate();
      await waitFor(() => engine.stats().workers === 1, 5000, 'the old connection to be cleaned up');
      expect((await fresh.next((f) => f.type === 'triggerregistrationresult' && f.id === 'own-trigger')).error).toBeUndefined();

      const functions = ((await barrier(fresh)).result as { functions: FunctionInfo[] }).functions;
      expect(functions.filter((f) => f.function_id === 'own::f')).toHaveLength(1);
      const triggers = ((await fresh.invoke(EngineFunctions.LIST_TRIGGERS, {})).result as { triggers: TriggerInfo[] }).triggers;
      expect(triggers.filter((t) => t.id === 'own-trigger')).toEqual([expect.objectContaining({ function_id: 'own::f', config: { from: 'new' } })]);
      const caller = await connect();
      for (let i = 0; i < 5; i++) {
        const answer = await caller.invoke('own::f', { i });
        expect(answer.error).toBeUndefined();
        expect(answer.result).toBe('new');
      }
    });
  }

  it("a new connection presenting the old one's reattach token succeeds it at once: the old one is closed, the new one keeps f and the trigger", async () => {
    engine = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' } } });
    const old = await connect({ autoPong: false });
    old.registerFunction('own::f', () => 'old');
    old.send({ type: 'registertrigger', id: 'own-trigger', trigger_type: PARKED_TYPE, function_id: 'own::f', config: { from: 'old' } });
    await barrier(old);
    const token = old.frames.find((f) => f.type === 'workerregistered')?.reattach_token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const fresh = await connect({ headers: { [REATTACH_HEADER]: token } });
    await old.whenClosed();
    fresh.registerFunction('own::f', () => 'new');
    fresh.send({ type: 'registertrigger', id: 'own-trigger', trigger_type: PARKED_TYPE, function_id: 'own::f', config: { from: 'new' } });
    expect((await fresh.next((f) => f.type === 'triggerregistrationresult' && f.id === 'own-trigger')).error).toBeUndefined();
    await waitFor(() => engine.stats().workers === 1, 5000, 'the old connection to be cleaned up');
    const triggers = ((await fresh.invoke(EngineFunctions.LIST_TRIGGERS, {})).result as { triggers: TriggerInfo[] }).triggers;
    expect(triggers.filter((t) => t.id === 'own-trigger')).toEqual([expect.objectContaining({ config: { from: 'new' } })]);
    // The token was for one succession: presenting it again closes nobody.
    const third = await connect({ headers: { [REATTACH_HEADER]: token } });
    await barrier(third);
    expect(fresh.open).toBe(true);
  });

  it('a trigger re-registered while the provider has not answered an earlier forward stays applied at the provider', async () => {
    // A worker provides a trigger type and answers forwarded registrations slowly (e.g. it sets up a
    // subscription first). Its triggers' owner reconnects faster than that: old connection registers T,
    // the old connection drops, the new connection registers T again. The provider must end up with T
    // applied, since the engine lists T as active.
    engine = await startEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' } } });
    const providerConn = await connect();
    providerConn.send({ type: 'registertriggertype', id: 'slow::type', description: 'answers late' });
    await barrier(providerConn);
    // Everything the provider is told about T, in arrival order.
    const toldProvider: string[] = [];
    providerConn.onFrame = (f) => {
      if ((f.type === 'registertrigger' || f.type === 'unregistertrigger') && f.id === 'slow-trigger') toldProvider.push(f.type as string);
    };

    const old = await connect();
    old.send({ type: 'registertrigger', id: 'slow-trigger', trigger_type: 'slow::type', function_id: 'own::f', config: { v: 1 } });
    const first = await providerConn.next((f) => f.type === 'registertrigger' && f.id === 'slow-trigger');
    old.terminate();
    await waitFor(() => engine.stats().workers === 1, 5000, 'the old connection to be cleaned up');

    const fresh = await connect();
    fresh.send({ type: 'registertrigger', id: 'slow-trigger', trigger_type: 'slow::type', function_id: 'own::f', config: { v: 1 } });
    const second = await providerConn.next((f) => f.type === 'registertrigger' && f.id === 'slow-trigger');
    // The provider now answers both forwards, in order.
    for (const f of [first, second]) {
      providerConn.send({ type: 'triggerregistrationresult', id: f.id, trigger_type: f.trigger_type, function_id: f.function_id });
    }
    const result = await fresh.next((f) => f.type === 'triggerregistrationresult' && f.id === 'slow-trigger');
    expect(result.error).toBeUndefined();
    await barrier(providerConn);
    await barrier(fresh);

    const listed = ((await fresh.invoke(EngineFunctions.LIST_TRIGGERS, {})).result as { triggers: TriggerInfo[] }).triggers;
    expect(listed.filter((t) => t.id === 'slow-trigger')).toEqual([expect.objectContaining({ status: 'active' })]);
    // The last word the provider heard on T must be "register".
    expect(toldProvider.at(-1), `provider received: ${toldProvider.join(' → ')} while the engine lists the trigger as active`).toBe('registertrigger');
    expect(toldProvider.filter((t) => t === 'registertrigger')).toHaveLength(2);
  });
});
